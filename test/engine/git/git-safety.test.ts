import { strict as assert } from 'node:assert';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { gitEnv, runGit } from '../../../src/engine/git';
import { configEnv, filterOverrides, filterOverridesFor, mayRunFilters, parseFilterEntries, subcommandIndex, withoutDiffPrograms } from '../../../src/engine/git/git-safety';
import { cleanupTemp, git, makeRepo, tempDir } from './helpers';

/** Issue 22, item 1: the options every git call of Caesar's gets (src/engine/git/git-safety.ts), on real repositories. */
describe('engine/git: git-safety (nothing the repository planted runs)', function () {
  this.timeout(30_000);
  afterEach(cleanupTemp);

  /** A planted filter whose clean and smudge record that they ran. */
  function plantFilter(repo: string, marker: string, name = 'planted'): void {
    git(repo, 'config', `filter.${name}.clean`, `echo clean >> '${marker}'; cat`);
    git(repo, 'config', `filter.${name}.smudge`, `echo smudge >> '${marker}'; cat`);
    git(repo, 'config', `filter.${name}.required`, 'true');
  }

  it('finds the subcommand after global options, and adds --no-ext-diff --no-textconv only to porcelain diffs', () => {
    assert.equal(subcommandIndex(['--git-dir=/x', '-c', 'a=b', '-C', 'dir', '--no-pager', 'diff', '-c']), 6);
    assert.deepEqual(withoutDiffPrograms(['-c', 'x=y', 'diff', 'HEAD']), ['-c', 'x=y', 'diff', '--no-ext-diff', '--no-textconv', 'HEAD']);
    assert.deepEqual(withoutDiffPrograms(['log', '-p']), ['log', '--no-ext-diff', '--no-textconv', '-p']);
    assert.deepEqual(withoutDiffPrograms(['diff-index', 'HEAD']), ['diff-index', 'HEAD']);
    assert.equal(mayRunFilters(['rev-parse', 'HEAD']), false);
    assert.equal(mayRunFilters(['cat-file', 'blob', 'x']), false);
    assert.equal(mayRunFilters(['cat-file', '--filters', 'x']), true);
    assert.equal(mayRunFilters(['worktree', 'list']), false);
    assert.equal(mayRunFilters(['worktree', 'add', 'x']), true);
    assert.equal(mayRunFilters(['write-tree']), true, 'measured running a clean filter');
    assert.equal(mayRunFilters(['ls-files', '--others']), false);
    assert.equal(mayRunFilters(['ls-files', '-m']), true);
  });

  it('overrides only what the repository defined: the user\'s value back, or empty and not required', () => {
    const output = [
      'global', 'filter.lfs.clean\ngit-lfs clean -- %f',
      'global', 'filter.lfs.required\ntrue',
      'local', 'filter.lfs.clean\nevil',
      'local', 'filter.my.name.with.dots.smudge\nevil2',
      'worktree', 'filter.wt.process\nevil3',
      'global', 'filter.wt.smudge\nuser-smudge',
      'system', 'filter.untouched.clean\nsys',
      '',
    ].join('\0');
    const entries = parseFilterEntries(output);
    assert.equal(entries.length, 7);
    assert.deepEqual(filterOverrides(entries), [
      ['filter.lfs.clean', 'git-lfs clean -- %f'], ['filter.lfs.required', 'true'],
      ['filter.my.name.with.dots.smudge', ''], ['filter.my.name.with.dots.required', 'false'],
      // git ignores clean/smudge once `process` is set, even to "": the user's smudge cannot be kept, so not required.
      ['filter.wt.process', ''], ['filter.wt.required', 'false'],
    ]);
    const env = configEnv([['filter.a=b.clean', ''], ['filter.a=b.required', 'false']], { GIT_CONFIG_COUNT: '1', GIT_CONFIG_KEY_0: 'user.key', GIT_CONFIG_VALUE_0: 'v' });
    assert.deepEqual(
      [env.GIT_CONFIG_COUNT, env.GIT_CONFIG_KEY_0, env.GIT_CONFIG_KEY_1, env.GIT_CONFIG_VALUE_1, env.GIT_CONFIG_KEY_2, env.GIT_CONFIG_VALUE_2],
      ['3', 'user.key', 'filter.a=b.clean', '', 'filter.a=b.required', 'false'],
      "the environment's own pairs are kept, ours come after",
    );
  });

  it('a filter planted in .git/config, in config.worktree, in a file include.path names, or named with a `=`: none runs in runGit', async () => {
    const repo = makeRepo({ 'a.txt': 'one\n', '.gitattributes': '*.txt filter=planted\n*.md filter=viaworktree\n*.cfg filter=included\n*.eq filter=a=b\n' });
    const marker = path.join(tempDir(), 'ran.log');
    plantFilter(repo, marker);
    const included = path.join(tempDir(), 'planted.gitconfig');
    writeFileSync(included, `[filter "included"]\n\tclean = echo included >> '${marker}'; cat\n\trequired = true\n`);
    git(repo, 'config', 'include.path', included);
    git(repo, 'config', 'extensions.worktreeConfig', 'true');
    git(repo, 'config', '--worktree', 'filter.viaworktree.clean', `echo worktree >> '${marker}'; cat`);
    // A name holding `=`, which a `-c key=value` override would split at the wrong place.
    plantFilter(repo, marker, 'a=b');
    writeFileSync(path.join(repo, 'a.txt'), 'one\ntwo\n');
    writeFileSync(path.join(repo, 'b.md'), 'md\n');
    writeFileSync(path.join(repo, 'c.cfg'), 'cfg\n');
    writeFileSync(path.join(repo, 'd.eq'), 'eq\n');
    const overrides = await filterOverridesFor(['add', '-A'], repo, gitEnv());
    for (const name of ['planted', 'viaworktree', 'included', 'a=b']) assert.ok(overrides.some(([k, v]) => k === `filter.${name}.required` && v === 'false'), name);
    await runGit(['add', '-A'], { cwd: repo });
    await runGit(['diff', '--cached', '--stat'], { cwd: repo });
    assert.equal(existsSync(marker), false, existsSync(marker) ? readFileSync(marker, 'utf8') : '');
    git(repo, 'reset', '-q');
    git(repo, 'diff', '--stat');
    assert.match(readFileSync(marker, 'utf8'), /clean/, 'control: the user\'s own git runs the planted filter');
  });

  it('a hook and an fsmonitor planted in the repository do not run; a GIT_CONFIG_GLOBAL filter does', async () => {
    const repo = makeRepo({ 'a.up': 'quiet\n' });
    const marker = path.join(tempDir(), 'ran.log');
    const home = tempDir();
    writeFileSync(path.join(home, '.gitconfig'), `[filter "up"]\n\tsmudge = tr a-z A-Z\n\tclean = cat\n\trequired = true\n`);
    writeFileSync(path.join(repo, '.gitattributes'), '*.up filter=up\n');
    git(repo, 'add', '.gitattributes');
    git(repo, 'commit', '-q', '-m', 'attributes');
    // Planted after the test's own commits, which would run them.
    const hooks = path.join(repo, '.git', 'hooks');
    mkdirSync(hooks, { recursive: true });
    writeFileSync(path.join(hooks, 'post-checkout'), `#!/bin/sh\necho post-checkout >> '${marker}'\n`, { mode: 0o755 });
    writeFileSync(path.join(hooks, 'reference-transaction'), `#!/bin/sh\necho reference-transaction >> '${marker}'\n`, { mode: 0o755 });
    git(repo, 'config', 'core.fsmonitor', `echo fsmonitor >> '${marker}'; false`);
    git(repo, 'config', 'filter.up.smudge', `echo planted-smudge >> '${marker}'; cat`);
    const worktree = path.join(tempDir(), 'wt');
    await runGit(['worktree', 'add', '-q', '-b', 'task', worktree, 'HEAD'], { cwd: repo, env: { GIT_CONFIG_GLOBAL: path.join(home, '.gitconfig') } });
    await runGit(['status', '--porcelain'], { cwd: worktree });
    assert.equal(existsSync(marker), false, existsSync(marker) ? readFileSync(marker, 'utf8') : '');
    assert.equal(readFileSync(path.join(worktree, 'a.up'), 'utf8'), 'QUIET\n', "the user's global smudge ran");
  });

  /** A blobless clone (`--filter=blob:none`, over file://) of a repository with two files: no blob is local yet. */
  function partialClone(): { clone: string; source: string } {
    const source = makeRepo({ 'f.txt': 'one\n', 'g.txt': 'two\n' });
    git(source, 'config', 'uploadpack.allowFilter', 'true');
    const clone = path.join(tempDir(), 'clone');
    git(tempDir(), 'clone', '-q', '--filter=blob:none', '--no-checkout', `file://${source}`, clone);
    return { clone, source };
  }

  it('a partial clone: a planted remote.<name>.uploadpack never runs (no lazy fetch); the user\'s own partial clone still fetches', async () => {
    const marker = path.join(tempDir(), 'ran.log');
    const planted = partialClone().clone;
    const uploadPack = path.join(tempDir(), 'upload-pack.sh');
    writeFileSync(uploadPack, `#!/bin/sh\necho upload-pack >> '${marker}'\nexec git-upload-pack "$@"\n`, { mode: 0o755 });
    git(planted, 'config', 'remote.origin.uploadpack', uploadPack);
    git(planted, 'cat-file', 'blob', 'HEAD:g.txt');
    assert.ok(existsSync(marker), "control: the user's own git fetches a missing blob through the planted program");
    rmSync(marker);
    await assert.rejects(runGit(['worktree', 'add', '-q', '--detach', path.join(tempDir(), 'wt'), 'HEAD'], { cwd: planted }), /promisor remote/);
    await assert.rejects(runGit(['cat-file', 'blob', 'HEAD:f.txt'], { cwd: planted }), /promisor remote/);
    assert.equal(existsSync(marker), false, 'the planted upload-pack ran');

    const genuine = partialClone().clone;
    const worktree = path.join(tempDir(), 'genuine-wt');
    await runGit(['worktree', 'add', '-q', '--detach', worktree, 'HEAD'], { cwd: genuine });
    assert.equal(readFileSync(path.join(worktree, 'f.txt'), 'utf8'), 'one\n', 'the lazy fetch of a genuine partial clone still runs');
  });
});

import { strict as assert } from 'node:assert';
import { existsSync, lstatSync, mkdirSync, readFileSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { gitToplevel, repoState } from '../../../src/engine/git/git';
import { createWorktree, isPlainBranchName, listWorktrees, removeWorktree, worktreeIgnoreFinding } from '../../../src/engine/git/worktree';
import { isSafeId } from '../../../src/protocol';
import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { cleanupTemp, commitAll, git, makeRepo, tempDir, writeFiles } from './helpers';

describe('engine/git/git: repository state and worktrees', () => {
  afterEach(cleanupTemp);

  it('repoState names a directory outside git as not-a-repo, with a remedy', async () => {
    const dir = tempDir();
    const state = await repoState(dir);
    assert.ok(state.kind === 'not-a-repo', `got ${state.kind}`);
    assert.match(state.remedy, /git init/);
    assert.equal(await gitToplevel(dir), undefined);
  });

  it('repoState names a repository without commits as such (never "invalid HEAD")', async () => {
    const dir = tempDir();
    git(dir, 'init', '-q');
    const state = await repoState(dir);
    assert.ok(state.kind === 'no-commits', `got ${state.kind}`);
    assert.match(state.message, /no commits/);
    assert.doesNotMatch(state.message, /invalid/i);
    assert.equal(state.remedy.includes('git commit --allow-empty -m init'), true);
  });

  it('repoState of a subdirectory gives the toplevel and the HEAD sha', async () => {
    const repo = makeRepo({ 'sub/a.txt': 'a\n' });
    const state = await repoState(path.join(repo, 'sub'));
    assert.ok(state.kind === 'usable', `got ${state.kind}`);
    assert.equal(state.gitRoot, realpathSync(repo));
    assert.equal(state.head, git(repo, 'rev-parse', 'HEAD').trim());
    assert.equal(state.indexFile, path.join(realpathSync(repo), '.git', 'index'), 'the index from the same git call');
  });

  it("repoState of a linked worktree names the worktree's own index", async () => {
    const repo = makeRepo();
    const wt = await createWorktree({ gitRoot: repo, id: 't_idx' });
    const state = await repoState(wt.path);
    assert.ok(state.kind === 'usable', `got ${state.kind}`);
    assert.equal(state.indexFile, path.join(realpathSync(repo), '.git', 'worktrees', 't_idx', 'index'));
  });

  it('isPlainBranchName accepts only names git check-ref-format --branch accepts, and every task id caesar makes', () => {
    const names = [
      ...Array.from({ length: 20 }, () => `caesar/t_${randomUUID().replace(/-/g, '')}`),
      'caesar/a', 'caesar/A-b_c', 'caesar/HEAD', 'caesar/9', 'caesar/x-', 'caesar/a_b-c_d',
      // Not plain (some still valid for git): asked of git, so only the agreement above matters for them.
      'caesar/a.b', 'caesar/a..b', 'caesar/x.lock', 'caesar/x.', 'caesar/.x', 'caesar/a@{1}', 'caesar/-x', 'caesar/',
      'other/t_1', 'caesar/a/b', 'caesar/a b', 'caesar/a~1', 'caesar/a:b', 'caesar/a\\b', 'caesar/a*', 'caesar/é',
    ];
    const plain = names.filter(isPlainBranchName);
    assert.ok(plain.length >= 26, `the usual names are plain: ${plain.join(' ')}`);
    for (const name of plain) {
      const check = spawnSync('git', ['check-ref-format', '--branch', name], { encoding: 'utf8' });
      assert.equal(check.status, 0, `${name} is plain but git refuses it: ${check.stderr}`);
    }
    for (const name of ['caesar/a.b', 'caesar/a..b', 'caesar/x.lock', 'caesar/-x', 'caesar/', 'caesar/a/b', 'other/t_1']) {
      assert.equal(isPlainBranchName(name), false, name);
    }
    // A safe id that git would refuse as a branch is not plain: createWorktree asks git and names the problem.
    assert.ok(isSafeId('a..b') && isSafeId('x.lock'));
  });

  it('createWorktree asks git about a branch name that is not plain and refuses an invalid one', async () => {
    const repo = makeRepo();
    await assert.rejects(createWorktree({ gitRoot: repo, id: 'a..b' }), /Invalid branch name "caesar\/a\.\.b"/);
    await assert.rejects(createWorktree({ gitRoot: repo, id: 'x.lock' }), /Invalid branch name/);
    assert.equal(git(repo, 'worktree', 'list', '--porcelain').match(/^worktree /gm)?.length, 1, 'no worktree was added');
    const dotted = await createWorktree({ gitRoot: repo, id: 'v1.2' });
    assert.equal(dotted.branch, 'caesar/v1.2');
  });

  it('createWorktree at a given head: the worktree starts at that commit, which is base_ref, and knows its git dir', async () => {
    const repo = makeRepo();
    const first = git(repo, 'rev-parse', 'HEAD').trim();
    writeFiles(repo, { 'later.txt': 'x\n' });
    commitAll(repo);
    const wt = await createWorktree({ gitRoot: repo, id: 't_head', head: first, root: repo });
    assert.equal(wt.base_ref, first);
    assert.equal(git(wt.path, 'rev-parse', 'HEAD').trim(), first, 'checked out at the given commit, not at the moved HEAD');
    assert.equal(existsSync(path.join(wt.path, 'later.txt')), false);
    assert.deepEqual(wt.repo, {
      workTree: realpathSync(wt.path),
      gitDir: realpathSync(git(wt.path, 'rev-parse', '--absolute-git-dir').trim()),
    });
    assert.equal(readFileSync(path.join(wt.repo!.gitDir, 'caesar-root'), 'utf8'), `${path.resolve(repo)}\n`);
    // A start point (Continue with Feedback) wins over head.
    const continued = await createWorktree({ gitRoot: repo, id: 't_cont', head: first, startPoint: 'HEAD', baseRef: 'HEAD^1' });
    assert.equal(git(continued.path, 'rev-parse', 'HEAD').trim(), git(repo, 'rev-parse', 'HEAD').trim());
    assert.equal(continued.base_ref, first);
  });

  it('createWorktree makes caesar/<id> at <gitRoot>/.caesar/wt/<id> with base_ref frozen to HEAD', async () => {
    const repo = makeRepo();
    const head = git(repo, 'rev-parse', 'HEAD').trim();
    const wt = await createWorktree({ gitRoot: repo, id: 't_1' });
    assert.equal(wt.path, path.join(repo, '.caesar', 'wt', 't_1'));
    assert.equal(wt.branch, 'caesar/t_1');
    assert.equal(wt.base_ref, head);
    assert.equal(git(wt.path, 'rev-parse', '--abbrev-ref', 'HEAD').trim(), 'caesar/t_1');
    assert.equal(readFileSync(path.join(wt.path, 'README.md'), 'utf8'), 'hello\n');
    // The main checkout moves on; the worktree's base stays.
    writeFiles(repo, { 'later.txt': 'x' });
    commitAll(repo);
    const listed = await listWorktrees(repo);
    const mine = listed.find((w) => realpathSync(w.path) === realpathSync(wt.path));
    assert.equal(mine?.branch, 'caesar/t_1');
    assert.equal(mine?.head, head);
  });

  it('createWorktree in a repository without commits fails naming the cause', async () => {
    const dir = tempDir();
    git(dir, 'init', '-q');
    await assert.rejects(createWorktree({ gitRoot: dir, id: 't_2' }), /no commits yet.*git commit --allow-empty -m init/s);
  });

  it('createWorktree refuses an unsafe id and an existing target', async () => {
    const repo = makeRepo();
    await assert.rejects(createWorktree({ gitRoot: repo, id: '../evil' }), /Invalid task id/);
    await createWorktree({ gitRoot: repo, id: 'same' });
    await assert.rejects(createWorktree({ gitRoot: repo, id: 'same' }), /already exists/);
  });

  it('removeWorktree deletes the worktree and its branch but never follows a symlink into the workspace', async () => {
    const repo = makeRepo();
    writeFiles(repo, { 'shared/keep.txt': 'precious\n' });
    const wt = await createWorktree({ gitRoot: repo, id: 't_3' });
    symlinkSync(path.join(repo, 'shared'), path.join(wt.path, 'shared'));
    writeFileSync(path.join(wt.path, 'dirty.txt'), 'uncommitted');
    await removeWorktree({ gitRoot: repo, path: wt.path, branch: wt.branch });
    assert.equal(existsSync(wt.path), false);
    assert.equal(readFileSync(path.join(repo, 'shared', 'keep.txt'), 'utf8'), 'precious\n');
    assert.equal(git(repo, 'branch', '--list', 'caesar/t_3').trim(), '');
  });

  it('removeWorktree also removes a half-created folder git does not know, and refuses paths outside .caesar/wt', async () => {
    const repo = makeRepo();
    writeFiles(repo, { '.caesar/wt/half/file.txt': 'x' });
    await removeWorktree({ gitRoot: repo, path: path.join(repo, '.caesar', 'wt', 'half') });
    assert.equal(existsSync(path.join(repo, '.caesar', 'wt', 'half')), false);
    await assert.rejects(removeWorktree({ gitRoot: repo, path: path.join(repo, 'elsewhere') }), /Refusing/);
    assert.ok(lstatSync(repo).isDirectory());
  });

  it('worktreeIgnoreFinding is silent when .caesar/ is ignored and a low finding otherwise', async () => {
    const ignored = makeRepo();
    assert.equal(await worktreeIgnoreFinding(ignored, 't_x'), undefined);
    const notIgnored = makeRepo({ 'a.txt': 'a' }, { ignoreCaesar: false });
    const finding = await worktreeIgnoreFinding(notIgnored, 't_x');
    assert.equal(finding?.severity, 'low');
    assert.equal(finding?.title, 'Worktrees not ignored by git');
    assert.match(finding?.detail ?? '', /\.gitignore/);
  });

  it("worktreeIgnoreFinding trusts caesar's own .caesar/.gitignore without git, and asks git about any other", async () => {
    const caesarIgnore = '# Written by Caesar\n.gitignore\ntasks/\nwt/\nstate/\n';
    const withoutGit = async (gitRoot: string) => {
      const saved = process.env.PATH;
      process.env.PATH = tempDir('caesar-no-git-'); // git cannot be found: an answer proves no process was started
      try {
        return await worktreeIgnoreFinding(gitRoot, 't_x');
      } finally {
        process.env.PATH = saved;
      }
    };
    // The user's .gitignore tries to re-include the worktrees: the deeper file wins, as git itself says.
    const repo = makeRepo({ '.gitignore': '!.caesar/\n!.caesar/wt/\n', '.caesar/.gitignore': caesarIgnore }, { ignoreCaesar: false });
    assert.equal(git(repo, 'check-ignore', '--no-index', '.caesar/wt/t_x').trim(), '.caesar/wt/t_x');
    assert.equal(await withoutGit(repo), undefined);
    // A negation in it, or a symlinked file (git does not read it): git decides.
    const negated = makeRepo({ 'a.txt': 'a\n', '.caesar/.gitignore': `${caesarIgnore}!wt/\n` }, { ignoreCaesar: false });
    await assert.rejects(withoutGit(negated), /cannot run git|ENOENT/);
    assert.equal((await worktreeIgnoreFinding(negated, 't_x'))?.title, 'Worktrees not ignored by git');
    const linked = makeRepo({ 'elsewhere': caesarIgnore }, { ignoreCaesar: false });
    mkdirSync(path.join(linked, '.caesar'), { recursive: true });
    symlinkSync(path.join(linked, 'elsewhere'), path.join(linked, '.caesar', '.gitignore'));
    await assert.rejects(withoutGit(linked), /cannot run git|ENOENT/);
    assert.equal((await worktreeIgnoreFinding(linked, 't_x'))?.title, 'Worktrees not ignored by git');
  });
});

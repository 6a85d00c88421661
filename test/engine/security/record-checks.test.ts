import { strict as assert } from 'node:assert';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { runGit, runGitNeutral } from '../../../src/engine/git/git';
import {
  RecordRefused,
  checkObjectId,
  checkRecordPath,
  checkWorktree,
  readBaseVersion,
  rootRepository,
  taskVersionPath,
  type RootRepository,
} from '../../../src/engine/git/record-checks';
import { createWorktree } from '../../../src/engine/git/worktree';
import { git, makeRepo } from '../runtime/helpers';

// The checks behind every reader that acts on a task record's fields (src/engine/git/record-checks.ts), on real repositories.

describe('security: task record checks (issue 13.1)', function () {
  this.timeout(30_000);

  let repo: string;
  let base: string;
  let worktree: string;
  let ours: RootRepository;

  before(async () => {
    repo = makeRepo({ 'README.md': 'base\n', 'src/a.txt': 'a\n' });
    base = git(repo, 'rev-parse', 'HEAD');
    worktree = (await createWorktree({ gitRoot: repo, id: 'real-task', root: repo })).path;
    ours = (await rootRepository(repo))!;
  });

  const refused = (what: RegExp) => (err: unknown) => err instanceof RecordRefused && what.test(err.message);

  it('base_ref: a full hex object id only', () => {
    assert.equal(checkObjectId(base), base);
    assert.equal(checkObjectId('a'.repeat(64)), 'a'.repeat(64));
    for (const bad of ['--output=/tmp/x', 'HEAD', base.slice(0, 12), base.toUpperCase(), `${base}^{tree}`, `${base}:x`, ` ${base}`, '', undefined, 42]) {
      assert.throws(() => checkObjectId(bad), RecordRefused, String(bad));
    }
  });

  it('paths: relative, normalized, no ".."', () => {
    for (const good of ['README.md', 'src/a.txt', 'a b/c:d.ts', '.github/x.yml', '..foo/bar']) assert.equal(checkRecordPath(good), good);
    for (const bad of ['../x', 'a/../b', 'a/..', '/etc/passwd', 'a//b', './a', 'a/./b', 'a/', 'a\\..\\b', 'C:x', '', 'a\0b', undefined]) {
      assert.throws(() => checkRecordPath(bad), RecordRefused, JSON.stringify(bad));
    }
  });

  it("worktree: this repository's own, under .caesar/wt/, registered both ways", async () => {
    assert.equal(await checkWorktree(ours, worktree), worktree);
    assert.equal(await taskVersionPath(repo, { worktree }, 'src/a.txt'), path.join(worktree, 'src', 'a.txt'));

    // Outside .caesar/wt, or through "..".
    await assert.rejects(checkWorktree(ours, repo), refused(/task id|not under/));
    await assert.rejects(checkWorktree(ours, `${repo}/.caesar/wt/real-task/../real-task`), refused(/normalized/));
    await assert.rejects(checkWorktree(ours, 'relative/wt'), refused(/normalized absolute/));

    // A bare repository committed where a worktree would be: no .git link at all.
    const bare = path.join(repo, '.caesar', 'wt', 'bare-task');
    execFileSync('git', ['init', '-q', '--bare', bare]);
    await assert.rejects(checkWorktree(ours, bare), refused(/not a worktree of this repository/));

    // A committed folder whose .git file borrows the genuine worktree's registration: the registration points back
    // at the genuine worktree, not at it.
    const borrowed = path.join(repo, '.caesar', 'wt', 'borrowed-task');
    mkdirSync(borrowed);
    writeFileSync(path.join(borrowed, '.git'), `gitdir: ${path.join(ours.commonDir, 'worktrees', 'real-task')}\n`);
    await assert.rejects(checkWorktree(ours, borrowed), refused(/does not point back/));

    // A .git file pointing into another repository's worktrees.
    const other = makeRepo();
    const foreign = (await createWorktree({ gitRoot: other, id: 'foreign-task', root: other })).path;
    const planted = path.join(repo, '.caesar', 'wt', 'planted-task');
    mkdirSync(planted);
    writeFileSync(path.join(planted, '.git'), `gitdir: ${path.join(realpathSync(path.join(other, '.git')), 'worktrees', 'foreign-task')}\n`);
    await assert.rejects(checkWorktree(ours, planted), refused(/points outside/));
    await assert.rejects(checkWorktree(ours, foreign), refused(/not under/));

    // A symlink at .caesar/wt/<id> to the genuine worktree, and a .git that is a symlink.
    const linked = path.join(repo, '.caesar', 'wt', 'linked-task');
    symlinkSync(worktree, linked);
    await assert.rejects(checkWorktree(ours, linked), refused(/symbolic link/));
    const dotGitLink = path.join(repo, '.caesar', 'wt', 'dotgit-task');
    mkdirSync(dotGitLink);
    symlinkSync(path.join(worktree, '.git'), path.join(dotGitLink, '.git'));
    await assert.rejects(checkWorktree(ours, dotGitLink), refused(/not a worktree/));
  });

  it('reads a base version from this repository with cat-file: refusing foreign commits and hostile fields', async () => {
    assert.equal((await readBaseVersion(repo, { base_ref: base }, 'src/a.txt'))!.toString(), 'a\n');
    assert.equal(await readBaseVersion(repo, { base_ref: base }, 'created.txt'), undefined);
    const other = makeRepo({ 'other.txt': 'x\n' });
    await assert.rejects(readBaseVersion(repo, { base_ref: git(other, 'rev-parse', 'HEAD') }, 'other.txt'), refused(/not in this repository/));
    await assert.rejects(readBaseVersion(repo, { base_ref: '--output=/tmp/x' }, 'README.md'), refused(/base_ref/));
    await assert.rejects(readBaseVersion(repo, { base_ref: base }, '../README.md'), refused(/normalized relative/));
  });

  it('runGitNeutral runs no fsmonitor hook and discovers no bare repository', async () => {
    const scratch = realpathSync(mkdtempSync(path.join(tmpdir(), 'caesar-sec-neutral-')));
    const marker = path.join(scratch, 'fsmonitor-ran');
    const hooked = makeRepo();
    git(hooked, 'config', 'core.fsmonitor', `touch '${marker}'; false`);
    spawnSync('git', ['status', '--porcelain'], { cwd: hooked, stdio: 'ignore' });
    assert.ok(existsSync(marker), 'control: plain git runs the repository-chosen fsmonitor hook');
    rmSync(marker);
    // Caesar's own runner (issue 22): every git call runs with git-safety's options.
    await runGit(['status', '--porcelain'], { cwd: hooked });
    assert.ok(!existsSync(marker), 'runGit ran the fsmonitor hook');
    await runGitNeutral(['status', '--porcelain'], { cwd: hooked });
    assert.ok(!existsSync(marker), 'the neutral runner ran the fsmonitor hook');

    const bare = path.join(scratch, 'bare');
    execFileSync('git', ['init', '-q', '--bare', bare]);
    // Control: plain git discovers the bare repository; Caesar's own runner (safe.bareRepository=explicit) does not.
    assert.equal(execFileSync('git', ['rev-parse', '--git-dir'], { cwd: bare, encoding: 'utf8' }).trim(), '.');
    const discovered = await runGit(['rev-parse', '--git-dir'], { cwd: bare, okCodes: [0, 128] });
    assert.equal(discovered.code, 128, discovered.stdout.toString());
    assert.match(discovered.stderr, /safe\.bareRepository/);
    assert.equal(await rootRepository(bare), undefined, 'a bare repository was discovered');
  });
});

import { strict as assert } from 'node:assert';
import { existsSync, lstatSync, readFileSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { gitToplevel, repoState } from '../../../src/engine/git';
import { createWorktree, listWorktrees, removeWorktree, worktreeIgnoreFinding } from '../../../src/engine/worktree';
import { cleanupTemp, commitAll, git, makeRepo, tempDir, writeFiles } from './helpers';

describe('engine/git: repository state and worktrees', () => {
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
});

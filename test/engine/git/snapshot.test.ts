import { strict as assert } from 'node:assert';
import { realpathSync, rmSync, statSync } from 'node:fs';
import * as path from 'node:path';
import { inplaceDiff, takeSnapshot } from '../../../src/engine/git/reconcile';
import { cleanupTemp, git, makeRepo, tempDir, writeFiles } from './helpers';

/** Everything that would reveal a write to the user's index. */
function indexFingerprint(repo: string) {
  return {
    staged: git(repo, 'diff', '--cached', '--name-status'),
    entries: git(repo, 'ls-files', '-s'),
    mtime: statSync(path.join(repo, '.git', 'index')).mtimeMs,
  };
}

describe('engine/git/git: in-place snapshots (temporary index)', () => {
  afterEach(cleanupTemp);

  it('sees a re-edit of an already dirty file, which a status comparison misses', async () => {
    const repo = makeRepo({ 'a.txt': 'clean\n' });
    writeFiles(repo, { 'a.txt': 'dirty before the task\n' });
    const before = await takeSnapshot(repo);
    writeFiles(repo, { 'a.txt': 'edited again by the agent\n' });
    const diff = await inplaceDiff(repo, before, []);
    assert.deepEqual(diff.files, [{ path: 'a.txt', action: 'modified', additions: 1, deletions: 1, binary: false }]);
    assert.match(diff.patch, /-dirty before the task\n\+edited again by the agent/);
  });

  it('sees a revert of a dirty file back to clean', async () => {
    const repo = makeRepo({ 'a.txt': 'committed\n' });
    writeFiles(repo, { 'a.txt': 'user edit\n' });
    const before = await takeSnapshot(repo);
    git(repo, 'checkout', '--', 'a.txt');
    const diff = await inplaceDiff(repo, before, []);
    assert.deepEqual(diff.files.map((f) => [f.path, f.action]), [['a.txt', 'modified']]);
    assert.match(diff.patch, /\+committed/);
  });

  it('lists each file of a new untracked directory, not one collapsed dir/ entry', async () => {
    const repo = makeRepo(); // .caesar/ is git-ignored here, as `caesar init` sets it up
    writeFiles(repo, { '.caesar/tasks/t/state.json': '{}' });
    const before = await takeSnapshot(repo);
    writeFiles(repo, { 'newdir/one.txt': '1\n', 'newdir/deep/two.txt': '2\n', '.caesar/tasks/t/raw.log': 'x' });
    const diff = await inplaceDiff(repo, before, []);
    assert.deepEqual(diff.files.map((f) => [f.path, f.action]).sort(), [['newdir/deep/two.txt', 'created'], ['newdir/one.txt', 'created']]);
  });

  it("never changes the user's index, staged changes and intent-to-add entries included", async () => {
    const repo = makeRepo({ 'a.txt': 'a\n', 'b.txt': 'b\n' });
    writeFiles(repo, { 'b.txt': 'staged\n', 'ita.txt': 'intent\n', 'untracked.txt': 'u\n' });
    git(repo, 'add', 'b.txt');
    git(repo, 'add', '--intent-to-add', 'ita.txt');
    const fingerprint = indexFingerprint(repo);
    const before = await takeSnapshot(repo);
    writeFiles(repo, { 'a.txt': 'agent\n', 'c.txt': 'new\n' });
    const diff = await inplaceDiff(repo, before, []);
    assert.deepEqual(diff.files.map((f) => f.path).sort(), ['a.txt', 'c.txt']);
    assert.deepEqual(indexFingerprint(repo), fingerprint);
    assert.equal(git(repo, 'status', '--porcelain'), [' M a.txt', 'M  b.txt', ' A ita.txt', '?? c.txt', '?? untracked.txt', ''].join('\n'));
  });

  it('ignores .caesar at any depth and excluded prefixes, respects .gitignore, and sees deletions', async () => {
    const repo = makeRepo({ 'gone.txt': 'x\n', '.gitignore': 'build/\n' }, { ignoreCaesar: false });
    const before = await takeSnapshot(path.join(repo));
    writeFiles(repo, {
      '.caesar/tasks/t/state.json': '{}',
      'pkg/.caesar/tasks/t/events.jsonl': '{}',
      'build/out.js': 'ignored\n',
      'cache/x': 'excluded\n',
      'cache-old/y': 'kept\n',
    });
    rmSync(path.join(repo, 'gone.txt'));
    const diff = await inplaceDiff(repo, before, ['cache/']);
    assert.deepEqual(diff.files.map((f) => [f.path, f.action]).sort(), [['cache-old/y', 'created'], ['gone.txt', 'deleted']]);
  });

  it('works from a subdirectory workspace with repository-relative paths, and refuses outside git', async () => {
    const repo = makeRepo({ 'pkg/a.txt': 'a\n' });
    const before = await takeSnapshot(path.join(repo, 'pkg'));
    writeFiles(repo, { 'pkg/a.txt': 'A\n', 'top.txt': 'outside the workspace\n' });
    const diff = await inplaceDiff(path.join(repo, 'pkg'), before, []);
    assert.deepEqual(diff.files.map((f) => f.path).sort(), ['pkg/a.txt', 'top.txt']);
    await assert.rejects(takeSnapshot(tempDir()), /not inside a git repository/);
  });

  it('compares at the snapshot\'s toplevel without asking git where it is, and still fails when that repository vanished', async () => {
    const outer = makeRepo({ 'outer.txt': 'outer\n' });
    const repo = path.join(outer, 'inner');
    git(outer, 'init', '-q', 'inner');
    writeFiles(repo, { 'a.txt': 'a\n' });
    git(repo, 'add', '-A');
    git(repo, '-c', 'user.name=T', '-c', 'user.email=t@x.invalid', 'commit', '-qm', 'init');
    const before = await takeSnapshot(repo, { gitRoot: realpathSync(repo), indexFile: path.join(realpathSync(repo), '.git', 'index') });
    assert.equal(before.indexFile, path.join(realpathSync(repo), '.git', 'index'));
    writeFiles(repo, { 'a.txt': 'edited\n' });
    assert.deepEqual((await inplaceDiff(before.gitRoot, before, [], { patch: false })).files.map((f) => f.path), ['a.txt']);
    // Without its .git, git must not climb to the enclosing repository and compare that one.
    rmSync(path.join(repo, '.git'), { recursive: true, force: true });
    await assert.rejects(inplaceDiff(before.gitRoot, before, [], { patch: false }), /not a git repository/i);
  });

  it('works in a repository without commits', async () => {
    const dir = tempDir();
    git(dir, 'init', '-q');
    const before = await takeSnapshot(dir);
    writeFiles(dir, { 'first.txt': 'hi\n' });
    const diff = await inplaceDiff(dir, before, []);
    assert.deepEqual(diff.files.map((f) => f.path), ['first.txt']);
    assert.equal(git(dir, 'status', '--porcelain'), '?? first.txt\n');
  });
});

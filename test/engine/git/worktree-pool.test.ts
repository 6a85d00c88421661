import { strict as assert } from 'node:assert';
import { existsSync, lstatSync, readdirSync, readFileSync, statSync } from 'node:fs';
import * as path from 'node:path';
import { collectGarbage } from '../../../src/engine/tasks/gc';
import { worktreeDiff } from '../../../src/engine/git/reconcile';
import { materialize } from '../../../src/engine/git/workshop';
import { createWorktree, defaultBranch, listWorktrees, removeWorktree } from '../../../src/engine/git/worktree';
import { drainPool, idleWorktrees, isPoolEntry, refillPool, takeWarmWorktree } from '../../../src/engine/git/worktree-pool';
import { cleanupTemp, commitAll, git, makeRepo, writeFiles } from './helpers';

/** Every file and symlink under `dir` (relative, '/'-separated), .git excluded: what an agent would find there. */
function filesOnDisk(dir: string, prefix = ''): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(path.join(dir, prefix), { withFileTypes: true })) {
    const rel = prefix ? `${prefix}/${entry.name}` : entry.name;
    if (rel === '.git') continue;
    if (entry.isDirectory()) out.push(...filesOnDisk(dir, rel));
    else out.push(rel);
  }
  return out.sort();
}

function take(repo: string, id: string) {
  return takeWarmWorktree({ gitRoot: repo, id, branch: defaultBranch(id) });
}

describe('engine/git/git: warm worktree pool', () => {
  afterEach(cleanupTemp);

  it('fills up to its size, hands a worktree out on the task branch at HEAD, and is refilled', async () => {
    const repo = makeRepo({ 'a.txt': 'a\n', 'src/b.ts': 'b\n' });
    assert.equal(await take(repo, 't_none'), undefined, 'an empty pool hands nothing out');
    assert.equal(await refillPool({ gitRoot: repo, size: 2, minFreeBytes: 0 }), 2);
    assert.equal((await idleWorktrees(repo)).length, 2);

    const warm = await take(repo, 't_one');
    assert.ok(warm);
    assert.equal(warm.path, path.join(repo, '.caesar', 'wt', 't_one'));
    assert.equal(warm.base_ref, git(repo, 'rev-parse', 'HEAD').trim());
    assert.equal(git(warm.path, 'symbolic-ref', '--short', 'HEAD').trim(), 'caesar/t_one');
    assert.deepEqual(filesOnDisk(warm.path), ['.gitignore', 'a.txt', 'src/b.ts']);
    assert.equal((await idleWorktrees(repo)).length, 1);
    assert.ok((await listWorktrees(repo)).some((w) => w.path === warm.path && w.branch === 'caesar/t_one'));

    assert.equal(await refillPool({ gitRoot: repo, size: 2, minFreeBytes: 0 }), 1);
    assert.equal((await idleWorktrees(repo)).length, 2);
    assert.equal(await drainPool(repo), 2);
    assert.equal((await idleWorktrees(repo)).length, 0);
  });

  it('leaves an idle worktree with an index written in a later second than its files: git trusts its stats at hand-out', async () => {
    const repo = makeRepo({ 'a.txt': 'a\n', 'src/b.ts': 'b\n', 'src/c.ts': 'c\n' });
    assert.equal(await refillPool({ gitRoot: repo, size: 1, minFreeBytes: 0 }), 1);
    const [name] = await idleWorktrees(repo);
    const idle = path.join(repo, '.caesar', 'wt', name!);
    const index = git(idle, 'rev-parse', '--path-format=absolute', '--git-path', 'index').trim();
    const second = (ms: number) => Math.floor(ms / 1000);
    const newestFile = Math.max(...git(idle, 'ls-files', '-z').split('\0').filter(Boolean).map((f) => lstatSync(path.join(idle, f)).mtimeMs));
    // A racily clean index (same second as its files) makes git re-read every file's content at each later look.
    assert.ok(second(statSync(index).mtimeMs) > second(newestFile), 'the idle worktree\'s index is racily clean');
  });

  it('leaks nothing of a previous task into the next: tracked, untracked, ignored, nested repos, git state, copy/link/setup', async () => {
    const repo = makeRepo({ '.gitignore': '.caesar/\nnode_modules/\n.env\nbuild/\n', 'keep.txt': 'keep\n', 'edit.txt': 'original\n', 'gone.txt': 'gone\n' });
    writeFiles(repo, { 'node_modules/dep/index.js': 'dep\n', '.env': 'SECRET=1\n' });
    await refillPool({ gitRoot: repo, size: 1, minFreeBytes: 0 });

    // Task A gets the warm worktree, then its workshop and its agent leave every kind of trace.
    const a = await take(repo, 't_a');
    assert.ok(a);
    const reusedInode = statSync(a.path).ino;
    await materialize({ workspace: repo, worktree: a.path, copy: ['.env'], link: ['node_modules'], setup: ['mkdir -p build && echo out > build/setup.txt'], signal: new AbortController().signal });
    assert.ok(lstatSync(path.join(a.path, 'node_modules')).isSymbolicLink());
    writeFiles(a.path, { 'edit.txt': 'changed by A\n', 'untracked-a.txt': 'a\n', 'build/ignored-a.txt': 'a\n', 'staged-a.txt': 'a\n', 'nested/inner.txt': 'x\n' });
    git(path.join(a.path, 'nested'), 'init', '-q');
    git(a.path, 'rm', '-q', 'gone.txt');
    git(a.path, 'add', 'staged-a.txt');
    git(a.path, '-c', 'user.name=A', '-c', 'user.email=a@example.invalid', 'commit', '-q', '-m', 'A commits', '--', 'staged-a.txt');
    const admin = git(a.path, 'rev-parse', '--absolute-git-dir').trim();
    writeFiles(admin, { 'MERGE_HEAD': `${a.base_ref}\n`, 'config.worktree': '[core]\n\tsparseCheckout = true\n' });

    // A is discarded: its worktree goes back to the pool (cleaned) instead of being deleted; its branch is gone.
    await removeWorktree({ gitRoot: repo, path: a.path, branch: a.branch });
    assert.equal(existsSync(a.path), false);
    assert.equal((await idleWorktrees(repo)).length, 1, 'the worktree came back to the pool');
    assert.equal(git(repo, 'branch', '--list', 'caesar/t_a').trim(), '');

    // The repository moves on; task B starts from the new HEAD in the very same directory.
    writeFiles(repo, { 'new.txt': 'new\n' });
    commitAll(repo, 'second');
    const b = await take(repo, 't_b');
    assert.ok(b);
    assert.equal(statSync(b.path).ino, reusedInode, 'B reuses A\'s directory');
    assert.equal(b.base_ref, git(repo, 'rev-parse', 'HEAD').trim());
    assert.deepEqual(filesOnDisk(b.path), ['.gitignore', 'edit.txt', 'gone.txt', 'keep.txt', 'new.txt']);
    assert.equal(readFileSync(path.join(b.path, 'edit.txt'), 'utf8'), 'original\n');
    assert.equal(git(b.path, 'status', '--porcelain', '--ignored', '-uall').trim(), '', 'nothing untracked, ignored, staged or modified');
    const bAdmin = git(b.path, 'rev-parse', '--absolute-git-dir').trim();
    assert.equal(existsSync(path.join(bAdmin, 'MERGE_HEAD')), false);
    assert.equal(existsSync(path.join(bAdmin, 'config.worktree')), false);
    const diff = await worktreeDiff(b.path, b.base_ref, []);
    assert.equal(diff.is_empty, true, `B starts with an empty diff, got ${diff.files.map((f) => f.path).join(', ')}`);
    assert.equal(readFileSync(path.join(repo, 'node_modules/dep/index.js'), 'utf8'), 'dep\n', 'the linked folder was unlinked, never followed');
  });

  it('is never used in a repository with submodules (their state lives outside the worktree)', async () => {
    const sub = makeRepo({ 'lib.txt': 'lib\n' });
    const repo = makeRepo({ 'a.txt': 'a\n' });
    git(repo, '-c', 'protocol.file.allow=always', 'submodule', 'add', '-q', sub, 'vendor/lib');
    commitAll(repo, 'submodule');
    assert.equal(await refillPool({ gitRoot: repo, size: 2, minFreeBytes: 0 }), 0);
    assert.equal(await take(repo, 't_sub'), undefined);
    // A task's worktree is then created (and removed) the usual way, never recycled into the pool.
    const wt = await createWorktree({ gitRoot: repo, id: 't_sub' });
    await removeWorktree({ gitRoot: repo, path: wt.path, branch: wt.branch });
    assert.equal((await idleWorktrees(repo)).length, 0);
  });

  it('hands one idle worktree to exactly one of two tasks asking at once', async () => {
    const repo = makeRepo({ 'a.txt': 'a\n' });
    await refillPool({ gitRoot: repo, size: 1, minFreeBytes: 0 });
    const [x, y] = await Promise.all([take(repo, 't_x'), take(repo, 't_y')]);
    assert.equal([x, y].filter(Boolean).length, 1);
  });

  it('stops growing when the disk is short, and names its own entries so they are not taken for orphans', async () => {
    const repo = makeRepo({ 'a.txt': 'a\n' });
    assert.equal(await refillPool({ gitRoot: repo, size: 3, minFreeBytes: Number.MAX_SAFE_INTEGER }), 0);
    await refillPool({ gitRoot: repo, size: 1, minFreeBytes: 0 });
    const entries = readdirSync(path.join(repo, '.caesar', 'wt'));
    assert.ok(entries.length >= 2 && entries.every(isPoolEntry), entries.join(', '));
    assert.equal(isPoolEntry('t_0123'), false);
  });

  it('caesar gc leaves idle pool worktrees alone, even with --force: they are not orphans', async () => {
    const repo = makeRepo({ 'a.txt': 'a\n' });
    assert.equal(await refillPool({ gitRoot: repo, size: 2, minFreeBytes: 0 }), 2);
    const result = await collectGarbage({ root: repo, dryRun: false, force: true });
    assert.deepEqual(result.entries, []);
    assert.equal((await idleWorktrees(repo)).length, 2);
    assert.ok(await take(repo, 't_after_gc'), 'the pool still hands a worktree out');
  });
});

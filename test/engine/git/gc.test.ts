import { strict as assert } from 'node:assert';
import { existsSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { applyTask } from '../../../src/engine/git/apply';
import { collectGarbage, type GcEntry } from '../../../src/engine/tasks/gc';
import { createWorktree } from '../../../src/engine/git/worktree';
import { taskPaths } from '../../../src/protocol';
import type { TaskState } from '../../../src/protocol';
import { cleanupTemp, commitAll, deadPid, git, makeRepo, tempDir, writeFiles, writeState } from './helpers';

async function recordedTask(repo: string, id: string, extra: Partial<TaskState> = {}, root = repo) {
  const wt = await createWorktree({ gitRoot: repo, id });
  const state = writeState(root, { id, root, workspace: root, worktree: wt.path, branch: wt.branch, base_ref: wt.base_ref, ...extra });
  return { wt, state };
}

function entryOf(entries: GcEntry[], id: string): Pick<GcEntry, 'action' | 'reason' | 'orphan'> | undefined {
  const entry = entries.find((e) => e.id === id);
  return entry && { action: entry.action, reason: entry.reason, orphan: entry.orphan };
}

const branchExists = (repo: string, branch: string) => git(repo, 'branch', '--list', branch).trim() !== '';

describe('engine/git/git: collectGarbage', () => {
  afterEach(cleanupTemp);

  it('KEEPS a worktree whose agent committed work that was never applied (reference §8.1 lost it)', async () => {
    const repo = makeRepo({ 'a.txt': 'a\n' });
    const { wt } = await recordedTask(repo, 't_committed');
    writeFiles(wt.path, { 'a.txt': 'precious agent work\n' });
    commitAll(wt.path, 'agent commit');
    assert.equal(git(wt.path, 'status', '--porcelain'), '', 'git status alone would call this clean');
    const result = await collectGarbage({ root: repo, dryRun: false, force: false });
    assert.deepEqual(entryOf(result.entries, 't_committed'), { action: 'kept', reason: 'modified', orphan: false });
    assert.ok(existsSync(wt.path));
    assert.ok(branchExists(repo, wt.branch));
  });

  it('removes a clean worktree and its branch, recording discarded.json', async () => {
    const repo = makeRepo();
    const { wt } = await recordedTask(repo, 't_clean');
    const result = await collectGarbage({ root: repo, dryRun: false, force: false });
    assert.deepEqual(entryOf(result.entries, 't_clean'), { action: 'removed', reason: 'clean', orphan: false });
    assert.equal(result.removed, 1);
    assert.equal(existsSync(wt.path), false);
    assert.equal(branchExists(repo, wt.branch), false);
    assert.ok(existsSync(path.join(taskPaths(repo, 't_clean').dir, 'discarded.json')));
  });

  it('removes an applied worktree whose diff is unchanged, keeps one modified after the apply', async () => {
    const repo = makeRepo({ 'a.txt': 'a\n' });
    const unchanged = await recordedTask(repo, 't_applied');
    writeFiles(unchanged.wt.path, { 'a.txt': 'A\n', 'n.txt': 'new\n' });
    commitAll(unchanged.wt.path);
    assert.equal((await applyTask({ root: repo, state: unchanged.state })).applied, true);
    // Issue 23: a change the user reverted since (or another writer overwrote) is no longer in the checkout: its
    // worktree is then its only copy and is kept (`not_in_checkout`), until the change is back or --force.
    const reverted = await recordedTask(repo, 't_reverted');
    writeFiles(reverted.wt.path, { 'r.txt': 'reverted later\n' });
    assert.equal((await applyTask({ root: repo, state: reverted.state })).applied, true);
    rmSync(path.join(repo, 'r.txt'));
    const later = await recordedTask(repo, 't_later');
    writeFiles(later.wt.path, { 'b.txt': 'b\n' });
    assert.equal((await applyTask({ root: repo, state: later.state })).applied, true);
    writeFiles(later.wt.path, { 'b.txt': 'b edited after the apply\n' });

    const result = await collectGarbage({ root: repo, dryRun: false, force: false });
    const applied = result.entries.find((e) => e.id === 't_applied');
    assert.deepEqual(entryOf(result.entries, 't_applied'), { action: 'removed', reason: 'applied', orphan: false });
    assert.ok(applied?.applied_at);
    assert.deepEqual(entryOf(result.entries, 't_later'), { action: 'kept', reason: 'modified', orphan: false });
    assert.deepEqual(entryOf(result.entries, 't_reverted'), { action: 'kept', reason: 'not_in_checkout', orphan: false });
    assert.ok(existsSync(reverted.wt.path));
    assert.equal(existsSync(unchanged.wt.path), false);
    assert.ok(existsSync(later.wt.path));
  });

  it('keeps modified work without --force and removes it with --force', async () => {
    const repo = makeRepo();
    const { wt } = await recordedTask(repo, 't_mod');
    writeFiles(wt.path, { 'wip.txt': 'uncommitted\n' });
    const kept = await collectGarbage({ root: repo, dryRun: false, force: false });
    assert.deepEqual(entryOf(kept.entries, 't_mod'), { action: 'kept', reason: 'modified', orphan: false });
    const forced = await collectGarbage({ root: repo, dryRun: false, force: true });
    assert.deepEqual(entryOf(forced.entries, 't_mod'), { action: 'removed', reason: 'modified', orphan: false });
    assert.equal(existsSync(wt.path), false);
  });

  it('never removes an active task, even with --force; a dead supervisor makes it collectable', async () => {
    const repo = makeRepo();
    await recordedTask(repo, 't_running', { status: 'running', supervisor_pid: process.pid });
    await recordedTask(repo, 't_pending', { status: 'pending' });
    await recordedTask(repo, 't_lost', { status: 'running', supervisor_pid: deadPid() });
    const result = await collectGarbage({ root: repo, dryRun: false, force: true });
    assert.deepEqual(entryOf(result.entries, 't_running'), { action: 'kept', reason: 'active', orphan: false });
    assert.deepEqual(entryOf(result.entries, 't_pending'), { action: 'kept', reason: 'active', orphan: false });
    assert.deepEqual(entryOf(result.entries, 't_lost'), { action: 'removed', reason: 'clean', orphan: false });
  });

  it('--dry-run writes nothing: no removal, no record, worktree index untouched', async () => {
    const repo = makeRepo({ 'a.txt': 'a\n' });
    const clean = await recordedTask(repo, 't_dry_clean');
    const dirty = await recordedTask(repo, 't_dry_dirty');
    writeFiles(dirty.wt.path, { 'new.txt': 'untracked new file\n' });
    const indexFile = path.join(repo, '.git', 'worktrees', 't_dry_dirty', 'index');
    const before = { index: git(dirty.wt.path, 'ls-files', '-s'), mtime: statSync(indexFile).mtimeMs, taskFiles: readdirSync(taskPaths(repo, 't_dry_clean').dir) };
    const result = await collectGarbage({ root: repo, dryRun: true, force: true });
    assert.deepEqual(entryOf(result.entries, 't_dry_clean'), { action: 'would_remove', reason: 'clean', orphan: false });
    assert.deepEqual(entryOf(result.entries, 't_dry_dirty'), { action: 'would_remove', reason: 'modified', orphan: false });
    assert.deepEqual([result.dry_run, result.would_remove, result.removed], [true, 2, 0]);
    assert.ok(existsSync(clean.wt.path) && existsSync(dirty.wt.path));
    assert.ok(branchExists(repo, clean.wt.branch));
    assert.deepEqual(
      { index: git(dirty.wt.path, 'ls-files', '-s'), mtime: statSync(indexFile).mtimeMs, taskFiles: readdirSync(taskPaths(repo, 't_dry_clean').dir) },
      before,
    );
  });

  it('finds orphans under <gitRoot>/.caesar/wt: clean ones go, ones with unique commits or edits stay, with their real branch', async () => {
    const repo = makeRepo({ 'a.txt': 'a\n' });
    await createWorktree({ gitRoot: repo, id: 'orphan-clean', branch: 'caesar/custom/name-1' });
    const committedOrphan = await createWorktree({ gitRoot: repo, id: 'orphan-commit' });
    writeFiles(committedOrphan.path, { 'a.txt': 'orphan work\n' });
    commitAll(committedOrphan.path);
    const dirtyOrphan = await createWorktree({ gitRoot: repo, id: 'orphan-dirty' });
    writeFiles(dirtyOrphan.path, { 'x.txt': 'x\n' });
    writeFiles(repo, { '.caesar/wt/plain-folder/file.txt': 'not a worktree\n' });

    const result = await collectGarbage({ root: repo, dryRun: false, force: false });
    assert.deepEqual(entryOf(result.entries, 'orphan-clean'), { action: 'removed', reason: 'clean', orphan: true });
    assert.equal(result.entries.find((e) => e.id === 'orphan-clean')?.branch, 'caesar/custom/name-1');
    assert.equal(branchExists(repo, 'caesar/custom/name-1'), false);
    assert.deepEqual(entryOf(result.entries, 'orphan-commit'), { action: 'kept', reason: 'modified', orphan: true });
    assert.deepEqual(entryOf(result.entries, 'orphan-dirty'), { action: 'kept', reason: 'modified', orphan: true });
    assert.deepEqual(entryOf(result.entries, 'plain-folder'), { action: 'kept', reason: 'modified', orphan: true });
    assert.ok(existsSync(committedOrphan.path));
  });

  it('an unreadable state.json is inspection_failed and its worktree is never treated as an orphan', async () => {
    const repo = makeRepo();
    const { wt } = await recordedTask(repo, 't_broken');
    writeFileSync(taskPaths(repo, 't_broken').state, '{ not json');
    const result = await collectGarbage({ root: repo, dryRun: false, force: true });
    assert.deepEqual(entryOf(result.entries, 't_broken'), { action: 'kept', reason: 'inspection_failed', orphan: false });
    assert.match(result.entries[0]?.error ?? '', /state\.json/);
    assert.ok(existsSync(wt.path));
  });

  it('works from a caesar root that is a subdirectory of the git repository', async () => {
    const repo = makeRepo({ 'pkg/a.txt': 'a\n' });
    const root = path.join(repo, 'pkg');
    const { wt } = await recordedTask(repo, 't_sub', {}, root);
    writeFiles(wt.path, { 'outside.txt': 'outside the caesar root\n' });
    const result = await collectGarbage({ root, dryRun: false, force: false });
    assert.deepEqual(entryOf(result.entries, 't_sub'), { action: 'kept', reason: 'modified', orphan: false });
  });

  it('judges a worktree of another caesar root of the same repository by that root\'s task, never as an orphan', async () => {
    const repo = makeRepo({ 'a/x.txt': 'x\n', 'b/y.txt': 'y\n' });
    const rootA = path.join(repo, 'a');
    const rootB = path.join(repo, 'b');
    const running = await createWorktree({ gitRoot: repo, id: 't_b_running', root: rootB });
    writeState(rootB, { id: 't_b_running', root: rootB, workspace: rootB, status: 'running', supervisor_pid: process.pid, worktree: running.path, branch: running.branch, base_ref: running.base_ref });
    const done = await createWorktree({ gitRoot: repo, id: 't_b_done', root: rootB });
    writeState(rootB, { id: 't_b_done', root: rootB, workspace: rootB, worktree: done.path, branch: done.branch, base_ref: done.base_ref });
    const unmarked = await createWorktree({ gitRoot: repo, id: 't_b_unmarked' });
    writeState(rootB, { id: 't_b_unmarked', root: rootB, workspace: rootB, status: 'running', supervisor_pid: process.pid, worktree: unmarked.path, branch: unmarked.branch, base_ref: unmarked.base_ref });

    const result = await collectGarbage({ root: rootA, dryRun: false, force: true });
    assert.deepEqual(entryOf(result.entries, 't_b_running'), { action: 'kept', reason: 'active', orphan: false });
    assert.deepEqual(entryOf(result.entries, 't_b_done'), { action: 'removed', reason: 'clean', orphan: false });
    assert.ok(existsSync(path.join(taskPaths(rootB, 't_b_done').dir, 'discarded.json')));
    // Without the owner marker, root A cannot know the task: it is an orphan (this is why callers pass `root`).
    assert.deepEqual(entryOf(result.entries, 't_b_unmarked'), { action: 'removed', reason: 'clean', orphan: true });
    assert.ok(existsSync(running.path));
    assert.equal(git(running.path, 'status', '--porcelain'), '', 'the owner marker is not in the working tree');
  });

  it('outside git it returns an empty result', async () => {
    const result = await collectGarbage({ root: tempDir(), dryRun: false, force: false });
    assert.deepEqual(result, { dry_run: false, force: false, removed: 0, would_remove: 0, kept: 0, entries: [] });
  });
});

import { strict as assert } from 'node:assert';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, renameSync, rmSync } from 'node:fs';
import * as path from 'node:path';
import { applyTask, discardTask, readApplied, splitPatch } from '../../../src/engine/git/apply';
import { digestPatch, worktreeDiff } from '../../../src/engine/git/reconcile';
import { createWorktree } from '../../../src/engine/git/worktree';
import { taskPaths } from '../../../src/protocol';
import { cleanupTemp, commitAll, git, makeRepo, writeFiles, writeState } from './helpers';

let counter = 0;
async function task(repo: string, root = repo, workspace = root) {
  const id = `t_apply${++counter}`;
  const wt = await createWorktree({ gitRoot: repo, id });
  const state = writeState(root, { id, root, workspace, worktree: wt.path, branch: wt.branch, base_ref: wt.base_ref });
  return { wt, state };
}

const read = (...p: string[]) => readFileSync(path.join(...p), 'utf8');

describe('engine/git/git: applyTask', () => {
  afterEach(cleanupTemp);

  it('applies created, modified, deleted, renamed, binary and non-ASCII files byte-identically, recording applied.json', async () => {
    const repo = makeRepo({ 'a.txt': 'one\ntwo\n', 'gone.txt': 'bye\n', 'old.txt': 'a file that moves\nwith two lines\n' });
    const { wt, state } = await task(repo);
    const bytes = Buffer.concat([Buffer.from([0, 0, 7, 0]), randomBytes(252)]);
    const latin1 = Buffer.from('caf\xe9 au lait\n', 'latin1'); // text, but not UTF-8: must survive as bytes
    writeFiles(wt.path, { 'latin1.txt': latin1, 'a.txt': 'one\nTWO\n', 'é new.txt': 'accent\n', 'dir with space/ü.txt': 'umlaut\n', 'img/blob.bin': bytes });
    rmSync(path.join(wt.path, 'gone.txt'));
    renameSync(path.join(wt.path, 'old.txt'), path.join(wt.path, 'moved.txt'));
    commitAll(wt.path, 'agent committed part of it');
    writeFiles(wt.path, { 'after-commit.txt': 'uncommitted\n' });

    const outcome = await applyTask({ root: repo, state });
    assert.equal(outcome.applied, true, outcome.message);
    assert.equal(read(repo, 'a.txt'), 'one\nTWO\n');
    assert.equal(read(repo, 'é new.txt'), 'accent\n');
    assert.equal(read(repo, 'dir with space', 'ü.txt'), 'umlaut\n');
    assert.equal(read(repo, 'after-commit.txt'), 'uncommitted\n');
    assert.ok(readFileSync(path.join(repo, 'img', 'blob.bin')).equals(bytes));
    assert.ok(readFileSync(path.join(repo, 'latin1.txt')).equals(latin1));
    assert.equal(existsSync(path.join(repo, 'gone.txt')), false);
    assert.equal(existsSync(path.join(repo, 'old.txt')), false);
    assert.equal(read(repo, 'moved.txt'), 'a file that moves\nwith two lines\n');
    // Nothing staged: the user's index is what it was (HEAD), the changes are in the working tree only.
    assert.equal(git(repo, 'diff', '--cached', '--name-only'), '');
    const applied = await readApplied(repo, state.id);
    const diff = await worktreeDiff(wt.path, wt.base_ref, []);
    assert.equal(applied?.patch_digest, diff.patch_digest);
    assert.deepEqual(applied?.files.slice().sort(), diff.files.map((f) => f.path).sort());
    assert.equal(outcome.patch_digest, digestPatch(diff.patch_bytes));
  });

  it('is all-or-nothing: one conflicting file means nothing is written, and that file is named', async () => {
    const repo = makeRepo({ 'a.txt': 'alpha\n', 'b.txt': 'beta\n', 'c.txt': 'gamma\n' });
    const { wt, state } = await task(repo);
    writeFiles(wt.path, { 'a.txt': 'ALPHA\n', 'b.txt': 'BETA by agent\n', 'c.txt': 'GAMMA\n', 'd.txt': 'new\n' });
    writeFiles(repo, { 'b.txt': 'beta edited by the user\n' });
    const outcome = await applyTask({ root: repo, state });
    assert.equal(outcome.applied, false);
    assert.equal(outcome.reason, 'conflicts');
    assert.deepEqual(outcome.conflicts, ['b.txt']);
    assert.match(outcome.message, /b\.txt/);
    assert.equal(read(repo, 'a.txt'), 'alpha\n');
    assert.equal(read(repo, 'b.txt'), 'beta edited by the user\n');
    assert.equal(read(repo, 'c.txt'), 'gamma\n');
    assert.equal(existsSync(path.join(repo, 'd.txt')), false);
    assert.equal(await readApplied(repo, state.id), undefined);
    assert.equal(git(repo, 'status', '--porcelain'), ' M b.txt\n');
  });

  it('names an untracked user file in the way of a created file as a conflict', async () => {
    const repo = makeRepo({ 'a.txt': 'a\n' });
    const { wt, state } = await task(repo);
    writeFiles(wt.path, { 'new.txt': 'agent\n', 'a.txt': 'A\n' });
    writeFiles(repo, { 'new.txt': 'mine\n' });
    const outcome = await applyTask({ root: repo, state });
    assert.deepEqual([outcome.applied, outcome.conflicts], [false, ['new.txt']]);
    assert.equal(read(repo, 'a.txt'), 'a\n');
  });

  it("keeps the user's uncommitted edits to other files, and their staged changes", async () => {
    const repo = makeRepo({ 'agent.txt': 'x\n', 'mine.txt': 'm\n', 'staged.txt': 's\n' });
    const { wt, state } = await task(repo);
    writeFiles(wt.path, { 'agent.txt': 'x by agent\n' });
    writeFiles(repo, { 'mine.txt': 'my unsaved work\n', 'staged.txt': 'staged by me\n', 'untracked.txt': 'u\n' });
    git(repo, 'add', 'staged.txt');
    const indexBefore = git(repo, 'ls-files', '-s');
    const outcome = await applyTask({ root: repo, state });
    assert.equal(outcome.applied, true, outcome.message);
    assert.equal(read(repo, 'agent.txt'), 'x by agent\n');
    assert.equal(read(repo, 'mine.txt'), 'my unsaved work\n');
    assert.equal(read(repo, 'staged.txt'), 'staged by me\n');
    assert.equal(read(repo, 'untracked.txt'), 'u\n');
    assert.equal(git(repo, 'ls-files', '-s'), indexBefore);
    assert.equal(git(repo, 'diff', '--cached', '--name-only'), 'staged.txt\n');
  });

  it('applies from the git toplevel when the caesar root is a subdirectory (files outside it included)', async () => {
    const repo = makeRepo({ 'top.txt': 'top\n', 'pkg/inside.txt': 'in\n' });
    const root = path.join(repo, 'pkg');
    const { wt, state } = await task(repo, root, root);
    writeFiles(wt.path, { 'top.txt': 'top changed\n', 'pkg/inside.txt': 'in changed\n', 'other/new.txt': 'outside\n' });
    const outcome = await applyTask({ root, state });
    assert.equal(outcome.applied, true, outcome.message);
    assert.equal(read(repo, 'top.txt'), 'top changed\n');
    assert.equal(read(repo, 'pkg', 'inside.txt'), 'in changed\n');
    assert.equal(read(repo, 'other', 'new.txt'), 'outside\n');
    assert.ok(existsSync(path.join(taskPaths(root, state.id).dir, 'applied.json')));
  });

  it('applies only the chosen --files subset', async () => {
    const repo = makeRepo({ 'a.txt': 'a\n', 'b.txt': 'b\n' });
    const { wt, state } = await task(repo);
    writeFiles(wt.path, { 'a.txt': 'A\n', 'b.txt': 'B\n', 'c.txt': 'C\n' });
    const outcome = await applyTask({ root: repo, state, files: ['b.txt', 'c.txt'] });
    assert.equal(outcome.applied, true, outcome.message);
    assert.deepEqual(outcome.files, ['b.txt', 'c.txt']);
    assert.equal(read(repo, 'a.txt'), 'a\n');
    assert.equal(read(repo, 'b.txt'), 'B\n');
    assert.equal(read(repo, 'c.txt'), 'C\n');
    await assert.rejects(applyTask({ root: repo, state, files: ['zzz.txt'] }), /Not in the task's diff: zzz\.txt/);
  });

  it('an empty diff is applied (empty) and records nothing; an in-place task is no_worktree', async () => {
    const repo = makeRepo();
    const { state } = await task(repo);
    const empty = await applyTask({ root: repo, state });
    assert.deepEqual([empty.applied, empty.empty], [true, true]);
    assert.equal(await readApplied(repo, state.id), undefined);
    const inplace = writeState(repo, { id: 't_inplace', isolation: 'inplace' });
    const outcome = await applyTask({ root: repo, state: inplace });
    assert.deepEqual([outcome.applied, outcome.reason], [false, 'no_worktree']);
  });

  it('splitPatch splits a binary patch into one section per file', async () => {
    const repo = makeRepo({ 'a.txt': 'a\n' });
    const { wt } = await task(repo);
    writeFiles(wt.path, { 'a.txt': 'A\n', 'z.bin': randomBytes(300), 'm.txt': 'diff --git looks like a header\n' });
    const diff = await worktreeDiff(wt.path, wt.base_ref, []);
    const sections = splitPatch(diff.patch_bytes);
    assert.equal(sections.length, 3);
    assert.ok(Buffer.concat(sections).equals(diff.patch_bytes));
  });

  it('discardTask removes the worktree and branch, records discarded.json, and leaves the workspace alone', async () => {
    const repo = makeRepo({ 'a.txt': 'a\n' });
    const { wt, state } = await task(repo);
    writeFiles(wt.path, { 'a.txt': 'agent\n' });
    const outcome = await discardTask({ root: repo, state });
    assert.equal(outcome.discarded, true);
    assert.equal(existsSync(wt.path), false);
    assert.equal(git(repo, 'branch', '--list', wt.branch).trim(), '');
    assert.equal(read(repo, 'a.txt'), 'a\n');
    assert.ok(existsSync(path.join(taskPaths(repo, state.id).dir, 'discarded.json')));
    const after = await applyTask({ root: repo, state });
    assert.equal(after.reason, 'worktree_missing');
  });

  it('refuses to apply a task whose supervisor is still running', async () => {
    const repo = makeRepo({ 'a.txt': 'a\n' });
    const { wt, state } = await task(repo);
    writeFiles(wt.path, { 'a.txt': 'half done\n' });
    const outcome = await applyTask({ root: repo, state: { ...state, status: 'running', supervisor_pid: process.pid } });
    assert.deepEqual([outcome.applied, outcome.reason], [false, 'active']);
    assert.equal(read(repo, 'a.txt'), 'a\n');
  });

  it('discardTask refuses a task whose supervisor is alive', async () => {
    const repo = makeRepo();
    const { state } = await task(repo);
    await assert.rejects(discardTask({ root: repo, state: { ...state, status: 'running', supervisor_pid: process.pid } }), /cancel it/);
  });
});

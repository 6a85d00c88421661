import { strict as assert } from 'node:assert';
import { existsSync, truncateSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { applyTask, readApplied } from '../../../src/engine/git/apply';
import { collectGarbage } from '../../../src/engine/tasks/gc';
import { inplaceDiff, takeSnapshot, worktreeDiff } from '../../../src/engine/git/reconcile';
import { createWorktree } from '../../../src/engine/git/worktree';
import { cleanupTemp, git, makeRepo, writeState } from './helpers';

const GiB = 1024 * 1024 * 1024;
const MiB = 1024 * 1024;

let counter = 0;
async function task(repo: string) {
  const id = `t_large${++counter}`;
  const wt = await createWorktree({ gitRoot: repo, id });
  const state = writeState(repo, { id, root: repo, workspace: repo, worktree: wt.path, branch: wt.branch, base_ref: wt.base_ref });
  return { wt, state };
}

/** A sparse file of `bytes` (truncate: no disk used, but git would read every byte of it). */
function sparse(file: string, bytes: number): void {
  writeFileSync(file, '');
  truncateSync(file, bytes);
}

describe('engine/git/git: files too large for a patch', () => {
  afterEach(cleanupTemp);

  it('lists a new 50 GB sparse file and a tracked file grown to 300 MiB as too large, sized before git reads them', async function () {
    // Reading 50 GB of zeros takes git minutes: the default timeout fails this test if the guard let git near it.
    this.timeout(20_000);
    const repo = makeRepo({ 'a.txt': 'one\n', 'grown.log': 'small\n' });
    const { wt } = await task(repo);
    sparse(path.join(wt.path, 'huge.img'), 50 * GiB);
    sparse(path.join(wt.path, 'grown.log'), 300 * MiB);
    writeFileSync(path.join(wt.path, 'a.txt'), 'one\ntwo\n');
    writeFileSync(path.join(wt.path, 'new.txt'), 'fresh\n');

    const diff = await worktreeDiff(wt.path, wt.base_ref, []);
    const byPath = Object.fromEntries(diff.files.map((f) => [f.path, f]));
    assert.deepEqual(byPath['huge.img'], { path: 'huge.img', action: 'created', additions: 0, deletions: 0, binary: true, too_large: true, size: 50 * GiB });
    assert.deepEqual(byPath['grown.log'], { path: 'grown.log', action: 'modified', additions: 0, deletions: 0, binary: true, too_large: true, size: 300 * MiB });
    assert.deepEqual(byPath['a.txt'], { path: 'a.txt', action: 'modified', additions: 1, deletions: 0, binary: false });
    assert.deepEqual(byPath['new.txt'], { path: 'new.txt', action: 'created', additions: 1, deletions: 0, binary: false });
    assert.doesNotMatch(diff.patch, /huge\.img|grown\.log/);
    assert.match(diff.patch, /\+fresh/);
    assert.ok(diff.patch.length < 4096, 'the patch holds the small files only');
  });

  it('cuts the largest files while the sizes add up past the total limit (each under the per-file limit)', async () => {
    const repo = makeRepo({ 'a.txt': 'one\n' });
    const { wt } = await task(repo);
    for (const [name, mib] of [['a.bin', 90], ['b.bin', 80], ['c.bin', 70]] as const) sparse(path.join(wt.path, name), mib * MiB);
    const diff = await worktreeDiff(wt.path, wt.base_ref, [], { patch: false });
    // 240 MiB in all, 192 allowed: the largest (90) goes, 150 MiB stay and are diffed.
    assert.deepEqual(diff.files.filter((f) => f.too_large).map((f) => f.path), ['a.bin']);
    assert.deepEqual(diff.files.filter((f) => !f.too_large).map((f) => f.path).sort(), ['b.bin', 'c.bin']);
  });

  it('apply applies the rest and names the file it left in the worktree; gc keeps that worktree', async () => {
    const repo = makeRepo({ 'a.txt': 'one\n' });
    const { wt, state } = await task(repo);
    sparse(path.join(wt.path, 'huge.img'), 300 * MiB);
    writeFileSync(path.join(wt.path, 'a.txt'), 'one\ntwo\n');

    const outcome = await applyTask({ root: repo, state });
    assert.equal(outcome.applied, true, outcome.message);
    assert.deepEqual(outcome.files, ['a.txt']);
    assert.match(outcome.message, /1 file too large for a patch was NOT applied; it stays in the worktree .*: huge\.img \(300\.0 MiB\)/);
    assert.equal(git(repo, 'diff', '--name-only'), 'a.txt\n');
    assert.equal(existsSync(path.join(repo, 'huge.img')), false);
    assert.match((await readApplied(repo, state.id))!.patch_digest, /^partial-too-large:/);

    const gc = await collectGarbage({ root: repo, dryRun: false, force: false });
    assert.equal(gc.entries.find((e) => e.id === state.id)?.reason, 'modified');
    assert.ok(existsSync(path.join(wt.path, 'huge.img')), 'the worktree holding the unapplied file is kept');
  });

  it('apply of a change that is only a too large file writes nothing and says why', async () => {
    const repo = makeRepo({ 'a.txt': 'one\n' });
    const { wt, state } = await task(repo);
    sparse(path.join(wt.path, 'huge.img'), 300 * MiB);
    const outcome = await applyTask({ root: repo, state });
    assert.equal(outcome.applied, false);
    assert.equal(outcome.reason, 'too_large');
    assert.match(outcome.message, /^Nothing was applied: 1 file too large for a patch/);
    assert.equal(git(repo, 'status', '--porcelain'), '');
  });

  it('in place: a 50 GB file already in the checkout is kept out of the snapshot; a too large file the task made is listed', async function () {
    this.timeout(20_000);
    const repo = makeRepo({ 'a.txt': 'one\n' });
    sparse(path.join(repo, 'already.img'), 50 * GiB);
    const before = await takeSnapshot(repo);
    assert.deepEqual(before.too_large?.map((f) => [f.path, f.size]), [['already.img', 50 * GiB]]);

    writeFileSync(path.join(repo, 'a.txt'), 'one\ntwo\n');
    sparse(path.join(repo, 'made.img'), 300 * MiB);
    const diff = await inplaceDiff(repo, before, []);
    assert.deepEqual(
      diff.files.map((f) => [f.path, f.action, Boolean(f.too_large)]),
      [['a.txt', 'modified', false], ['made.img', 'created', true]],
    );
    assert.doesNotMatch(diff.patch, /already\.img|made\.img/);

    // The file already there, grown during the task: a change, still never read.
    truncateSync(path.join(repo, 'already.img'), 51 * GiB);
    const grown = await inplaceDiff(repo, before, [], { patch: false });
    assert.deepEqual(grown.files.find((f) => f.path === 'already.img'), { path: 'already.img', action: 'modified', additions: 0, deletions: 0, binary: true, too_large: true, size: 51 * GiB });
  });
});

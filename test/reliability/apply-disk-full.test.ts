import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statfsSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { applyTask, readApplied } from '../../src/engine/git/apply';
import type { TaskState } from '../../src/protocol';
import { addWorktree, git, makeTask, writeState } from '../cli/follow-helpers';
import { makeRepoIn, snapshot } from './apply-helpers';

/**
 * Issue 23: an apply on a full disk said "Nothing was applied … Retry" after git had rewritten 102 files and deleted
 * 98. Here the repository lives on a small tmpfs of its own (mounted for the test: this suite runs as root), filled
 * up to a chosen margin, so ENOSPC strikes either while the journal copies the files aside (nothing touched yet) or
 * while git writes the change (rolled back from the copies). Either way the message must be true and the checkout
 * exactly as before; with space again, the same apply lands.
 */
const MIB = 1024 * 1024;

function freeBytes(dir: string): number {
  const s = statfsSync(dir);
  return s.bavail * s.bsize;
}

/** Leaves about `bytes` free on the file system of `dir` (a filler file takes the rest). */
function fillUpTo(dir: string, bytes: number): string {
  const filler = path.join(dir, 'filler.bin');
  writeFileSync(filler, Buffer.alloc(Math.max(0, freeBytes(dir) - bytes)));
  return filler;
}

/** 100 files modified, 100 deleted, 60 created of 64 KiB each: git needs ~4 MiB more than the checkout holds now. */
function spaceHungryTask(repo: string): TaskState {
  for (let i = 0; i < 200; i++) writeFileSync(path.join(repo, 'src', `f${i}.txt`), `file ${i}\n`);
  git(repo, 'add', '-A');
  git(repo, 'commit', '-q', '-m', 'files');
  const task = makeTask(repo, { status: 'succeeded', report_status: 'success', ended_at: new Date().toISOString() });
  const state = { ...task, ...addWorktree(repo, task.id) };
  writeState(repo, state);
  for (let i = 0; i < 100; i++) writeFileSync(path.join(state.worktree, 'src', `f${i}.txt`), `file ${i}, changed\n`);
  for (let i = 100; i < 200; i++) rmSync(path.join(state.worktree, 'src', `f${i}.txt`));
  mkdirSync(path.join(state.worktree, 'big'));
  for (let i = 0; i < 60; i++) writeFileSync(path.join(state.worktree, 'big', `b${i}.txt`), `${String(i).repeat(64 * 1024)}\n`.slice(0, 64 * 1024));
  return state;
}

describe('reliability: apply on a full disk (a small tmpfs)', function () {
  this.timeout(60_000);
  let mountPoint: string;
  let repo: string;
  let task: TaskState;
  let asBefore: string;

  before(() => {
    mountPoint = mkdtempSync(path.join(tmpdir(), 'caesar-enospc-'));
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=48m', 'tmpfs', mountPoint]);
    repo = makeRepoIn(mountPoint);
    task = spaceHungryTask(repo);
    asBefore = snapshot(repo);
  });
  after(() => {
    execFileSync('umount', [mountPoint]);
    rmSync(mountPoint, { recursive: true, force: true });
  });

  function leftovers(): string[] {
    const dir = path.join(repo, '.caesar', 'state', 'apply');
    return existsSync(dir) ? readdirSync(dir) : [];
  }

  it('ENOSPC while the files are copied aside: "nothing was applied" and nothing was', async () => {
    const filler = fillUpTo(mountPoint, 256 * 1024);
    try {
      const outcome = await applyTask({ root: repo, state: task });
      assert.equal(outcome.applied, false);
      assert.equal(outcome.reason, 'write_failed');
      assert.match(outcome.message, /^Nothing was applied: the copy of the files it would change could not be written \(.*ENOSPC/);
      assert.match(outcome.message, /Your workspace was not touched/);
    } finally {
      rmSync(filler);
    }
    assert.equal(snapshot(repo), asBefore);
    assert.deepEqual(leftovers(), []);
    assert.equal(await readApplied(repo, task.id), undefined);
  });

  it('ENOSPC while git writes the change: every touched file is restored, the message says so', async () => {
    // Room for the journal (the copies and the patch, ~4.5 MiB) but not for the 60 new 64 KiB files as well.
    const filler = fillUpTo(mountPoint, 6 * MIB);
    try {
      const outcome = await applyTask({ root: repo, state: task });
      assert.equal(outcome.applied, false, outcome.message);
      assert.equal(outcome.reason, 'write_failed');
      assert.match(outcome.message, /^Nothing was applied: git apply failed: .*Every file it had touched was restored as it was/s);
    } finally {
      rmSync(filler);
    }
    assert.equal(snapshot(repo), asBefore, 'the checkout is exactly as before');
    assert.deepEqual(leftovers(), []);
    assert.equal(await readApplied(repo, task.id), undefined);
  });

  it('with space again the same apply lands whole', async () => {
    const outcome = await applyTask({ root: repo, state: task });
    assert.ok(outcome.applied, outcome.message);
    assert.equal(outcome.files.length, 260);
    assert.equal(readdirSync(path.join(repo, 'big')).length, 60);
    assert.deepEqual(leftovers(), []);
  });
});

import { strict as assert } from 'node:assert';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { applyTask } from '../../src/engine/git/apply';
import { collectGarbage } from '../../src/engine/tasks/gc';
import type { TaskState } from '../../src/protocol';
import { addWorktree, git, makeTask, writeState } from '../cli/follow-helpers';
import { caesarGroup, fastScratch, makeRepoIn } from './apply-helpers';

/**
 * Issue 23: two applies of two tasks that edit different lines of one file, at the same moment. Without the apply
 * lock both `git apply` read the file, patch it and write it back, and the last one drops the other's line while both
 * say "Applied" (2 of 15 rounds measured). Now either both land, or the second refuses clearly and its worktree
 * survives gc; gc also never collects a task whose change is not in the checkout any more.
 */
const LINES = 60_000;

function sharedFile(repo: string): string {
  return path.join(repo, 'shared.txt');
}

/** A finished task whose worktree replaces line `line` (1-based) of shared.txt with `text`. */
function taskEditingLine(repo: string, line: number, text: string): TaskState {
  const task = makeTask(repo, { status: 'succeeded', report_status: 'success', ended_at: new Date().toISOString() });
  const state = { ...task, ...addWorktree(repo, task.id) };
  writeState(repo, state);
  const file = path.join(state.worktree, 'shared.txt');
  const lines = readFileSync(file, 'utf8').split('\n');
  lines[line - 1] = text;
  writeFileSync(file, lines.join('\n'));
  return state;
}

describe('reliability: concurrent applies to one checkout', function () {
  this.timeout(120_000);
  let repo: string;

  beforeEach(() => {
    repo = makeRepoIn(fastScratch());
    writeFileSync(sharedFile(repo), `${Array.from({ length: LINES }, (_, i) => `line ${i + 1}`).join('\n')}\n`);
    git(repo, 'add', '-A');
    git(repo, 'commit', '-q', '-m', 'shared file');
  });
  afterEach(() => rmSync(repo, { recursive: true, force: true }));

  it('50 rounds of two simultaneous applies editing distant lines: both land every time, nothing is lost', async () => {
    for (let round = 0; round < 50; round++) {
      const a = taskEditingLine(repo, 5, `line 5 by A${round}`);
      const b = taskEditingLine(repo, LINES - 10, `line ${LINES - 10} by B${round}`);
      const [ra, rb] = await Promise.all([applyTask({ root: repo, state: a }), applyTask({ root: repo, state: b })]);
      assert.ok(ra.applied && rb.applied, `round ${round}: ${ra.message} / ${rb.message}`);
      const text = readFileSync(sharedFile(repo), 'utf8');
      assert.match(text, new RegExp(`^line 5 by A${round}$`, 'm'), `round ${round}: A's line is there`);
      assert.match(text, new RegExp(`^line ${LINES - 10} by B${round}$`, 'm'), `round ${round}: B's line is there`);
      git(repo, 'commit', '-q', '-am', `round ${round}`);
      for (const t of [a, b]) git(repo, 'worktree', 'remove', '--force', t.worktree!);
    }
  });

  it('two `caesar apply` processes at once (5 rounds): both land, or the second refuses and its worktree survives gc', async () => {
    for (let round = 0; round < 5; round++) {
      const a = taskEditingLine(repo, 8, `line 8 by A${round}`);
      const b = taskEditingLine(repo, LINES - 20, `line ${LINES - 20} by B${round}`);
      const [ra, rb] = await Promise.all([caesarGroup(repo, ['apply', a.id]), caesarGroup(repo, ['apply', b.id])]);
      assert.equal(ra.code, 0, ra.stdout + ra.stderr);
      assert.equal(rb.code, 0, rb.stdout + rb.stderr);
      const text = readFileSync(sharedFile(repo), 'utf8');
      assert.ok(text.includes(`line 8 by A${round}`) && text.includes(`line ${LINES - 20} by B${round}`), `round ${round}: both lines are there`);
      git(repo, 'commit', '-q', '-am', `round ${round}`);
    }
  });

  it('edits too close to both apply: the second refuses naming the file, nothing of it is written, and gc keeps its worktree', async () => {
    const a = taskEditingLine(repo, 10, 'line 10 by A');
    const b = taskEditingLine(repo, 11, 'line 11 by B');
    const [ra, rb] = await Promise.all([applyTask({ root: repo, state: a }), applyTask({ root: repo, state: b })]);
    const [won, lost, loser] = ra.applied ? [ra, rb, b] : [rb, ra, a];
    assert.ok(won.applied, won.message);
    assert.equal(lost.applied, false);
    assert.equal(lost.reason, 'conflicts');
    assert.deepEqual(lost.conflicts, ['shared.txt']);
    const text = readFileSync(sharedFile(repo), 'utf8');
    assert.equal(text.includes('line 10 by A') !== text.includes('line 11 by B'), true, 'exactly one of the two changes is in the file');
    const gc = await collectGarbage({ root: repo, dryRun: false, force: false });
    const entry = gc.entries.find((e) => e.id === loser.id);
    assert.equal(entry?.action, 'kept');
    assert.equal(entry?.reason, 'modified');
    assert.ok(readFileSync(path.join(loser.worktree!, 'shared.txt'), 'utf8').includes(loser === a ? 'line 10 by A' : 'line 11 by B'), 'its change survives in the worktree');
  });

  it('gc keeps an applied task whose change is no longer in the checkout (overwritten since): its worktree is the only copy', async () => {
    const a = taskEditingLine(repo, 20, 'line 20 by A');
    const applied = await applyTask({ root: repo, state: a });
    assert.ok(applied.applied, applied.message);
    // What a lost race (or any other writer) leaves: the record says applied, the file says otherwise.
    git(repo, 'checkout', '--', 'shared.txt');
    const kept = await collectGarbage({ root: repo, dryRun: false, force: false });
    const entry = kept.entries.find((e) => e.id === a.id);
    assert.equal(entry?.action, 'kept', JSON.stringify(entry));
    assert.equal(entry?.reason, 'not_in_checkout');
    // Once the change is back in the checkout, the applied worktree is collectable again.
    await applyTask({ root: repo, state: a });
    const removed = await collectGarbage({ root: repo, dryRun: false, force: false });
    assert.equal(removed.entries.find((e) => e.id === a.id)?.action, 'removed');
  });
});

import { strict as assert } from 'node:assert';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { isPidAlive } from '../../src/base/process';
import { StateWriter } from '../../src/engine/run/state-writer';
import { ACTIVE_STATUSES, TaskStateSchema } from '../../src/protocol';
import { makeRepo, readFinished, startFixture, waitFor } from '../engine/runtime/helpers';
import { hangingGit } from './helpers';

/**
 * Issue 13 item 2: a watchdog on the supervisor's work after the agent ends, so a task always reaches a final state.
 * Git is made to hang exactly there (`hangingGit`, helpers.ts).
 */
describe('reliability: the after-run watchdog', function () {
  this.timeout(60_000);

  it('a conclusion that hangs (git stuck in the diff) fails the task within the budget, naming the step, and ends that git', async () => {
    assert.ok(existsSync('/usr/bin/git'), 'the hanging wrapper delegates to /usr/bin/git');
    const repo = makeRepo();
    const git = hangingGit();
    const { id } = await startFixture(repo, { mode: 'success' }, {}, { PATH: `${git.dir}:${process.env.PATH ?? ''}`, CAESAR_CONCLUDE_BUDGET_MS: '2000' });
    const done = await waitFor('the task to reach a final state', async () => {
      const finished = await readFinished(repo, id).catch(() => undefined);
      return finished && !ACTIVE_STATUSES.includes(finished.state.status) && finished.events.some((e) => e.type === 'finished') ? finished : undefined;
    }, 30_000);
    assert.equal(done.state.status, 'failed');
    assert.match(done.state.error ?? '', /concluding the task did not finish within [12] s \(hung while computing the diff\)/);
    assert.match(done.result.report.summary, /not verified/);
    assert.equal(done.events.filter((e) => e.type === 'finished').length, 1);
    assert.equal(done.events.at(-1)?.type, 'finished');
    // The agent did its work before the hang: its event is there, and its worktree is kept for a review by hand.
    assert.ok(done.events.some((e) => e.type === 'tool_use' && e.status === 'succeeded'));
    assert.ok(done.state.worktree && existsSync(path.join(done.state.worktree, 'fixture.txt')));
    const hung = readFileSync(git.pids, 'utf8').trim().split('\n').map(Number);
    assert.ok(hung.length >= 1);
    await waitFor('the hung git to be ended', () => hung.every((pid) => !isPidAlive(pid)), 10_000);
  });

  it('a step that outlives the conclusion cannot rewrite the final state: the state writer ignores it', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'caesar-sealed-state-'));
    const file = path.join(dir, 'state.json');
    const initial = TaskStateSchema.parse({
      id: 't_0123456789abcdef0123456789abcdef', status: 'running', agent: 'demo', objective: 'x', mode: 'write', isolation: 'worktree',
      network: false, timeout_ms: 60_000, depth: 0, created_at: new Date(0).toISOString(), root: dir, workspace: dir,
    });
    const writer = new StateWriter(file, initial);
    await writer.update({ status: 'failed', error: 'concluding hung' });
    await writer.update({ status: 'running', phase: 'reading the report', excluded_paths: ['late'] });
    const onDisk = TaskStateSchema.parse(JSON.parse(readFileSync(file, 'utf8')));
    assert.equal(onDisk.status, 'failed');
    assert.equal(onDisk.phase, undefined);
    assert.deepEqual(onDisk.excluded_paths, []);
  });
});

import { strict as assert } from 'node:assert';
import { existsSync, readFileSync } from 'node:fs';
import { isPidAlive } from '../../src/base/process';
import { AFTER_RUN_PHASES, AfterRunWatchdog, PhaseTimeout, phaseBudgetMs, type AfterRunPhase } from '../../src/engine/process/phase-watchdog';
import { ACTIVE_STATUSES, EventSchema, taskPaths } from '../../src/protocol';
import { makeRepo, readFinished, startFixture, waitFor } from '../engine/runtime/helpers';
import { hangingGit, startHostile } from './helpers';

/*
 * Issue 13 item 2: "a watchdog on each phase after the agent exits". Each after-run phase has its own budget inside
 * the overall one ($CAESAR_CONCLUDE_BUDGET_MS), so a hang is caught at the phase where it happens, and named.
 */

const never = () => new Promise<never>(() => {});
const PHASES = Object.keys(AFTER_RUN_PHASES) as AfterRunPhase[];

async function finalOf(root: string, id: string) {
  return waitFor('the task to reach a final state', async () => {
    const finished = await readFinished(root, id).catch(() => undefined);
    return finished && !ACTIVE_STATUSES.includes(finished.state.status) && finished.events.some((e) => e.type === 'finished') ? finished : undefined;
  }, 60_000);
}

describe('reliability: one budget per after-run phase', function () {
  this.timeout(90_000);

  for (const phase of PHASES) {
    it(`${phase}: a hang is caught by the phase's own budget (not the overall one) and named`, async () => {
      const env = { CAESAR_CONCLUDE_BUDGET_MS: '600000', [AFTER_RUN_PHASES[phase].env]: '50' };
      const watchdog = new AfterRunWatchdog(env);
      // The other phases are not held to that budget.
      for (const other of PHASES.filter((p) => p !== phase)) assert.equal(await watchdog.phase(other, async () => other), other);
      await assert.rejects(watchdog.phase(phase, never), (err: unknown) => {
        assert.ok(err instanceof PhaseTimeout);
        assert.equal(err.phase, AFTER_RUN_PHASES[phase].label);
        assert.equal(err.budgetMs, 50);
        assert.equal(err.message, `did not finish within 50 ms (hung while ${AFTER_RUN_PHASES[phase].label})`);
        return true;
      });
      assert.equal(watchdog.current, AFTER_RUN_PHASES[phase].label);
    });
  }

  it('every phase stays within the overall budget: a phase with a longer budget gets only what is left', async () => {
    const watchdog = new AfterRunWatchdog({ CAESAR_CONCLUDE_BUDGET_MS: '150' });
    await assert.rejects(watchdog.phase('report', never), (err: unknown) => err instanceof PhaseTimeout && err.budgetMs <= 150);
    // The overall budget is spent now: the next phase fails at once rather than getting its own 30 s.
    await assert.rejects(watchdog.phase('questions', never), (err: unknown) => err instanceof PhaseTimeout && err.budgetMs === 0);
  });

  it("the checks' own timeouts extend the overall budget: a long check is not cut by the ten minutes of the rest", () => {
    const watchdog = new AfterRunWatchdog({ CAESAR_CONCLUDE_BUDGET_MS: '150' }, 60_000);
    assert.ok(watchdog.remainingMs > 59_000, String(watchdog.remainingMs));
  });

  it('defaults: the reads short, the checks (each killed at its own timeout) and the diff the rest; a bad value in a variable keeps the default', () => {
    assert.deepEqual(PHASES.map((p) => phaseBudgetMs(p, {})), [60_000, 30_000, Number.POSITIVE_INFINITY, Number.POSITIVE_INFINITY, 60_000]);
    for (const bad of ['', '0', '-5', 'soon', 'Infinity']) assert.equal(phaseBudgetMs('report', { CAESAR_CONCLUDE_REPORT_MS: bad }), 60_000);
  });

  it('a real task whose git hangs in the diff: failed by the diff phase\'s budget (the overall one is 10 min), the git ended', async () => {
    const repo = makeRepo();
    const git = hangingGit();
    const { id } = await startFixture(repo, { mode: 'success' }, {}, { PATH: `${git.dir}:${process.env.PATH ?? ''}`, CAESAR_CONCLUDE_DIFF_MS: '2000' });
    const done = await finalOf(repo, id);
    assert.equal(done.state.status, 'failed');
    assert.match(done.state.error ?? '', /concluding the task did not finish within 2 s \(hung while computing the diff\)/);
    assert.equal(done.events.filter((e) => e.type === 'finished').length, 1);
    assert.equal(done.events.at(-1)?.type, 'finished');
    const hung = readFileSync(git.pids, 'utf8').trim().split('\n').map(Number);
    await waitFor('the hung git to be ended', () => hung.every((pid) => !isPidAlive(pid)), 10_000);
  });

  it('a real task that leaves a flood in its outbox: failed by the drain phase\'s budget, the log valid and closed', async () => {
    const repo = makeRepo();
    // Unconfined on purpose: the flood must outlast the run. Sandboxed, the sandbox's own after-run work (taking the
    // report back, the private object store, the git entry) runs before the drain phase, and on a quiet machine the
    // live relay has read the whole outbox by then (300003 events relayed, nothing left for the budget to cut).
    const { id } = await startHostile(repo, { mode: 'outbox-burst', count: 300_000 }, { sandbox: { mode: 'off' } }, { CAESAR_CONCLUDE_DRAIN_MS: '500' });
    const done = await finalOf(repo, id);
    assert.equal(done.state.status, 'failed');
    assert.match(done.state.error ?? '', /concluding the task did not finish within 500 ms \(hung while relaying the agent's outbox\)/);
    const lines = readFileSync(taskPaths(repo, id).events, 'utf8').split('\n');
    assert.equal(lines.pop(), '');
    const events = lines.map((line) => EventSchema.parse(JSON.parse(line)));
    assert.deepEqual(events.map((e) => e.seq), events.map((_e, i) => i), 'seq runs from 0 without a gap');
    assert.ok(events.length < 300_000, `the flood was cut short (${events.length} events)`);
    assert.equal(events.filter((e) => e.type === 'finished').length, 1);
    assert.equal(events.at(-1)?.type, 'finished');
    assert.ok(existsSync(done.state.worktree ?? ''), 'the worktree is kept for a review by hand');
  });
});

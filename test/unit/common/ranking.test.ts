import { strict as assert } from 'node:assert';
import { rankCandidates, type RankCandidate } from '../../../src/common/ranking';

/** A candidate as the store would read it: a finished task with its checks, diff and usage. */
function candidate(id: string, over: { observed?: RankCandidate['observed']; exits?: Array<number | null>; lines?: number[]; duration?: number; cost?: number }): RankCandidate {
  return {
    id,
    observed: over.observed ?? 'succeeded',
    state: { agent: `agent-${id}` },
    result: {
      checks: (over.exits ?? []).map((exit_code) => ({ exit_code })),
      diff: { files: (over.lines ?? [1]).map((n) => ({ additions: n, deletions: 0 })) },
      usage: { ...(over.duration !== undefined ? { duration_ms: over.duration } : {}), ...(over.cost !== undefined ? { cost_usd: over.cost } : {}) },
    },
  };
}

describe('ranking: best of N on evidence (src/common/ranking.ts)', () => {
  it('orders by a successful run, fewer failed checks, more passed, a change, diff size, duration, then cost', () => {
    const ranked = rankCandidates([
      candidate('failedRun', { observed: 'failed', exits: [0, 0] }),
      candidate('oneFailed', { exits: [0, 1] }),
      candidate('noChange', { exits: [0, 0], lines: [] }),
      candidate('bigDiff', { exits: [0, 0], lines: [30] }),
      candidate('slow', { exits: [0, 0], lines: [3], duration: 90_000, cost: 0.01 }),
      candidate('dear', { exits: [0, 0], lines: [3], duration: 30_000, cost: 0.5 }),
      candidate('cheap', { exits: [0, 0], lines: [3], duration: 30_000, cost: 0.1 }),
      candidate('fewerChecks', { exits: [0], lines: [1] }),
    ]);
    assert.deepEqual(ranked.map((r) => r.id), ['cheap', 'dear', 'slow', 'bigDiff', 'noChange', 'fewerChecks', 'oneFailed', 'failedRun']);
    assert.match(ranked[0]!.why, /first: a lower cost \(\$0\.10 vs \$0\.50\) than #2 \(agent-dear\)$/);
    assert.match(ranked[2]!.why, /after #2 \(agent-dear\), which has a shorter run \(30s vs 1m ?30s\)$/);
    assert.match(ranked[4]!.why, /after #4 \(agent-bigDiff\), which has a change \(vs no file changed\)$/);
    assert.match(ranked[5]!.why, /which has more passed checks \(2 vs 1\)$/);
    assert.match(ranked[7]!.why, /which has a run that succeeded \(vs failed\)$/);
  });

  it('an unknown duration or cost sorts after a known one; equal tasks share a place and say so', () => {
    const ranked = rankCandidates([candidate('unknown', {}), candidate('known', { duration: 5_000 }), candidate('twin', { duration: 5_000 })]);
    assert.deepEqual(ranked.map((r) => r.id), ['known', 'twin', 'unknown']);
    assert.deepEqual(ranked.map((r) => r.place), [1, 1, 3]);
    assert.match(ranked[1]!.why, /tied with #1 \(agent-known\): no figure tells them apart$/);
    assert.match(ranked[2]!.why, /a shorter run \(5s vs unknown\)$/);
  });

  it('differences a person would not notice are ties: 20 ms of run time, half a cent; what they would notice decides', () => {
    const close = rankCandidates([candidate('b', { duration: 2_030, cost: 0.105 }), candidate('a', { duration: 2_010, cost: 0.1 })]);
    assert.deepEqual(close.map((r) => r.place), [1, 1]);
    assert.doesNotMatch(close.map((r) => r.why).join('\n'), /shorter run|lower cost/);
    // 10 % of a long run is noticed; so is a tenth of a dollar.
    const far = rankCandidates([candidate('slow', { duration: 100_000 }), candidate('quick', { duration: 85_000 })]);
    assert.deepEqual(far.map((r) => [r.id, r.place]), [['quick', 1], ['slow', 2]]);
    const dear = rankCandidates([candidate('dear', { cost: 0.2 }), candidate('cheap', { cost: 0.1 })]);
    assert.deepEqual(dear.map((r) => r.id), ['cheap', 'dear']);
  });

  it('tasks that made the very same change say so, naming the first of them; changing nothing is no shared change', () => {
    const same = (id: string, change: string, lines?: number[]) => ({ ...candidate(id, { ...(lines ? { lines } : {}) }), change });
    const ranked = rankCandidates([same('x', 'digest-1'), same('y', 'digest-2', [5]), same('z', 'digest-1'), same('e1', 'empty', []), same('e2', 'empty', [])]);
    const byId = new Map(ranked.map((r) => [r.id, r]));
    assert.equal(byId.get('z')!.same_change_as, 'x');
    assert.match(byId.get('z')!.why, /the same change as #1 \(agent-x\)/);
    assert.equal(byId.get('x')!.same_change_as, undefined);
    assert.equal(byId.get('y')!.same_change_as, undefined);
    assert.equal(byId.get('e2')!.same_change_as, undefined);
  });

  it('without a result (still running) a task counts its recorded checks and no diff', () => {
    const running: RankCandidate = { id: 'r', observed: 'running', state: { agent: 'x', checks: { total: 2, failed: 1 } } };
    const [only] = rankCandidates([running]);
    assert.deepEqual(only!.checks, { passed: 1, failed: 1, total: 2 });
    assert.equal(only!.changed_lines, 0);
    assert.match(only!.why, /the only candidate$/);
  });
});

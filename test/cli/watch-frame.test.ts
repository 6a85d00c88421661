import { strict as assert } from 'node:assert';
import type { Style } from '../../src/cli/format';
import { MAX_RECENT, concludingLine, renderFrame, type WatchedTask } from '../../src/cli/watch-frame';
import { EMPTY_TASK_VIEW } from '../../src/common/task-view';
import type { TaskSummary } from '../../src/engine/store/store';

/* The live view's frame is a pure function of the tasks watch knows and the clock: tested here line by line. */

const NOW = Date.parse('2026-12-01T10:00:00.000Z');
const plain: Style = { enabled: false, bold: (t) => t, dim: (t) => t, red: (t) => t, green: (t) => t, yellow: (t) => t, cyan: (t) => t };

function task(id: string, over: { createdSecondsAgo?: number; endedSecondsAgo?: number; question?: string; observed?: string } = {}): WatchedTask {
  const created = new Date(NOW - (over.createdSecondsAgo ?? 60) * 1000).toISOString();
  const summary = {
    id,
    observed: over.observed ?? (over.endedSecondsAgo === undefined ? 'running' : 'succeeded'),
    pendingQuestions: over.question ? [{ id: 'q1', question: over.question, options: ['yes', 'no'] }] : [],
    state: { agent: 'fixture', created_at: created, started_at: created, isolation: 'worktree', mode: 'write', objective: `objective of ${id}`, report_status: over.endedSecondsAgo === undefined ? undefined : 'success' },
  } as unknown as TaskSummary;
  return { id, summary, activity: EMPTY_TASK_VIEW, badLines: 0, ...(over.endedSecondsAgo === undefined ? {} : { endedAt: NOW - over.endedSecondsAgo * 1000 }) };
}

describe('cli: the watch frame', () => {
  it('says so when nothing runs, with the header and the quit hint', () => {
    const lines = renderFrame([], NOW, plain, 100, 3);
    assert.match(lines[0]!, /^caesar · watch {2}0 active · max_parallel 3 · \d\d:\d\d:\d\d$/);
    assert.ok(lines.includes('No task in progress. The window stays open.'));
    assert.equal(lines[lines.length - 1], 'q to quit');
  });

  it('shows a task whose conclusion runs as "concluding…" with the time since it began and its phase, not as silence', () => {
    const t = task('t_concl', { createdSecondsAgo: 600 });
    Object.assign(t.summary.state, { concluding_since: new Date(NOW - 95_000).toISOString(), phase: 'computing the diff' });
    t.activity = { ...EMPTY_TASK_VIEW, eventCount: 3, lastEventAt: NOW - 120_000 } as typeof EMPTY_TASK_VIEW;
    const lines = renderFrame([t], NOW, plain, 200, 2);
    assert.ok(lines.some((l) => l.trim() === 'concluding… 1m35s (computing the diff)'), lines.join('\n'));
    assert.ok(!lines.some((l) => l.includes('silence')), lines.join('\n'));
    assert.equal(concludingLine({}, NOW), undefined);
    assert.equal(concludingLine({ concluding_since: 'not a date' }, NOW), undefined);
  });

  it('puts a task waiting for an answer first, with its options and how to answer', () => {
    const lines = renderFrame([task('t_old', { createdSecondsAgo: 300 }), task('t_asks', { question: 'Proceed?' })], NOW, plain, 200, 2);
    const first = lines.findIndex((l) => l.includes('t_asks'));
    const second = lines.findIndex((l) => l.includes('t_old'));
    assert.ok(first > 0 && first < second, 'the asking task comes before the older one');
    assert.ok(lines.some((l) => l.trim() === '? Proceed?'));
    assert.ok(lines.some((l) => l.includes('1) yes  2) no')));
    assert.ok(lines.some((l) => l.includes('caesar answer t_asks q1')));
  });

  it(`lists at most ${MAX_RECENT} finished tasks, the latest first`, () => {
    const ended = Array.from({ length: MAX_RECENT + 2 }, (_, i) => task(`t_end${i}`, { endedSecondsAgo: 10 * (i + 1) }));
    const lines = renderFrame(ended, NOW, plain, 200);
    const recent = lines.slice(lines.indexOf('Recently finished') + 1).filter((l) => l.includes('t_end'));
    assert.equal(recent.length, MAX_RECENT);
    assert.ok(recent[0]!.includes('t_end0') && recent[0]!.startsWith('  ✓'));
  });

  it('marks a finished task whose check failed ✗ "succeeded · checks failed", though its agent reported success', () => {
    const t = task('t_checked', { endedSecondsAgo: 5 });
    Object.assign(t.summary.state, { checks: { total: 2, failed: 1 } });
    const line = renderFrame([t], NOW, plain, 200).find((l) => l.includes('t_checked'))!;
    assert.ok(line.startsWith('  ✗'), line);
    assert.match(line, /succeeded · checks failed \/ report success/);
  });

  it("fits each task's lines to the terminal width and draws the same frame for the same input", () => {
    const tasks = [task('t_long')];
    const a = renderFrame(tasks, NOW, plain, 40);
    assert.deepEqual(a, renderFrame(tasks, NOW, plain, 40));
    // The header is not cut; a task's lines are (a bullet or indent, then at most 40 columns).
    for (const line of a.slice(2)) assert.ok([...line].length <= 44, `too wide: ${line}`);
  });
});

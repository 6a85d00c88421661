import { strict as assert } from 'node:assert';
import { ToolPairing } from '../../../src/agents/stream';
import { renderFrame, type WatchedTask } from '../../../src/cli/watch-frame';
import type { Style } from '../../../src/cli/format';
import { EMPTY_TASK_VIEW, foldTaskView } from '../../../src/common/task-view';
import { TaskActivity } from '../../../src/extension/tasks/activity';
import { parseEvent, type EventDraft, type ProtocolEvent } from '../../../src/protocol';
import type { TaskSummary } from '../../../src/engine/store/store';
import { MemoryTimeline as TimelineRows } from '../timeline/memory-rows';

/*
 * The CLI's `caesar watch`, the Tasks tree and the timeline webview read one fold of the same events.jsonl
 * (src/common/task-view.ts), and that file carries paired ids (the supervisor's ToolPairing). So with two concurrent
 * id-less `bash` calls and the end of the first, all three say the same: the first is done, the second runs.
 */

const T0 = Date.parse('2026-12-01T10:00:00.000Z');
const plain: Style = { enabled: false, bold: (t) => t, dim: (t) => t, red: (t) => t, green: (t) => t, yellow: (t) => t, cyan: (t) => t };

/** What the supervisor writes: every draft through the one pairing step, then stamped in order. */
function supervisorLog(drafts: Array<{ seconds: number; draft: EventDraft }>): ProtocolEvent[] {
  const pairing = new ToolPairing();
  const out: ProtocolEvent[] = [];
  for (const { seconds, draft } of drafts) {
    for (const paired of pairing.pair(draft)) {
      out.push(parseEvent({ ...paired, protocol: 'caesar.event/v1', seq: out.length, at: new Date(T0 + seconds * 1000).toISOString(), task_id: 't_fold' }));
    }
  }
  return out;
}

const bash = (summary: string, status: 'started' | 'succeeded' | 'failed'): EventDraft => ({ type: 'tool_use', tool: 'bash', input_summary: summary, status });

const events = supervisorLog([
  { seconds: 0, draft: { type: 'started', agent: 'fixture', command: 'fixture' } },
  { seconds: 1, draft: bash('npm test', 'started') },
  { seconds: 2, draft: bash('npm run lint', 'started') },
  { seconds: 5, draft: bash('npm test', 'succeeded') },
]);

function watchFrame(now: number): string[] {
  const summary = {
    id: 't_fold',
    observed: 'running',
    pendingQuestions: [],
    state: { agent: 'fixture', created_at: new Date(T0).toISOString(), started_at: new Date(T0).toISOString(), isolation: 'worktree', mode: 'write', objective: 'fold' },
  } as unknown as TaskSummary;
  const task: WatchedTask = { id: 't_fold', summary, activity: foldTaskView(EMPTY_TASK_VIEW, events), badLines: 0 };
  return renderFrame([task], now, plain, 120);
}

describe('one fold for the CLI, the tree and the timeline', () => {
  it('the supervisor gives the two id-less calls two ids and closes the first', () => {
    const tools = events.filter((e) => e.type === 'tool_use');
    assert.ok(tools.every((e) => e.id), 'every tool event carries an id');
    assert.notEqual(tools[0]!.id, tools[1]!.id);
    assert.equal(tools[2]!.id, tools[0]!.id, 'the end of "npm test" closes "npm test", not the latest bash');
  });

  it('watch, the tree and the timeline agree: "npm test" done in 4s, "npm run lint" running', () => {
    const now = T0 + 10_000;
    const frame = watchFrame(now).join('\n');
    assert.match(frame, /▸ bash npm run lint — 8s\n/, frame);
    assert.doesNotMatch(frame, /\(\+1\)/, 'one call open, not two');

    const tree = new TaskActivity();
    tree.apply(events);
    assert.deepEqual(
      tree.toolCalls.map((c) => [c.input, c.status, c.endedAt === undefined ? undefined : c.endedAt - c.startedAt]),
      [['npm test', 'succeeded', 4000], ['npm run lint', 'running', undefined]],
    );

    const timeline = new TimelineRows();
    timeline.add(events);
    const toolRows = timeline.rows.filter((r) => r.type === 'tool_use');
    assert.deepEqual(
      toolRows.map((r) => [r.label, r.running ?? false, r.duration]),
      [['bash  npm test', false, '4s'], ['bash  npm run lint', true, undefined]],
    );

    // And the three read the same view.
    assert.deepEqual(tree.taskView, timeline.taskView);
  });

  it('re-delivered events (a follower that restarted) change none of the three', () => {
    const tree = new TaskActivity();
    tree.apply(events);
    tree.apply(events);
    const timeline = new TimelineRows();
    timeline.add(events);
    const rows = timeline.rows.length;
    timeline.add(events);
    assert.equal(tree.eventCount, events.length);
    assert.equal(timeline.rows.length, rows);
    assert.equal(timeline.received, 2 * events.length, 'received counts re-deliveries, as the footer shows');
    assert.deepEqual(tree.taskView, timeline.taskView);
  });

  it('when the task finishes with a call still open, all three close it as failed', () => {
    const finished = [
      ...events,
      parseEvent({ protocol: 'caesar.event/v1', seq: events.length, at: new Date(T0 + 9000).toISOString(), task_id: 't_fold', type: 'finished', status: 'partial' }),
    ];
    const view = foldTaskView(EMPTY_TASK_VIEW, finished);
    assert.deepEqual(view.openTools, []);
    const tree = new TaskActivity();
    tree.apply(finished);
    assert.deepEqual(tree.toolCalls.map((c) => c.status), ['succeeded', 'failed']);
    const timeline = new TimelineRows();
    timeline.add(finished);
    assert.deepEqual(timeline.rows.filter((r) => r.type === 'tool_use').map((r) => [r.running ?? false, r.icon, r.duration]), [
      [false, 'tools', '4s'],
      [false, 'error', '7s'],
    ]);
  });
});

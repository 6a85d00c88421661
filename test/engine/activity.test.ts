import { strict as assert } from 'node:assert';
import { parseEvent, type ProtocolEvent } from '../../src/protocol';
import { formatDuration } from '../../src/common/format';
import {
  EMPTY_TASK_VIEW as EMPTY_ACTIVITY,
  MAX_OPEN_TOOLS,
  foldTaskView as foldActivity,
  headline,
  isStalled,
  silenceMs,
} from '../../src/common/task-view';

const T0 = Date.parse('2026-01-01T10:00:00.000Z');
let seq = 0;

/** A valid caesar.event/v1 at T0 + `seconds`. */
function ev(seconds: number, fields: Record<string, unknown>): ProtocolEvent {
  return parseEvent({
    protocol: 'caesar.event/v1',
    seq: seq++,
    at: new Date(T0 + seconds * 1000).toISOString(),
    task_id: 't_test',
    ...fields,
  });
}

const tool = (seconds: number, name: string, summary: string, status: string, id = '') =>
  ev(seconds, { type: 'tool_use', tool: name, input_summary: summary, status, id });

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object') {
    for (const inner of Object.values(value)) deepFreeze(inner);
    Object.freeze(value);
  }
  return value;
}

describe('activity fold (what watch shows)', () => {
  it('is pure: folding frozen inputs works and leaves them unchanged', () => {
    const events = deepFreeze([ev(0, { type: 'started', agent: 'demo' }), tool(1, 'Bash', 'ls', 'started', 'a')]);
    const first = deepFreeze(foldActivity(EMPTY_ACTIVITY, events));
    const second = foldActivity(first, [tool(2, 'Bash', 'ls', 'succeeded', 'a')]);
    assert.equal(first.openTools.length, 1, 'the earlier value still has its open tool');
    assert.equal(second.openTools.length, 0);
    assert.equal(first.startedAt, T0);
    assert.equal(EMPTY_ACTIVITY.eventCount, 0);
  });

  it('closes a tool by id first, even when another open call has the same name and summary', () => {
    const a = foldActivity(EMPTY_ACTIVITY, [tool(0, 'Read', 'x.ts', 'started', 'one'), tool(1, 'Read', 'x.ts', 'started', 'two')]);
    const b = foldActivity(a, [tool(2, 'Read', 'x.ts', 'succeeded', 'two')]);
    assert.deepEqual(b.openTools.map((t) => t.id), ['one']);
  });

  it('looks ends up by id only: an id-less end (a log written before the supervisor paired calls) closes nothing', () => {
    const open = foldActivity(EMPTY_ACTIVITY, [
      tool(0, 'Read', 'a.ts', 'started', 'r1'),
      tool(1, 'Read', 'b.ts', 'started', 'r2'),
    ]);
    const anonymous = foldActivity(open, [tool(2, 'Read', 'b.ts', 'succeeded')]);
    assert.deepEqual(anonymous.openTools.map((t) => t.summary), ['a.ts', 'b.ts'], 'no guess by name or summary');
    assert.deepEqual(anonymous.lastTool, { name: 'Read', summary: 'b.ts', ok: true });
    const byId = foldActivity(anonymous, [tool(3, 'Read', 'b.ts', 'failed', 'r2')]);
    assert.deepEqual(byId.openTools.map((t) => t.summary), ['a.ts']);
    assert.deepEqual(byId.lastTool, { name: 'Read', summary: 'b.ts', ok: false });
  });

  it('an anonymous end (id only, the claude case) borrows the name and summary of its start', () => {
    const a = foldActivity(EMPTY_ACTIVITY, [tool(0, 'Bash', 'npm test', 'started', 'toolu_1'), tool(9, '', '', 'succeeded', 'toolu_1')]);
    assert.equal(a.openTools.length, 0);
    assert.deepEqual(a.lastTool, { name: 'Bash', summary: 'npm test', ok: true });
  });

  it('an end without a matching start removes nothing', () => {
    const a = foldActivity(EMPTY_ACTIVITY, [tool(0, 'Bash', 'ls', 'started', 'x'), tool(1, 'Edit', 'f', 'succeeded', 'y')]);
    assert.deepEqual(a.openTools.map((t) => t.id), ['x']);
  });

  it(`keeps at most ${MAX_OPEN_TOOLS} open tools, dropping the oldest`, () => {
    const starts = Array.from({ length: MAX_OPEN_TOOLS + 2 }, (_, i) => tool(i, 'T', `n${i}`, 'started', `id${i}`));
    const a = foldActivity(EMPTY_ACTIVITY, starts);
    assert.equal(a.openTools.length, MAX_OPEN_TOOLS);
    assert.equal(a.openTools[0]!.id, 'id2');
  });

  it('uses started_at for tools reported late (opencode)', () => {
    const late = ev(60, { type: 'tool_use', tool: 'Bash', input_summary: 'x', status: 'started', id: 'q', started_at: new Date(T0).toISOString() });
    const a = foldActivity(EMPTY_ACTIVITY, [late]);
    assert.equal(headline(a, T0 + 75_000), '▸ Bash x — 1m15s');
  });

  it('glues consecutive messages, clamps to the last 400 characters, and starts over after another event', () => {
    const a = foldActivity(EMPTY_ACTIVITY, [ev(0, { type: 'message', text: 'Hello' }), ev(1, { type: 'message', text: 'world' })]);
    assert.equal(a.speech, 'Hello\nworld');
    const long = foldActivity(a, [ev(2, { type: 'message', text: 'x'.repeat(500) })]);
    assert.equal(long.speech!.length, 401);
    assert.ok(long.speech!.startsWith('…x'));
    const after = foldActivity(long, [ev(3, { type: 'progress', message: 'p' }), ev(4, { type: 'message', text: 'fresh' })]);
    assert.equal(after.speech, 'fresh');
    const thinking = foldActivity(after, [ev(5, { type: 'thinking', text: 'hmm' })]);
    assert.equal(thinking.speech, 'hmm', 'thinking replaces the speech');
  });

  it('shows the summary of a JSON report sent as a message, and brace text that is not JSON as written', () => {
    const json = foldActivity(EMPTY_ACTIVITY, [ev(0, { type: 'message', text: '{"protocol":"caesar.report/v1","summary":"All done"}' })]);
    assert.equal(json.speech, 'All done');
    const notJson = foldActivity(EMPTY_ACTIVITY, [ev(0, { type: 'message', text: '{ not json' })]);
    assert.equal(notJson.speech, '{ not json');
    const noSummary = foldActivity(EMPTY_ACTIVITY, [ev(0, { type: 'message', text: '{"a":1}' })]);
    assert.equal(noSummary.speech, '{"a":1}');
  });

  it('lists changed files once each, in first-touch order; progress and error update their fields', () => {
    const a = foldActivity(EMPTY_ACTIVITY, [
      ev(0, { type: 'file_changed', path: 'b.ts', action: 'modified' }),
      ev(1, { type: 'file_changed', path: 'a.ts', action: 'created' }),
      ev(2, { type: 'file_changed', path: 'b.ts', action: 'modified' }),
      ev(3, { type: 'progress', message: 'halfway', pct: 50 }),
      ev(4, { type: 'error', message: 'oops' }),
    ]);
    assert.deepEqual(a.files, ['b.ts', 'a.ts']);
    assert.equal(a.lastProgress, 'halfway');
    assert.equal(a.lastError, 'oops');
  });

  describe('headline precedence', () => {
    const now = T0 + 10_000;
    it('no events yet, then no news', () => {
      assert.equal(headline(EMPTY_ACTIVITY, now), 'no events yet');
      assert.equal(headline(foldActivity(EMPTY_ACTIVITY, [ev(0, { type: 'started', agent: 'demo' })]), now), 'no news');
    });
    it('progress < closed tool < speech < error < open tool < finished', () => {
      let a = foldActivity(EMPTY_ACTIVITY, [ev(0, { type: 'progress', message: 'step 1' })]);
      assert.equal(headline(a, now), 'step 1');
      a = foldActivity(a, [tool(1, 'Edit', 'f.ts', 'started', 'e'), tool(2, 'Edit', 'f.ts', 'succeeded', 'e')]);
      assert.equal(headline(a, now), '✓ Edit f.ts');
      a = foldActivity(a, [ev(3, { type: 'message', text: 'Looking\n  around' })]);
      assert.equal(headline(a, now), '"Looking around"');
      a = foldActivity(a, [ev(4, { type: 'error', message: 'disk full' })]);
      assert.equal(headline(a, now), '⚠ disk full');
      a = foldActivity(a, [tool(5, 'Bash', 'npm test', 'started', 'b1'), tool(6, 'Read', 'x', 'started', 'r1')]);
      assert.equal(headline(a, now), '▸ Bash npm test — 5s (+1)');
      a = foldActivity(a, [ev(7, { type: 'finished', status: 'partial', summary: 's' })]);
      assert.equal(headline(a, now), 'finished — report "partial"');
      assert.equal(a.openTools.length, 0, 'finished clears the open tools');
    });
  });

  it('is stalled only after more than 30 s without an event, and never before the first event or once finished', () => {
    const a = foldActivity(EMPTY_ACTIVITY, [ev(0, { type: 'started', agent: 'demo' })]);
    assert.equal(isStalled(EMPTY_ACTIVITY, T0 + 120_000), false);
    assert.equal(isStalled(a, T0 + 30_000), false);
    assert.equal(isStalled(a, T0 + 30_001), true);
    assert.equal(silenceMs(a, T0 + 45_000), 45_000);
    const done = foldActivity(a, [ev(1, { type: 'finished', status: 'success' })]);
    assert.equal(isStalled(done, T0 + 600_000), false);
  });

  it('formats durations as 47s, 2m14s, 1h05m', () => {
    assert.equal(formatDuration(47_900), '47s');
    assert.equal(formatDuration(134_000), '2m14s');
    assert.equal(formatDuration(60_000), '1m00s');
    assert.equal(formatDuration(3_900_000), '1h05m');
    assert.equal(formatDuration(-5), '0s');
  });
});

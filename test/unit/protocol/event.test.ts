import { strict as assert } from 'node:assert';
import { EVENT_TYPES, UnsupportedVersionError, parseEvent, readEventsText } from '../../../src/protocol';
import { SPEC_EVENTS } from './fixtures';

const base = { protocol: 'caesar.event/v1', seq: 0, at: '2026-08-09T10:00:00.000Z', task_id: 't' };

describe('protocol: caesar.event/v1', () => {
  it('round-trips the spec stream', () => {
    for (const doc of SPEC_EVENTS) assert.deepEqual(parseEvent(doc), doc);
  });

  it('knows exactly the ten event types', () => {
    assert.deepEqual([...EVENT_TYPES].sort(), ['answer', 'error', 'file_changed', 'finished', 'message', 'progress', 'question', 'started', 'thinking', 'tool_use']);
  });

  it('accepts one valid instance of each type and fills defaults', () => {
    const samples = [
      { type: 'started', agent: 'demo' },
      { type: 'thinking', text: 'hm' },
      { type: 'message', text: 'hi' },
      { type: 'tool_use', tool: 'bash' },
      { type: 'file_changed', path: 'a.txt', action: 'created' },
      { type: 'progress', message: 'half', pct: 50 },
      { type: 'question', id: 'q1', question: 'ok?' },
      { type: 'answer', id: 'q1', answer: 'yes' },
      { type: 'error', message: 'boom' },
      { type: 'finished', status: 'success' },
    ];
    const parsed = samples.map((s) => parseEvent({ ...base, ...s }));
    assert.equal(parsed.length, 10);
    const [started, , , tool, , , question, , error, finished] = parsed as any[];
    assert.equal(started.command, '');
    assert.equal(tool.id, '', 'tool_use.id defaults to "" so older logs read back');
    assert.equal(tool.input_summary, '');
    assert.equal(tool.status, 'started');
    assert.deepEqual(question.options, []);
    assert.equal(error.fatal, false);
    assert.equal(finished.summary, '');
    assert.equal(finished.exit_code, undefined);
  });

  it('accepts a claude-style anonymous tool close (empty tool name)', () => {
    const ev = parseEvent({ ...base, type: 'tool_use', tool: '', id: 'toolu_1', status: 'succeeded' });
    assert.equal(ev.type === 'tool_use' && ev.tool, '');
  });

  it('refuses an unknown type, a progress over 100 and a negative seq', () => {
    assert.throws(() => parseEvent({ ...base, type: 'telemetry' }));
    assert.throws(() => parseEvent({ ...base, type: 'progress', message: 'x', pct: 101 }), /pct/);
    assert.throws(() => parseEvent({ ...base, seq: -1, type: 'message', text: 'x' }), /seq/);
  });

  it('refuses caesar.event/v2 by name', () => {
    assert.throws(() => parseEvent({ ...base, protocol: 'caesar.event/v2', type: 'message', text: 'x' }), UnsupportedVersionError);
  });

  it('reports bad lines with their number and reason instead of hiding them', () => {
    const text = [JSON.stringify(SPEC_EVENTS[0]), '{broken', JSON.stringify({ ...base, protocol: 'caesar.event/v2', type: 'message', text: 'x' }), '', JSON.stringify(SPEC_EVENTS[3])].join('\n');
    const results = readEventsText(text);
    assert.equal(results.length, 4);
    assert.deepEqual(results.map((r) => r.ok), [true, false, false, true]);
    const bad = results.filter((r) => !r.ok) as Array<{ line: number; error: string }>;
    assert.equal(bad[0]!.line, 2);
    assert.match(bad[0]!.error, /not valid JSON/);
    assert.equal(bad[1]!.line, 3);
    assert.match(bad[1]!.error, /caesar\.event\/v2/);
  });
});

import { strict as assert } from 'node:assert';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { readEventsText } from '../../../src/protocol';
import { EventsWriter, MAX_EVENT_TEXT } from '../../../src/engine/run/events-writer';

function tempFile(): string {
  return path.join(mkdtempSync(path.join(tmpdir(), 'caesar-ew-')), 'events.jsonl');
}

function read(file: string) {
  return readEventsText(readFileSync(file, 'utf8'));
}

describe('engine runtime: EventsWriter (the single writer of events.jsonl)', () => {
  it('stamps protocol, unique seq from 0, at and task_id, ignoring what a draft claims', () => {
    const file = tempFile();
    const writer = new EventsWriter(file, 't_1');
    writer.append({ type: 'started', agent: 'x', command: 'x run' });
    writer.appendAll([
      { type: 'message', text: 'a', seq: 99, task_id: 'other' } as never,
      { type: 'tool_use', tool: 'bash', id: 'i1', input_summary: 'ls', status: 'started' },
    ]);
    writer.finish({ type: 'finished', status: 'success', summary: 'done', exit_code: 0 });
    const lines = read(file);
    assert.ok(lines.every((l) => l.ok));
    const events = lines.map((l) => (l.ok ? l.event : undefined)!);
    assert.deepEqual(events.map((e) => e.seq), [0, 1, 2, 3]);
    assert.ok(events.every((e) => e.task_id === 't_1' && e.protocol === 'caesar.event/v1' && !Number.isNaN(Date.parse(e.at))));
  });

  it('holds translator finished drafts and writes exactly one finished, last; later appends are ignored', () => {
    const file = tempFile();
    const writer = new EventsWriter(file, 't_1');
    writer.appendAll([{ type: 'message', text: 'x' }, { type: 'finished', status: 'failed', summary: 'native end' }]);
    assert.equal(writer.translatorFinished?.status, 'failed');
    writer.finish({ type: 'finished', status: 'partial', summary: 'ours' });
    writer.finish({ type: 'finished', status: 'success', summary: 'twice' });
    writer.append({ type: 'message', text: 'too late' });
    const events = read(file).map((l) => (l.ok ? l.event : undefined)!);
    assert.deepEqual(events.map((e) => e.type), ['message', 'finished']);
    assert.equal(events[1]!.type === 'finished' && events[1]!.summary, 'ours');
  });

  it('drops invalid drafts without breaking the sequence, and reports them', () => {
    const file = tempFile();
    const rejected: string[] = [];
    const writer = new EventsWriter(file, 't_1', (r) => rejected.push(r));
    writer.appendAll([{ type: 'progress', message: 'x', pct: 400 }, { type: 'nonsense' } as never, { type: 'message', text: 'ok' }]);
    assert.equal(rejected.length, 2);
    assert.equal(writer.rejectedCount, 2);
    const events = read(file).map((l) => (l.ok ? l.event : undefined)!);
    assert.deepEqual(events.map((e) => [e.seq, e.type]), [[0, 'message']]);
  });

  it('clamps huge texts so every line stays readable (readers refuse lines over 1 MiB)', () => {
    const file = tempFile();
    const writer = new EventsWriter(file, 't_1');
    writer.append({ type: 'message', text: 'z'.repeat(3 * 1024 * 1024) });
    const [line] = read(file);
    assert.ok(line?.ok);
    assert.ok(line.ok && line.event.type === 'message' && line.event.text.length < MAX_EVENT_TEXT + 200 && /truncated/.test(line.event.text));
  });
});

import { strict as assert } from 'node:assert';
import { appendFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { parseEvent, taskPaths, type ProtocolEvent } from '../../../src/protocol';
import { bindingOf, sealEventLine } from '../../../src/engine/store/record-seal';
import { TimelineSource } from '../../../src/extension/timeline/timeline-source';
import { waitFor } from '../../support/wait';
import { MemoryTimeline } from './memory-rows';

const T0 = Date.parse('2026-12-01T10:00:00.000Z');
const XSS = '<img src=x onerror=alert(1)>';

function event(seq: number, body: Record<string, unknown>): ProtocolEvent {
  return parseEvent({ protocol: 'caesar.event/v1', seq, at: new Date(T0 + seq * 100).toISOString(), task_id: 't_src', ...body });
}

/** A mixed stream: paired tool calls, messages (some with quotes, newlines, non-ASCII, the payload), file changes. */
function stream(from: number, count: number): ProtocolEvent[] {
  const out: ProtocolEvent[] = [];
  for (let seq = from; seq < from + count; seq++) {
    const kind = seq % 5;
    if (kind === 0) out.push(event(seq, { type: 'tool_use', tool: 'read', input_summary: `file-${seq}.ts`, status: 'started', id: `c${seq}` }));
    else if (kind === 1) out.push(event(seq, { type: 'tool_use', tool: 'read', input_summary: `file-${seq - 1}.ts`, status: seq % 10 === 1 ? 'succeeded' : 'failed', id: `c${seq - 1}` }));
    else if (kind === 2) out.push(event(seq, { type: 'message', text: `Message ${seq} says "hi"\nÉté ${seq % 50 === 2 ? 'NEEDLE' : 'hay'} ${XSS}` }));
    else if (kind === 3) out.push(event(seq, { type: 'file_changed', path: `src/needle-${seq}.ts`, action: 'created' }));
    else out.push(event(seq, { type: 'thinking', text: `thought ${seq}` }));
  }
  return out;
}

/** Lines as Caesar's EventsWriter writes them (sealed for t_src under the test's root): the timeline shows only those. */
let root = '';
const lines = (events: ProtocolEvent[]) => events.map((e) => `${sealEventLine(bindingOf(root, 't_src'), JSON.stringify(e))}\n`).join('');

describe('timeline source: events.jsonl indexed in the host, read back a window at a time', () => {
  let dir: string;
  let file: string;
  let source: TimelineSource | undefined;
  let rowsHeard = 0;
  let badLines: string[] = [];
  let resets = 0;

  function open(): TimelineSource {
    const s = new TimelineSource(file, {
      onRows: () => rowsHeard++,
      onBadLine: (e) => badLines.push(e),
      onReset: () => resets++,
    });
    s.start();
    source = s;
    return s;
  }

  beforeEach(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'caesar-timeline-'));
    root = dir;
    file = taskPaths(root, 't_src').events;
    mkdirSync(path.dirname(file), { recursive: true });
    rowsHeard = 0;
    badLines = [];
    resets = 0;
  });
  afterEach(() => {
    source?.dispose();
    rmSync(dir, { recursive: true, force: true });
  });

  it('indexes the backlog and serves any window with the rows the in-memory model makes', async () => {
    const events = stream(0, 5000);
    writeFileSync(file, lines(events));
    const s = open();
    await waitFor('the backlog indexed', () => s.status.caughtUp && s.status.events === 5000);
    const model = new MemoryTimeline();
    model.add(events);
    const expected = model.rows;
    assert.equal(s.rowCount, expected.length);
    assert.equal(s.status.rows, 4000, 'each tool start and end share a row');
    for (const start of [0, 1234, expected.length - 10]) {
      const window = await s.window(start, 10);
      assert.equal(window.start, start);
      assert.equal(window.total, expected.length);
      assert.deepEqual(window.rows, expected.slice(start, start + 10));
    }
    const clamped = await s.window(expected.length + 50, 10);
    assert.equal(clamped.start, expected.length - 10, 'a window past the end is the last rows');
    assert.equal((await s.detail(1)).endsWith(`Message 2 says "hi"\nÉté NEEDLE ${XSS}`), true);
  });

  it('follows appends from its offset: new rows, a tool row closed by a later end, nothing read twice', async () => {
    writeFileSync(file, lines(stream(0, 3)));
    const s = open();
    await waitFor('3 events', () => s.status.events === 3);
    const indexed = s.status.indexedBytes;
    assert.equal((await s.window(0, 10)).rows.find((r) => r.type === 'tool_use')?.icon, 'tools');
    appendFileSync(file, lines([event(3, { type: 'tool_use', tool: 'bash', input_summary: 'sleep 1', status: 'started', id: 'live' })]));
    await waitFor('the live start', () => s.status.events === 4);
    assert.equal((await s.window(0, 10)).rows.at(-1)?.running, true);
    appendFileSync(file, lines([event(4, { type: 'tool_use', tool: 'bash', input_summary: 'sleep 1', status: 'succeeded', id: 'live' })]));
    await waitFor('the live end', () => s.status.events === 5);
    const last = (await s.window(0, 10)).rows.at(-1)!;
    assert.deepEqual([last.running, last.icon, last.duration], [undefined, 'tools', '0s']);
    assert.ok(s.status.indexedBytes > indexed);
    assert.equal(s.status.events, 5, 'no event indexed twice');
    assert.equal(resets, 0);
  });

  it('searches the file host-side (case-insensitive, through JSON escapes) and keeps matching live appends', async () => {
    const events = stream(0, 2000);
    writeFileSync(file, lines(events));
    const s = open();
    await waitFor('indexed', () => s.status.caughtUp && s.status.events === 2000);
    const model = new MemoryTimeline();
    model.add(events);
    const all = model.rows;

    assert.ok(await s.setQuery({ text: 'needle', types: ['message'] }));
    const textOf = (seq: number) => { const e = events[seq]!; return e.type === 'message' ? e.text : ''; };
    const needles = all.filter((r) => textOf(r.seq).includes('NEEDLE'));
    assert.equal(needles.length, 40);
    assert.equal(s.total, needles.length);
    assert.deepEqual((await s.window(0, 1000)).rows, needles);

    assert.ok(await s.setQuery({ text: 'says "HI"\nÉté', types: [] }), 'quotes and a newline, as JSON escapes them');
    assert.equal(s.total, all.filter((r) => r.type === 'message').length);

    assert.ok(await s.setQuery({ text: XSS.toUpperCase(), types: [] }));
    assert.equal(s.total, all.filter((r) => r.type === 'message').length, 'ASCII letters fold, the payload is text');

    assert.ok(await s.setQuery({ text: '', types: ['file_changed'] }));
    assert.equal(s.total, 400);
    appendFileSync(file, lines([event(2000, { type: 'file_changed', path: 'late.ts', action: 'created' }), event(2001, { type: 'thinking', text: 'no' })]));
    await waitFor('the live file row in the filter', () => s.total === 401);
    assert.equal((await s.window(400, 1)).rows[0]?.label, 'created late.ts');

    assert.ok(await s.setQuery({ text: 'no such text', types: [] }));
    assert.equal(s.total, 0);
    assert.deepEqual((await s.window(0, 10)).rows, []);
    assert.ok(await s.setQuery({ text: '', types: [] }));
    assert.equal(s.total, s.rowCount);
  });

  it('a newer query wins over one still scanning', async () => {
    writeFileSync(file, lines(stream(0, 3000)));
    const s = open();
    await waitFor('indexed', () => s.status.caughtUp);
    const older = s.setQuery({ text: 'thought', types: [] });
    const newer = s.setQuery({ text: 'needle', types: ['message'] });
    assert.deepEqual(await Promise.all([older, newer]), [false, true]);
    assert.equal(s.total, 60);
  });

  it('says once that events were cut out of the log (issue 34: a gap in the numbering)', async () => {
    writeFileSync(file, `${lines(stream(0, 3))}${lines(stream(6, 4))}`);
    const s = open();
    await waitFor('indexed', () => s.status.events === 7);
    assert.deepEqual(badLines, ['events.jsonl misses seq 3–5 (cut out)']);
  });

  it('counts unreadable lines, and starts over when the file is rewritten', async () => {
    writeFileSync(file, `${lines(stream(0, 4))}{not json\n${lines(stream(4, 2))}`);
    const s = open();
    await waitFor('indexed', () => s.status.events === 6);
    assert.equal(s.status.badLines, 1);
    assert.equal(badLines.length, 1);
    writeFileSync(file, lines(stream(0, 2))); // truncated: a re-run rewrote it
    await waitFor('re-indexed', () => resets === 1 && s.status.events === 2, 10_000);
    assert.equal(s.rowCount, 1, 'one tool row from the new file');
    assert.equal(s.status.badLines, 0);
  });
});

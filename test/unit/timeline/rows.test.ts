import { strict as assert } from 'node:assert';
import { parseEvent, type ProtocolEvent } from '../../../src/protocol';
import { eventMatches, firstLine } from '../../../src/extension/timeline/rows';
import { applyRowView, rowView, type RowElement } from '../../../webview-ui/timeline/rows';
import { MemoryTimeline } from './memory-rows';

const T0 = Date.parse('2026-12-01T10:00:00.000Z');
let seq = 0;
function ev(seconds: number, body: Record<string, unknown>): ProtocolEvent {
  return parseEvent({ protocol: 'caesar.event/v1', seq: seq++, at: new Date(T0 + seconds * 1000).toISOString(), task_id: 't_rows', ...body });
}

const XSS = '<img src=x onerror=alert(1)>';

/** A stand-in for a pooled row element that fails the test if anything writes markup into it. */
function fakeRowElement(): RowElement & { cells: { className: string; textContent: string | null }[] } {
  const cells = [0, 1, 2, 3].map(() => ({ className: '', textContent: null as string | null }));
  const attributes: Record<string, string> = {};
  const el = {
    className: '', id: '', hidden: true, dataset: {} as Record<string, string | undefined>, style: { transform: '' },
    setAttribute: (name: string, value: string) => void (attributes[name] = value),
    children: cells, cells,
  };
  Object.defineProperty(el, 'innerHTML', { set: () => assert.fail('innerHTML written') });
  return el;
}

describe('timeline rows', () => {
  beforeEach(() => (seq = 0));

  it('one row per event, a tool call\'s start and end in one row with its duration', () => {
    const t = new MemoryTimeline();
    t.add([
      ev(0, { type: 'started', agent: 'fixture', command: 'fx --go' }),
      ev(1, { type: 'tool_use', tool: 'bash', input_summary: 'npm test', status: 'started', id: 'a' }),
      ev(2, { type: 'message', text: `line one ${XSS}\nline two` }),
      ev(4, { type: 'tool_use', tool: 'bash', input_summary: 'npm test', status: 'failed', id: 'a' }),
      ev(5, { type: 'file_changed', path: 'src/a.ts', action: 'modified' }),
      ev(6, { type: 'progress', message: 'half', pct: 50.4 }),
      ev(7, { type: 'question', id: 'q1', question: 'Which?', options: ['A', 'B'] }),
      ev(8, { type: 'tool_use', tool: 'read', input_summary: 'x', status: 'succeeded', id: 'never-started' }),
    ]);
    const rows = t.rows;
    assert.deepEqual(rows.map((r) => [r.type, r.icon, r.tone, r.label, r.duration, r.running]), [
      ['started', 'play', 'info', 'Started fixture', undefined, undefined],
      ['tool_use', 'error', 'bad', 'bash  npm test', '3s', undefined],
      ['message', 'comment', '', `line one ${XSS}`, undefined, undefined],
      ['file_changed', 'diff-modified', 'info', 'modified src/a.ts', undefined, undefined],
      ['progress', 'pulse', 'dim', 'half (50%)', undefined, undefined],
      ['question', 'question', 'warn', 'Which?', undefined, undefined],
      ['tool_use', 'tools', '', 'read  x', undefined, undefined],
    ]);
    assert.equal(rows[3]!.filePath, 'src/a.ts');
    assert.equal(t.detail(0), 'fixture: fx --go');
    assert.equal(t.detail(1), 'bash\nnpm test\n(failed)\n(3s)');
    assert.equal(t.detail(2), `line one ${XSS}\nline two`);
    assert.equal(t.detail(5), 'Which?\n\nOptions: A | B');
  });

  it('an ACP permission question reads its options as the buttons do, and its answer row names no id', () => {
    const t = new MemoryTimeline();
    t.add([
      ev(0, { type: 'question', id: 'q_9968_mxdgxjhv', question: 'Run npm test?', options: ['Allow (allow_once)', 'Always allow (allow_always)', 'Reject (reject_once)'] }),
      ev(1, { type: 'answer', id: 'q_9968_mxdgxjhv', answer: 'Allow (allow_once)' }),
    ]);
    assert.equal(t.detail(0), 'Run npm test?\n\nOptions: Allow | Always allow | Reject');
    assert.doesNotMatch(t.detail(1), /q_9968/);
  });

  it('a running call is a spinning row until its end arrives in a later batch', () => {
    const t = new MemoryTimeline();
    t.add([ev(0, { type: 'tool_use', tool: 'bash', input_summary: 'sleep', status: 'started', id: 's' })]);
    assert.equal(t.rows[0]!.running, true);
    assert.equal(t.rows[0]!.icon, 'loading');
    t.add([ev(9, { type: 'tool_use', tool: 'bash', input_summary: 'sleep', status: 'succeeded', id: 's' })]);
    assert.deepEqual([t.rows[0]!.running, t.rows[0]!.icon, t.rows[0]!.duration], [undefined, 'tools', '9s']);
    assert.equal(t.rows.length, 1);
  });

  it('labels are one clamped line', () => {
    assert.equal(firstLine('a\r\nb'), 'a');
    const long = firstLine('x'.repeat(1000));
    assert.equal(long.length, 400);
    assert.ok(long.endsWith('…'));
  });

  it('a query matches the agent\'s texts, ASCII case-insensitively, and the event types', () => {
    const message = ev(0, { type: 'message', text: 'Hello WORLD' });
    const tool = ev(1, { type: 'tool_use', tool: 'Bash', input_summary: 'ls', status: 'started', id: 'x' });
    assert.ok(eventMatches(message, [], 'world'));
    assert.ok(!eventMatches(message, ['tool_use'], 'world'), 'type filter');
    assert.ok(eventMatches(tool, ['tool_use'], 'bash'));
    assert.ok(eventMatches(tool, ['tool_use'], ''), 'empty text: type only');
    assert.ok(!eventMatches(message, [], 'started'), 'the row\'s fixed words are not the agent\'s text');
  });

  it('the webview writes agent text as text and builds classes only from the vocabulary', () => {
    const t = new MemoryTimeline();
    t.add([ev(0, { type: 'message', text: XSS })]);
    const row = t.rows[0]!;
    const el = fakeRowElement();
    applyRowView(el, rowView(row, true), 7, 154);
    assert.equal(el.cells[2]!.textContent, XSS, 'the payload is the label\'s text');
    assert.equal(el.className, 'row tone-plain type-message selected');
    assert.equal(el.cells[1]!.className, 'codicon icon codicon-comment');
    assert.equal(el.style.transform, 'translateY(154px)');
    assert.equal(el.dataset.index, '7');
    // A row whose class parts are not from the vocabulary (a compromised host) cannot inject class text.
    const hostile = rowView({ ...row, icon: 'x" onmouseover="alert(1)', tone: 'ok bad' as never, type: 'message' }, false);
    assert.equal(hostile.iconClass, 'codicon icon codicon-');
    assert.equal(hostile.className, 'row tone-plain type-message');
  });

  it('a row not yet received shows as pending', () => {
    const view = rowView(undefined, false);
    assert.equal(view.className, 'row pending');
    assert.equal(view.label, '…');
  });
});

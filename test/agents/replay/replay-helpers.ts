import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseEvent, type EventDraft, type ProtocolEvent } from '../../../src/protocol';
import type { AgentAdapter, TranslationSummary } from '../../../src/agents/types';

export const FIXTURES = path.join(__dirname, '..', 'fixtures');

/** The workspace each capture ran in, as rewritten in ../shared/agents/captures (used to relativize codex paths). */
export function captureWorkspace(name: string): string | undefined {
  const cmd = readFixture(`${name}.cmd`);
  return /(?:^|\n)cd (\S+) &&/.exec(cmd)?.[1] ?? /# cwd: (\S+)/.exec(cmd)?.[1];
}

export function readFixture(file: string): string {
  return fs.readFileSync(path.join(FIXTURES, file), 'utf8');
}

export function captureNames(prefix: string): string[] {
  return fs
    .readdirSync(FIXTURES)
    .filter((f) => f.startsWith(prefix) && f.endsWith('.jsonl'))
    .map((f) => f.slice(0, -'.jsonl'.length))
    .sort();
}

/** The exit code recorded in the capture's .cmd (`# exit=N`), when it was recorded. */
export function recordedExit(name: string): number | undefined {
  const m = /# exit=(\d+)/.exec(readFixture(`${name}.cmd`));
  return m ? Number(m[1]) : undefined;
}

export interface Replayed {
  events: EventDraft[];
  /** The drafts stamped as the events writer would, and validated by the protocol schema. */
  stamped: ProtocolEvent[];
  summary: TranslationSummary;
  lines: number;
}

export function replay(adapter: AgentAdapter, name: string, exitCode: number | null, workspace = captureWorkspace(name)): Replayed {
  return replayText(adapter, readFixture(`${name}.jsonl`), exitCode, workspace);
}

export function replayText(adapter: AgentAdapter, text: string, exitCode: number | null, workspace?: string): Replayed {
  const translator = adapter.createTranslator(workspace ? { workspace } : undefined);
  const lines = text.split('\n');
  const events = lines.flatMap((line) => translator.line(line));
  const summary = translator.end(exitCode);
  const stamped = events.map((draft, seq) =>
    parseEvent({ ...draft, protocol: 'caesar.event/v1', seq, at: new Date(0).toISOString(), task_id: 't_replay' }),
  );
  return { events, stamped, summary, lines: lines.filter((l) => l.trim()).length };
}

/** Every end has an earlier start with the same id and tool; every start is ended once (unless `allowOpen`). */
export function assertToolsPaired(events: EventDraft[], allowOpen = false): void {
  const open = new Map<string, string>();
  for (const e of events) {
    if (e.type !== 'tool_use') continue;
    const id = e.id ?? '';
    assert.ok(id, `tool_use without id: ${JSON.stringify(e)}`);
    if (e.status === 'started') {
      assert.ok(!open.has(id), `tool ${id} started twice`);
      open.set(id, e.tool);
    } else {
      assert.ok(open.has(id), `tool ${id} ${e.status} before it started`);
      assert.equal(e.tool, open.get(id), `tool ${id} ended under another name`);
      open.delete(id);
    }
  }
  if (!allowOpen) assert.deepEqual([...open.keys()], [], 'tools never ended');
}

/** No message or thinking event without text. */
export function assertNoHollowText(events: EventDraft[]): void {
  for (const e of events) {
    if (e.type === 'message' || e.type === 'thinking') assert.ok(e.text.trim(), `hollow ${e.type}`);
  }
}

export function types(events: EventDraft[]): string[] {
  return events.map((e) => (e.type === 'tool_use' ? `tool_use:${e.status}:${e.tool}` : e.type));
}

/** Unknown, broken and hostile lines a translator must swallow without throwing or emitting. */
export const GARBAGE_LINES = [
  '',
  '   ',
  'not json at all',
  '{broken json',
  '[1,2,3]',
  'null',
  '42',
  '{}',
  '{"type":"never.seen.before","data":{"x":1}}',
  '{"type":123}',
  '{"type":"item.completed","item":null}',
  '{"type":"assistant","message":{"content":"not an array"}}',
  '{"type":"tool_use","part":null}',
  '{"type":"tool.execution_complete","data":"nope"}',
  '{"type":"result","stats":[],"usage":"x"}',
];

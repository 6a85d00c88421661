import type { ChangeAction, ProtocolEvent, ReportStatus } from '../protocol';
import { formatDuration, oneLine } from './format';

/*
 * What a task is doing, folded from its event stream: the one read model that `caesar watch`, the Tasks tree and the
 * timeline webview share (reference §2.15). Browser-safe (no `node:` import) and pure: folding returns a new value and
 * never touches its inputs, so each reader keeps one per task and feeds it batches.
 *
 * Tool calls are paired by id only. The supervisor pairs every start with its end once, before events.jsonl is
 * written, and gives id-less calls a synthetic id (src/agents/stream.ts ToolPairing); a reader never guesses.
 */

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;
/** What the fold reads of an event: everything but `protocol` and `task_id` (the timeline's wire drops them). */
export type ViewEvent = DistributiveOmit<ProtocolEvent, 'protocol' | 'task_id'>;

export interface ToolCall {
  /** Position among the task's tool calls, stable across batches (tree item ids use it). */
  index: number;
  id: string;
  name: string;
  summary: string;
  status: 'running' | 'succeeded' | 'failed';
  /** Epoch ms the call started (the event's `started_at` when the agent reports tools late). */
  startedAt: number;
  endedAt?: number;
}

export interface FileTouch {
  path: string;
  action: ChangeAction;
}

export interface ErrorEntry {
  message: string;
  fatal: boolean;
  at: string;
}

export interface TaskView {
  eventCount: number;
  /** Highest seq folded: a re-delivered event (a follower that restarted) is skipped. */
  lastSeq: number;
  startedAt?: number;
  /** Epoch ms of the last event: silence is measured from here. */
  lastEventAt?: number;
  /** What the agent last said or thought, glued across consecutive messages and clamped. */
  speech?: string;
  /** True while the last event was a message: the next message is glued to the speech instead of replacing it. */
  speaking: boolean;
  /** Calls still running, oldest first, at most MAX_OPEN_TOOLS. */
  openTools: readonly ToolCall[];
  /** The most recent calls in start order (at most KEEP_TOOL_CALLS), finished or not. */
  toolCalls: readonly ToolCall[];
  /** Every call ever started (toolCalls keeps only the latest). */
  toolCallCount: number;
  lastTool?: { name: string; summary: string; ok: boolean };
  /** Paths the agent reported touching, first touch order, without duplicates. */
  files: readonly string[];
  /** The same paths with the last action reported for each. */
  fileTouches: readonly FileTouch[];
  /** The latest errors (at most KEEP_ERRORS). */
  errors: readonly ErrorEntry[];
  lastProgress?: string;
  /** The percentage the last progress event gave, if it gave one. */
  lastProgressPct?: number;
  lastError?: string;
  finished?: { status: ReportStatus; summary: string };
}

export const MAX_OPEN_TOOLS = 8;
export const KEEP_TOOL_CALLS = 200;
export const KEEP_ERRORS = 50;
export const SPEECH_MAX_CHARS = 400;
export const STALL_AFTER_MS = 30_000;

export const EMPTY_TASK_VIEW: TaskView = Object.freeze({
  eventCount: 0,
  lastSeq: -1,
  speaking: false,
  openTools: [],
  toolCalls: [],
  toolCallCount: 0,
  files: [],
  fileTouches: [],
  errors: [],
});

/** Folds a batch of events into a new view; `previous` and `events` are left as they were. */
export function foldTaskView(previous: TaskView, events: readonly ViewEvent[]): TaskView {
  if (!events.length) return previous;
  const next: Mutable = {
    ...previous,
    openTools: [...previous.openTools],
    toolCalls: [...previous.toolCalls],
    files: [...previous.files],
    fileTouches: [...previous.fileTouches],
    errors: [...previous.errors],
  };
  for (const event of events) foldOne(next, event);
  return next;
}

type Mutable = Omit<TaskView, 'openTools' | 'toolCalls' | 'files' | 'fileTouches' | 'errors'> & {
  openTools: ToolCall[];
  toolCalls: ToolCall[];
  files: string[];
  fileTouches: FileTouch[];
  errors: ErrorEntry[];
};

function foldOne(view: Mutable, event: ViewEvent): void {
  if (event.seq <= view.lastSeq) return;
  const parsed = Date.parse(event.at);
  const at = Number.isFinite(parsed) ? parsed : (view.lastEventAt ?? 0);
  const wasSpeaking = view.speaking;
  view.lastSeq = event.seq;
  view.eventCount++;
  view.lastEventAt = at;
  view.speaking = event.type === 'message';
  switch (event.type) {
    case 'started':
      view.startedAt = at;
      break;
    case 'message': {
      const text = displayedMessage(event.text);
      view.speech = clampTail(wasSpeaking && view.speech ? `${view.speech}\n${text}` : text);
      break;
    }
    case 'thinking':
      view.speech = clampTail(event.text);
      break;
    case 'tool_use':
      if (event.status === 'started') startTool(view, event.id, event.tool, event.input_summary, event.started_at ? Date.parse(event.started_at) : at);
      else endTool(view, event.id, event.tool, event.input_summary, event.status, at);
      break;
    case 'file_changed': {
      const touched = view.fileTouches.findIndex((f) => f.path === event.path);
      if (touched < 0) {
        view.files.push(event.path);
        view.fileTouches.push({ path: event.path, action: event.action });
      } else view.fileTouches[touched] = { path: event.path, action: event.action };
      break;
    }
    case 'progress':
      view.lastProgress = event.message;
      view.lastProgressPct = event.pct;
      break;
    case 'error':
      view.lastError = event.message;
      view.errors.push({ message: event.message, fatal: event.fatal, at: event.at });
      if (view.errors.length > KEEP_ERRORS) view.errors.shift();
      break;
    case 'finished':
      view.finished = { status: event.status, summary: event.summary };
      // Whatever was still open when the task finished did not complete: no spinner may spin forever.
      view.toolCalls = view.toolCalls.map((call) => (call.status === 'running' ? { ...call, status: 'failed', endedAt: at } : call));
      view.openTools = [];
      break;
    default:
      break;
  }
}

function startTool(view: Mutable, id: string, name: string, summary: string, startedAt: number): void {
  const call: ToolCall = { index: view.toolCallCount++, id, name, summary, status: 'running', startedAt: Number.isFinite(startedAt) ? startedAt : 0 };
  view.toolCalls.push(call);
  if (view.toolCalls.length > KEEP_TOOL_CALLS) view.toolCalls.shift();
  view.openTools.push(call);
  if (view.openTools.length > MAX_OPEN_TOOLS) view.openTools.shift();
}

/** Looks the end's id up among the open calls; an end nobody started (an older log) is an instant call. */
function endTool(view: Mutable, id: string, name: string, summary: string, status: 'succeeded' | 'failed', at: number): void {
  const started = id ? findLast(view.toolCalls, (c) => c.id === id && c.status === 'running') : -1;
  const open = id ? view.openTools.findIndex((c) => c.id === id) : -1;
  if (open >= 0) view.openTools.splice(open, 1);
  const before = started >= 0 ? view.toolCalls[started]! : undefined;
  const closed: ToolCall = before
    ? { ...before, name: before.name || name, summary: before.summary || summary, status, endedAt: at }
    : { index: view.toolCallCount++, id, name, summary, status, startedAt: at, endedAt: at };
  if (before) view.toolCalls[started] = closed;
  else {
    view.toolCalls.push(closed);
    if (view.toolCalls.length > KEEP_TOOL_CALLS) view.toolCalls.shift();
  }
  view.lastTool = { name: closed.name, summary: closed.summary, ok: status === 'succeeded' };
}

function findLast<T>(items: readonly T[], test: (item: T) => boolean): number {
  for (let i = items.length - 1; i >= 0; i--) if (test(items[i]!)) return i;
  return -1;
}

/** The call of that id among the view's recent calls (the latest one, should an agent reuse ids). */
export function findToolCall(view: TaskView, id: string): ToolCall | undefined {
  const index = id ? findLast(view.toolCalls, (c) => c.id === id) : -1;
  return index >= 0 ? view.toolCalls[index] : undefined;
}

/** How long a call took, or ran so far. */
export function toolCallDuration(call: ToolCall, now: number): number {
  return (call.endedAt ?? now) - call.startedAt;
}

/** Codex sometimes sends its final report as a message: show the report's summary, not a wall of JSON. */
export function displayedMessage(text: string): string {
  const trimmed = text.trim();
  if (!trimmed.startsWith('{')) return text;
  try {
    const value: unknown = JSON.parse(trimmed);
    if (value && typeof value === 'object' && !Array.isArray(value)) {
      const summary = (value as { summary?: unknown }).summary;
      if (typeof summary === 'string' && summary.trim()) return summary;
    }
  } catch {
    /* not JSON after all: shown as written */
  }
  return text;
}

function clampTail(text: string): string {
  return text.length > SPEECH_MAX_CHARS ? `…${text.slice(-SPEECH_MAX_CHARS)}` : text;
}

/** The one line that says what a task is doing, by precedence (reference §2.15.9). */
export function headline(view: TaskView, now: number): string {
  if (view.finished) return `finished — report "${view.finished.status}"`;
  const [first, ...others] = view.openTools;
  if (first) {
    const more = others.length ? ` (+${others.length})` : '';
    return `▸ ${joinText(first.name, first.summary)} — ${formatDuration(now - first.startedAt)}${more}`;
  }
  if (view.lastError) return `⚠ ${oneLine(view.lastError)}`;
  if (view.speech) return `"${oneLine(view.speech)}"`;
  if (view.lastTool) return `${view.lastTool.ok ? '✓' : '✗'} ${joinText(view.lastTool.name, view.lastTool.summary)}`;
  if (view.lastProgress) return oneLine(view.lastProgress);
  return view.eventCount === 0 ? 'no events yet' : 'no news';
}

/** Milliseconds since the last event, or undefined before the first one. */
export function silenceMs(view: TaskView, now: number): number | undefined {
  return view.lastEventAt === undefined ? undefined : Math.max(0, now - view.lastEventAt);
}

/** Stalled: the task said something once, then nothing for more than 30 s. A finished task is never stalled. */
export function isStalled(view: TaskView, now: number, thresholdMs = STALL_AFTER_MS): boolean {
  const silence = silenceMs(view, now);
  return !view.finished && silence !== undefined && silence > thresholdMs;
}

function joinText(name: string, summary: string): string {
  return [name, oneLine(summary)].filter(Boolean).join(' ');
}

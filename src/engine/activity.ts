import type { ProtocolEvent, ReportStatus } from '../protocol';

/**
 * What a task is doing right now, folded from its event stream (reference §2.15). Pure: folding returns a new value
 * and never touches its inputs, so watch (and later the VS Code tree) can keep one per task and feed it batches.
 */
export interface OpenTool {
  id: string;
  name: string;
  summary: string;
  /** Epoch ms the call started (the event's `started_at` when the agent reports tools late). */
  startedAt: number;
}

export interface ClosedTool {
  name: string;
  summary: string;
  ok: boolean;
}

export interface Activity {
  eventCount: number;
  startedAt?: number;
  /** Epoch ms of the last event: silence is measured from here. */
  lastEventAt?: number;
  /** What the agent last said or thought, glued across consecutive messages and clamped. */
  speech?: string;
  /** True while the last event was a message: the next message is glued to the speech instead of replacing it. */
  speaking: boolean;
  openTools: readonly OpenTool[];
  lastTool?: ClosedTool;
  /** Paths the agent reported touching, first touch order, without duplicates. */
  files: readonly string[];
  lastProgress?: string;
  lastError?: string;
  finished?: { status: ReportStatus; summary: string };
}

export const MAX_OPEN_TOOLS = 8;
export const SPEECH_MAX_CHARS = 400;
export const STALL_AFTER_MS = 30_000;

export const EMPTY_ACTIVITY: Activity = Object.freeze({ eventCount: 0, speaking: false, openTools: [], files: [] });

export function foldActivity(activity: Activity, events: readonly ProtocolEvent[]): Activity {
  let next = activity;
  for (const event of events) next = foldOne(next, event);
  return next;
}

function foldOne(previous: Activity, event: ProtocolEvent): Activity {
  const at = Date.parse(event.at);
  const next: Activity = {
    ...previous,
    eventCount: previous.eventCount + 1,
    lastEventAt: Number.isFinite(at) ? at : previous.lastEventAt,
    speaking: event.type === 'message',
  };
  switch (event.type) {
    case 'started':
      next.startedAt = at;
      break;
    case 'message': {
      const text = displayedMessage(event.text);
      next.speech = clampTail(previous.speaking && previous.speech ? `${previous.speech}\n${text}` : text);
      break;
    }
    case 'thinking':
      next.speech = clampTail(event.text);
      break;
    case 'tool_use':
      if (event.status === 'started') {
        const opened: OpenTool = {
          id: event.id,
          name: event.tool,
          summary: event.input_summary,
          startedAt: event.started_at ? Date.parse(event.started_at) : at,
        };
        next.openTools = [...previous.openTools, opened].slice(-MAX_OPEN_TOOLS);
      } else {
        closeTool(next, previous.openTools, event.id, event.tool, event.input_summary, event.status === 'succeeded');
      }
      break;
    case 'file_changed':
      if (!previous.files.includes(event.path)) next.files = [...previous.files, event.path];
      break;
    case 'progress':
      next.lastProgress = event.message;
      break;
    case 'error':
      next.lastError = event.message;
      break;
    case 'finished':
      next.finished = { status: event.status, summary: event.summary };
      next.openTools = [];
      break;
    default:
      break;
  }
  return next;
}

/**
 * Pairs an end with its start: by call id first, then by (name, summary), then the oldest open call of that name.
 * An end nobody started removes nothing. An anonymous end (claude names only the id) borrows the start's name.
 */
function closeTool(next: Activity, open: readonly OpenTool[], id: string, name: string, summary: string, ok: boolean): void {
  let index = id ? open.findIndex((t) => t.id === id) : -1;
  if (index < 0 && name) index = open.findIndex((t) => t.name === name && t.summary === summary);
  if (index < 0 && name) index = open.findIndex((t) => t.name === name);
  const matched = index >= 0 ? open[index] : undefined;
  if (matched) next.openTools = open.filter((_, i) => i !== index);
  next.lastTool = { name: name || matched?.name || '', summary: summary || matched?.summary || '', ok };
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
export function headline(activity: Activity, now: number): string {
  if (activity.finished) return `finished — report "${activity.finished.status}"`;
  const [first, ...others] = activity.openTools;
  if (first) {
    const more = others.length ? ` (+${others.length})` : '';
    return `▸ ${joinText(first.name, first.summary)} — ${formatDuration(now - first.startedAt)}${more}`;
  }
  if (activity.lastError) return `⚠ ${oneLine(activity.lastError)}`;
  if (activity.speech) return `"${oneLine(activity.speech)}"`;
  if (activity.lastTool) return `${activity.lastTool.ok ? '✓' : '✗'} ${joinText(activity.lastTool.name, activity.lastTool.summary)}`;
  if (activity.lastProgress) return oneLine(activity.lastProgress);
  return activity.eventCount === 0 ? 'no events yet' : 'no news';
}

/** Milliseconds since the last event, or undefined before the first one. */
export function silenceMs(activity: Activity, now: number): number | undefined {
  return activity.lastEventAt === undefined ? undefined : Math.max(0, now - activity.lastEventAt);
}

/** Stalled: the task said something once, then nothing for more than 30 s. A finished task is never stalled. */
export function isStalled(activity: Activity, now: number, thresholdMs = STALL_AFTER_MS): boolean {
  const silence = silenceMs(activity, now);
  return !activity.finished && silence !== undefined && silence > thresholdMs;
}

/** `47s`, `2m14s`, `1h05m`. Negative durations (clock skew between processes) read as 0s. */
export function formatDuration(ms: number): string {
  const totalSeconds = Math.max(0, Math.floor(ms / 1000));
  if (totalSeconds < 60) return `${totalSeconds}s`;
  const totalMinutes = Math.floor(totalSeconds / 60);
  if (totalMinutes < 60) return `${totalMinutes}m${String(totalSeconds % 60).padStart(2, '0')}s`;
  return `${Math.floor(totalMinutes / 60)}h${String(totalMinutes % 60).padStart(2, '0')}m`;
}

function joinText(name: string, summary: string): string {
  return [name, oneLine(summary)].filter(Boolean).join(' ');
}

/** Agent text is multi-line; a headline is one line. */
export function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

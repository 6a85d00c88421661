// What a timeline row says about its event: label, icon, tone, the full detail text, the texts a search looks in.
// Pure (no vscode, no node:), so it is tested without an editor. The row's tool state (running, ended, how long)
// comes from the index (timeline-index.ts), which closed the call when its end arrived.
import { fileActionIcon, formatDuration } from '../../common/format';
import { optionButtonLabels } from '../../common/option-labels';
import type { ViewEvent } from '../../common/task-view';
import type { RowTone, TimelineRow } from './messages';

/** A tool row's state: 0 not a tool row, then running, succeeded, failed (the index stores it in a byte). */
export const ToolState = { None: 0, Running: 1, Succeeded: 2, Failed: 3 } as const;
export type ToolState = (typeof ToolState)[keyof typeof ToolState];

export interface RowToolInfo {
  state: ToolState;
  /** How long the call took, once it ended (NaN otherwise). */
  durationMs: number;
}

const NO_TOOL: RowToolInfo = { state: ToolState.None, durationMs: NaN };
const LABEL_MAX = 400;

export function firstLine(text: string): string {
  const line = text.split(/\r?\n/, 1)[0] ?? '';
  // A copy, not a slice: a sliced string keeps the whole event text alive in V8.
  return line.length > LABEL_MAX ? `${line.slice(0, LABEL_MAX - 1)}…` : line;
}

function toolLabel(e: Extract<ViewEvent, { type: 'tool_use' }>): string {
  return firstLine([e.tool || 'tool', e.input_summary].filter(Boolean).join('  '));
}

/** The row an event starts (tool ends that close a start make no row: the index never asks for them). */
export function rowFromEvent(e: ViewEvent, index: number, tool: RowToolInfo = NO_TOOL): TimelineRow {
  const row = (icon: string, tone: RowTone, label: string): TimelineRow => ({ index, seq: e.seq, at: e.at, type: e.type, icon, tone, label });
  switch (e.type) {
    case 'started':
      return row('play', 'info', firstLine(`Started ${e.agent}`));
    case 'thinking':
      return row('lightbulb', 'dim', firstLine(e.text));
    case 'message':
      return row('comment', '', firstLine(e.text));
    case 'tool_use':
      return toolRow(row, e, tool);
    case 'file_changed':
      return { ...row(fileActionIcon(e.action), 'info', firstLine(`${e.action} ${e.path}`)), filePath: e.path };
    case 'progress':
      return row('pulse', 'dim', firstLine(e.pct !== undefined ? `${e.message} (${Math.round(e.pct)}%)` : e.message));
    case 'question':
      return row('question', 'warn', firstLine(e.question));
    case 'answer':
      return row('reply', 'ok', `Answer: ${firstLine(e.answer)}`);
    case 'error':
      return row(e.fatal ? 'error' : 'warning', e.fatal ? 'bad' : 'warn', firstLine(e.message));
    case 'finished': {
      const ok = e.status === 'success';
      const partial = e.status === 'partial';
      return row(ok ? 'pass' : partial ? 'warning' : 'error', ok ? 'ok' : partial ? 'warn' : 'bad', `Finished: ${e.status}${e.summary ? ` — ${firstLine(e.summary)}` : ''}`);
    }
  }
}

function toolRow(
  row: (icon: string, tone: RowTone, label: string) => TimelineRow,
  e: Extract<ViewEvent, { type: 'tool_use' }>,
  tool: RowToolInfo,
): TimelineRow {
  const state = tool.state === ToolState.None ? (e.status === 'failed' ? ToolState.Failed : ToolState.Succeeded) : tool.state;
  if (state === ToolState.Running) return { ...row('loading', '', toolLabel(e)), running: true };
  const failed = state === ToolState.Failed;
  const out = row(failed ? 'error' : 'tools', failed ? 'bad' : '', toolLabel(e));
  if (Number.isFinite(tool.durationMs)) out.duration = formatDuration(tool.durationMs);
  return out;
}

/** The full text shown in the detail pane when the row is selected. */
export function rowDetail(e: ViewEvent, tool: RowToolInfo = NO_TOOL): string {
  switch (e.type) {
    case 'started':
      return e.command ? `${e.agent}: ${e.command}` : e.agent;
    case 'thinking':
    case 'message':
      return e.text;
    case 'tool_use': {
      const text = `${e.tool}\n${e.input_summary}`;
      const failed = tool.state === ToolState.Failed || (tool.state === ToolState.None && e.status === 'failed');
      const duration = Number.isFinite(tool.durationMs) ? `\n(${formatDuration(tool.durationMs)})` : '';
      return `${text}${failed ? '\n(failed)' : ''}${duration}`;
    }
    case 'file_changed':
      return `${e.action}: ${e.path}`;
    case 'progress':
      return e.message;
    case 'question':
      return e.options.length ? `${e.question}\n\nOptions: ${optionButtonLabels(e.options).join(' | ')}` : e.question;
    case 'answer':
      // Its question's id is for machines: the row under the question says what was answered.
      return `Answer: ${e.answer}`;
    case 'error':
      return e.message;
    case 'finished':
      return e.summary || e.status;
  }
}

/**
 * The agent's own strings of an event: what a search looks in. Only string values of the event line, so the host can
 * pre-filter the raw file for the query before parsing anything (see timeline-source.ts).
 */
export function searchTexts(e: ViewEvent): string[] {
  switch (e.type) {
    case 'started':
      return [e.agent, e.command];
    case 'thinking':
    case 'message':
      return [e.text];
    case 'tool_use':
      return [e.tool, e.input_summary];
    case 'file_changed':
      return [e.path, e.action];
    case 'progress':
      return [e.message];
    case 'question':
      return [e.question, ...e.options];
    case 'answer':
      return [e.answer];
    case 'error':
      return [e.message];
    case 'finished':
      return [e.status, e.summary];
  }
}

/** Lower-cases A-Z only: the same fold the host applies to the raw bytes of the file when it searches them. */
export function asciiLower(text: string): string {
  return text.replace(/[A-Z]+/g, (s) => s.toLowerCase());
}

/** Does the event's row pass the query? `needle` is asciiLower(query text); `types` empty keeps every type. */
export function eventMatches(e: ViewEvent, types: readonly string[], needle: string): boolean {
  if (types.length && !types.includes(e.type)) return false;
  return !needle || searchTexts(e).some((t) => asciiLower(t).includes(needle));
}

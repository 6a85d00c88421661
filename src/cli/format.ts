import { SHORT_ID_LENGTH, type ProtocolEvent } from '../protocol';
import { optionButtonLabels } from '../common/option-labels';
import { formatDuration, formatUsage, oneLine } from '../common/format';
import type { CliIo } from './io';

/** ANSI styling that collapses to plain text off a TTY or under NO_COLOR (reference §6.1.4). */
export interface Style {
  readonly enabled: boolean;
  bold(text: string): string;
  dim(text: string): string;
  red(text: string): string;
  green(text: string): string;
  yellow(text: string): string;
  cyan(text: string): string;
}

export function styleFor(io: CliIo): Style {
  const enabled = io.stdoutIsTTY && !('NO_COLOR' in io.env && io.env.NO_COLOR !== '');
  const wrap = (open: number, close: number) => (text: string) => (enabled ? `\x1b[${open}m${text}\x1b[${close}m` : text);
  return {
    enabled,
    bold: wrap(1, 22),
    dim: wrap(2, 22),
    red: wrap(31, 39),
    green: wrap(32, 39),
    yellow: wrap(33, 39),
    cyan: wrap(36, 39),
  };
}

export { SHORT_ID_LENGTH };

export function shortId(id: string): string {
  return id.slice(0, SHORT_ID_LENGTH);
}

export function ago(iso: string | undefined, now: number): string {
  const at = iso ? Date.parse(iso) : NaN;
  return Number.isFinite(at) ? `${formatDuration(now - at)} ago` : '-';
}

export { formatUsage };

/** Left-aligned columns separated by two spaces; the last column is not padded. */
export function table(rows: string[][]): string[] {
  const widths: number[] = [];
  for (const row of rows) row.forEach((cell, i) => (widths[i] = Math.max(widths[i] ?? 0, visibleLength(cell))));
  return rows.map((row) =>
    row
      .map((cell, i) => (i === row.length - 1 ? cell : cell + ' '.repeat((widths[i] ?? 0) - visibleLength(cell))))
      .join('  ')
      .trimEnd(),
  );
}

export function visibleLength(text: string): number {
  // eslint-disable-next-line no-control-regex
  return [...text.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, '')].length;
}

/**
 * Characters that drive a terminal or reorder what it shows: C0 controls (tab and newline included: they break
 * tables and lines), DEL, C1 controls (U+009B is a CSI on its own), bidi embeddings, overrides, isolates and marks,
 * and the Unicode line and paragraph separators.
 */
// eslint-disable-next-line no-control-regex
const TERMINAL_CONTROLS = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;
// eslint-disable-next-line no-control-regex
const TERMINAL_CONTROLS_BUT_LAYOUT = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;
const NAMED_ESCAPES: Record<string, string> = { '\t': '\\t', '\n': '\\n', '\r': '\\r', '\x1b': '\\e' };

function escapeControl(ch: string): string {
  const code = ch.charCodeAt(0);
  return NAMED_ESCAPES[ch] ?? (code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`);
}

/**
 * Text an agent or a repository chose (event texts, file names, task records), made inert for a terminal: every
 * control character is shown escaped (`\e]0;title\x07`, `\t`, `\n`), so it can neither move the cursor, clear the
 * screen, set the title or clipboard, colour the output, nor break a table's line. Apply it to the untrusted value
 * before our own styling (style.*) wraps it; `--json` output needs none (JSON.stringify escapes controls).
 */
export function termSafe(text: string): string {
  return text.replace(TERMINAL_CONTROLS, escapeControl);
}

/** termSafe for multi-line text shown as a block (raw.log, a patch): newlines and tabs stay, every other control is escaped. */
export function termSafeBlock(text: string): string {
  return text.replace(TERMINAL_CONTROLS_BUT_LAYOUT, escapeControl);
}

/** For display: `text` made terminal-safe (termSafe), then cut to `max` characters. */
export function truncate(text: string, max: number): string {
  const chars = [...termSafe(text)];
  return chars.length > max ? `${chars.slice(0, Math.max(0, max - 1)).join('')}…` : chars.join('');
}

/** The text of an event after its `[seq] type` prefix: one line, everything an operator needs, terminal-safe. */
export function describeEvent(event: ProtocolEvent): string {
  return termSafe(describeAgentText(event));
}

function describeAgentText(event: ProtocolEvent): string {
  switch (event.type) {
    case 'started':
      return `${event.agent}${event.command ? ` — ${oneLine(event.command)}` : ''}`;
    case 'thinking':
    case 'message':
      return oneLine(event.text);
    case 'tool_use': {
      const what = [event.tool, oneLine(event.input_summary)].filter(Boolean).join(' ');
      return `${event.status} ${what || '(anonymous)'}${event.id ? ` [${event.id}]` : ''}`;
    }
    case 'file_changed':
      return `${event.action} ${event.path}`;
    case 'progress':
      return `${event.pct !== undefined ? `${event.pct}% ` : ''}${oneLine(event.message)}`;
    case 'question':
      return `${event.id}: ${oneLine(event.question)}${event.options.length ? ` [options: ${optionButtonLabels(event.options).join(' | ')}]` : ''}`;
    case 'answer':
      return `${event.id}: ${oneLine(event.answer)}`;
    case 'error':
      return `${event.fatal ? '(fatal) ' : ''}${oneLine(event.message)}`;
    case 'finished':
      return `report "${event.status}"${event.exit_code !== undefined && event.exit_code !== null ? ` exit ${event.exit_code}` : ''}${
        event.summary ? ` — ${oneLine(event.summary)}` : ''
      }`;
    default:
      return '';
  }
}

/** `[seq] type text` — the format of `caesar logs`. */
export function formatEventLine(event: ProtocolEvent): string {
  return `[${event.seq}] ${event.type} ${describeEvent(event)}`.trimEnd();
}

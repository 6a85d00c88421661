import type { ProtocolEvent, Usage } from '../protocol';
import { formatDuration, oneLine } from '../engine/activity';
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

/** Ids are `t_` + 32 hex: the first 10 characters are enough to tell tasks apart on a screen. */
export function shortId(id: string): string {
  return id.slice(0, 10);
}

export function ago(iso: string | undefined, now: number): string {
  const at = iso ? Date.parse(iso) : NaN;
  return Number.isFinite(at) ? `${formatDuration(now - at)} ago` : '-';
}

/** `12.3k in / 4.1k out · $0.42 · 1m05s`, or undefined when nothing is known. */
export function formatUsage(usage: Usage | undefined): string | undefined {
  if (!usage) return undefined;
  const parts: string[] = [];
  if (usage.input_tokens !== undefined || usage.output_tokens !== undefined) {
    parts.push(`${compact(usage.input_tokens ?? 0)} in / ${compact(usage.output_tokens ?? 0)} out`);
  }
  if (usage.cost_usd !== undefined) parts.push(`$${usage.cost_usd.toFixed(2)}`);
  if (usage.duration_ms !== undefined) parts.push(formatDuration(usage.duration_ms));
  return parts.length ? parts.join(' · ') : undefined;
}

function compact(n: number): string {
  if (n < 1000) return String(n);
  if (n < 1_000_000) return `${(n / 1000).toFixed(1)}k`;
  return `${(n / 1_000_000).toFixed(1)}M`;
}

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

export function truncate(text: string, max: number): string {
  const chars = [...text];
  return chars.length > max ? `${chars.slice(0, Math.max(0, max - 1)).join('')}…` : text;
}

/** The text of an event after its `[seq] type` prefix: one line, everything an operator needs. */
export function describeEvent(event: ProtocolEvent): string {
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
      return `${event.id}: ${oneLine(event.question)}${event.options.length ? ` [options: ${event.options.join(' | ')}]` : ''}`;
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

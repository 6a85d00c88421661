import type { Usage } from '../../protocol';

/** "4s", "2m 05s", "1h 03m" — short enough for a tree description. */
export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) return '';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const s = Math.floor(ms / 1000);
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m ${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(m / 60)}h ${String(m % 60).padStart(2, '0')}m`;
}

function compact(n: number): string {
  if (n < 1000) return String(n);
  if (n < 1_000_000) return `${(n / 1000).toFixed(n < 10_000 ? 1 : 0)}k`;
  return `${(n / 1_000_000).toFixed(1)}M`;
}

/** "12.3k tok · $0.042", or '' when the agent reported nothing (zeros, as the demo agent reports, are nothing). */
export function formatUsage(usage: Usage | undefined): string {
  if (!usage) return '';
  const parts: string[] = [];
  const tokens = (usage.input_tokens ?? 0) + (usage.output_tokens ?? 0);
  if (tokens > 0) parts.push(`${compact(tokens)} tok`);
  if (usage.cost_usd) parts.push(`$${usage.cost_usd < 1 ? usage.cost_usd.toFixed(3) : usage.cost_usd.toFixed(2)}`);
  return parts.join(' · ');
}

/** The first line of a text, cut to a tree-label length. */
export function oneLine(text: string, max = 120): string {
  const line = text.split(/\r?\n/, 1)[0] ?? '';
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

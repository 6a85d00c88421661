import type { ChangeAction, Usage } from '../protocol';

/*
 * The formatters every front end shares (CLI, Tasks tree, timeline webview), so the same task reads the same
 * everywhere. Browser-safe: no `node:` import, types only from protocol (see test/unit/layering.test.ts).
 */

/** `47s`, `2m14s`, `1h05m`. Negative or unknown durations (clock skew between processes) read as 0s. */
export function formatDuration(ms: number): string {
  const totalSeconds = Number.isFinite(ms) ? Math.max(0, Math.floor(ms / 1000)) : 0;
  if (totalSeconds < 60) return `${totalSeconds}s`;
  const totalMinutes = Math.floor(totalSeconds / 60);
  if (totalMinutes < 60) return `${totalMinutes}m${String(totalSeconds % 60).padStart(2, '0')}s`;
  return `${Math.floor(totalMinutes / 60)}h${String(totalMinutes % 60).padStart(2, '0')}m`;
}

/**
 * Usage as one line, or undefined when nothing is known. `full` (the CLI): `12.3k in / 4.1k out · $0.42 · 1m05s`.
 * `brief` (a tree description, the timeline header): `12k tok · $0.012`, where zeros count as not reported (the demo
 * agent reports zeros).
 */
export function formatUsage(usage: Usage | undefined, style: 'full' | 'brief' = 'full'): string | undefined {
  if (!usage) return undefined;
  const parts: string[] = [];
  if (style === 'brief') {
    const tokens = (usage.input_tokens ?? 0) + (usage.output_tokens ?? 0);
    if (tokens > 0) parts.push(`${compactCount(tokens, 'brief')} tok`);
    if (usage.cost_usd) parts.push(`$${usage.cost_usd < 1 ? usage.cost_usd.toFixed(3) : usage.cost_usd.toFixed(2)}`);
    return parts.length ? parts.join(' · ') : undefined;
  }
  if (usage.input_tokens !== undefined || usage.output_tokens !== undefined) {
    parts.push(`${compactCount(usage.input_tokens ?? 0)} in / ${compactCount(usage.output_tokens ?? 0)} out`);
  }
  if (usage.cost_usd !== undefined) parts.push(`$${usage.cost_usd.toFixed(2)}`);
  if (usage.duration_ms !== undefined) parts.push(formatDuration(usage.duration_ms));
  return parts.length ? parts.join(' · ') : undefined;
}

/** `950`, `12.3k`, `4.1M`; `brief` drops the decimal from 10k on (`12k`). */
export function compactCount(n: number, style: 'full' | 'brief' = 'full'): string {
  if (n < 1000) return String(n);
  if (n < 1_000_000) return `${(n / 1000).toFixed(style === 'brief' && n >= 10_000 ? 0 : 1)}k`;
  return `${(n / 1_000_000).toFixed(1)}M`;
}

/** The codicon of a file change (tree, timeline), without the `codicon-` prefix. */
export const FILE_ACTION_ICONS: Readonly<Record<ChangeAction, string>> = {
  created: 'diff-added',
  modified: 'diff-modified',
  deleted: 'diff-removed',
  renamed: 'diff-renamed',
};

export function fileActionIcon(action: string): string {
  return (FILE_ACTION_ICONS as Record<string, string>)[action] ?? 'diff';
}

/** Agent text is multi-line; a headline is one line. */
export function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

/** A task run as a job: "Slurm job 42 (PENDING: Priority)", the same words in `ps`, watch, the tree and MCP. */
export function formatJob(job: { id: string; state?: string; reason?: string } | undefined): string | undefined {
  if (!job) return undefined;
  const state = job.state ? ` (${job.state}${job.reason ? `: ${job.reason}` : ''})` : '';
  return `Slurm job ${job.id}${state}`;
}

/**
 * How a task is named to a person, in dialogs, toasts and pickers: its objective on one line (cut at `max`) and its
 * agent, “Fix the login bug” (codex). Ids are for machines: a person tells tasks apart by what they were asked.
 */
export function taskTitle(task: { objective: string; agent: string }, max = 60): string {
  const line = oneLine(task.objective);
  return `“${line.length > max ? `${line.slice(0, max - 1)}…` : line}” (${task.agent})`;
}

/** "1 task", "3 tasks": a count with its noun, never "task(s)"; `several` where the plural is not the noun plus s. */
export function plural(count: number, one: string, several = `${one}s`): string {
  return `${count} ${noun(count, one, several)}`;
}

/** The noun alone, for a count written otherwise ("2,800 more files"). */
export function noun(count: number, one: string, several = `${one}s`): string {
  return count === 1 ? one : several;
}

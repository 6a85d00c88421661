import { formatDuration, formatUsage, oneLine } from '../../common/format';
import type { TaskSummary } from '../../engine/tasks';
import { rankCandidates } from '../../common/ranking';

/*
 * The text of a comparison: several tasks (typically one objective run on several agents) side by side, one column
 * per task. Every figure comes from the task's own records (state.json, result.json) as the store read them, through
 * the shared formatters; nothing is recomputed here. No `vscode` import: the content is a pure function of summaries.
 */

/** What one task's column shows. */
export interface TaskFigures {
  id: string;
  agent: string;
  status: string;
  duration?: string;
  usage?: string;
  files: number;
  additions: number;
  deletions: number;
  /** Per changed file: `+a −d`, `binary`, or the action for files without line counts. */
  perFile: Map<string, string>;
}

export function figuresOf(summary: TaskSummary): TaskFigures {
  const { state, result } = summary;
  const files = result?.diff?.files ?? [];
  const perFile = new Map<string, string>();
  for (const f of files) perFile.set(f.path, f.binary ? `${f.action}, binary` : `+${f.additions} −${f.deletions}${f.action === 'modified' ? '' : ` (${f.action})`}`);
  const duration = durationMs(summary);
  const usage = formatUsage(result?.usage ?? state.usage, 'brief');
  return {
    id: summary.id,
    agent: state.model ? `${state.agent} (${state.model})` : state.agent,
    status: summary.applied ? `${summary.observed}, applied` : summary.discarded ? `${summary.observed}, discarded` : summary.observed,
    ...(duration !== undefined ? { duration: formatDuration(duration) } : {}),
    ...(usage ? { usage } : {}),
    files: files.length,
    additions: files.reduce((n, f) => n + (f.additions ?? 0), 0),
    deletions: files.reduce((n, f) => n + (f.deletions ?? 0), 0),
    perFile,
  };
}

/** The run's duration as the agent reported it, else from the task's start to its end (unknown while running). */
function durationMs(summary: TaskSummary): number | undefined {
  const reported = summary.result?.usage?.duration_ms ?? summary.state.usage?.duration_ms;
  if (reported !== undefined) return reported;
  const { started_at, ended_at } = summary.state;
  if (!started_at || !ended_at) return undefined;
  return Date.parse(ended_at) - Date.parse(started_at);
}

/** A Markdown document: the objective(s), a table of figures (one column per task), then a file × task table. */
export function compareMarkdown(summaries: readonly TaskSummary[]): string {
  const columns = summaries.map(figuresOf);
  const objectives = [...new Set(summaries.map((s) => oneLine(s.state.objective)))];
  const lines: string[] = [`# Compare ${summaries.length} tasks`, ''];
  if (objectives.length === 1) lines.push(`Objective: ${cell(objectives[0]!)}`, '');
  else for (const s of summaries) lines.push(`- ${s.id}: ${cell(oneLine(s.state.objective))}`);
  if (objectives.length > 1) lines.push('');

  const header = ['Task', ...columns.map((c) => c.id)];
  const rows: string[][] = [
    ['Agent', ...columns.map((c) => cell(c.agent))],
    ['Status', ...columns.map((c) => c.status)],
    ['Duration', ...columns.map((c) => c.duration ?? '—')],
    ['Usage / cost', ...columns.map((c) => c.usage ?? '—')],
    ['Files changed', ...columns.map((c) => String(c.files))],
    ['Lines +/−', ...columns.map((c) => `+${c.additions} −${c.deletions}`)],
  ];
  lines.push(...table(header, rows), '');
  lines.push(...rankingLines(summaries));

  const files = [...new Set(columns.flatMap((c) => [...c.perFile.keys()]))].sort();
  if (files.length) {
    lines.push('## Files', '');
    lines.push(...table(['File', ...columns.map((c) => c.id)], files.map((f) => [cell(f), ...columns.map((c) => c.perFile.get(f) ?? '—')])), '');
    lines.push('Open two tasks’ versions of a file side by side: **Caesar: Compare File Across Tasks…**', '');
  } else {
    lines.push('None of these tasks changed a file.', '');
  }
  return `${lines.join('\n')}`;
}

/**
 * Best of N on evidence: the ranking `caesar compare` prints too (src/common/ranking.ts), best first, one line per
 * task saying why it stands there.
 */
function rankingLines(summaries: readonly TaskSummary[]): string[] {
  if (summaries.length < 2) return [];
  const ranked = rankCandidates(summaries);
  const rows = ranked.map((r, i) => [`#${i + 1}`, r.id, cell(r.agent), cell(r.why)]);
  return ['## Ranking', '', 'By checks passed, then diff size, duration and cost.', '', ...table(['#', 'Task', 'Agent', 'Why'], rows), ''];
}

function table(header: string[], rows: string[][]): string[] {
  return [`| ${header.join(' | ')} |`, `|${header.map(() => ' --- ').join('|')}|`, ...rows.map((r) => `| ${r.join(' | ')} |`)];
}

/** Text inside a table cell: one line, pipes escaped (agent and user text are never trusted to be table-safe). */
function cell(text: string): string {
  return oneLine(text).replace(/\\/g, '\\\\').replace(/\|/g, '\\|');
}

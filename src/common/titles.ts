/*
 * How a task is listed to a person, in the editor's Tasks tree and `caesar ps` alike: the objective's first line, cut,
 * numbered when other tasks share it. Browser-safe, and typed by shape so the CLI and the extension pass their own.
 */

/** What a title is made of: a task's id, objective and creation time. */
export interface TitledTask {
  id: string;
  state: { objective: string; created_at: string };
}

/** How long a task's label may be: the view cuts what is longer at its width; the tooltip has the whole objective. */
export const TITLE_MAX = 60;

/** The objective's first line, cut at a word boundary near `max` characters with an ellipsis. */
export function shortTitle(objective: string, max = TITLE_MAX): string {
  const line = (objective.split(/\r?\n/, 1)[0] ?? '').replace(/\s+/g, ' ').trim();
  if (line.length <= max) return line;
  const cut = line.slice(0, max - 1);
  const space = cut.lastIndexOf(' ');
  return `${(space > max / 2 ? cut.slice(0, space) : cut).replace(/[\s,;:.-]+$/, '')}…`;
}

/**
 * Run numbers of tasks sharing an objective (re-runs, the same objective given to several agents), by creation time:
 * 2 for the second, 3 for the third. The first (and a task whose objective is unique) is absent: its title keeps no
 * number, as a file's first copy does.
 */
export function runNumbers(summaries: readonly TitledTask[]): Map<string, number> {
  const byObjective = new Map<string, TitledTask[]>();
  for (const s of summaries) {
    const same = byObjective.get(s.state.objective);
    if (same) same.push(s);
    else byObjective.set(s.state.objective, [s]);
  }
  const numbers = new Map<string, number>();
  for (const same of byObjective.values()) {
    if (same.length < 2) continue;
    same.sort((a, b) => a.state.created_at.localeCompare(b.state.created_at) || a.id.localeCompare(b.id));
    same.forEach((s, i) => i > 0 && numbers.set(s.id, i + 1));
  }
  return numbers;
}

/** "Fix the parser #2": the short title, numbered when other tasks share its objective. */
export function taskTitle(summary: TitledTask, numbers: ReadonlyMap<string, number>): string {
  const n = numbers.get(summary.id);
  return n === undefined ? shortTitle(summary.state.objective) : `${shortTitle(summary.state.objective)} #${n}`;
}

import { OverlapTracker, type TaskOverlap, type TaskSummary } from '../engine/tasks';
import { shortId, termSafe, type Style } from './format';

/*
 * `caesar ps`'s overlap lines (issue 25): running and unapplied tasks that changed the same files, and git's
 * prediction of whether applying both conflicts. Computed fresh per listing: finished tasks cost no git process
 * unless they share a file with another task (see src/engine/git/overlap.ts).
 */

/** Overlaps of every candidate task; a failure to compute them never fails the listing (an empty map). */
export async function overlapsOf(root: string, all: readonly TaskSummary[]): Promise<Map<string, TaskOverlap[]>> {
  return new OverlapTracker(root).compute(all).catch(() => new Map<string, TaskOverlap[]>());
}

function verdict(o: TaskOverlap, style: Style): string {
  if (o.prediction === 'conflict') return style.red(`will conflict in ${o.conflicts.map(termSafe).join(', ')}`);
  if (o.prediction === 'clean') return style.green('merge cleanly');
  return style.yellow(`no prediction (${termSafe(o.reason ?? 'unknown')})`);
}

/** One line per overlapping pair with at least one shown task, each pair once. */
export function overlapLines(shown: readonly TaskSummary[], overlaps: ReadonlyMap<string, TaskOverlap[]>, style: Style): string[] {
  const shownIds = new Set(shown.map((t) => t.id));
  const lines: string[] = [];
  const seen = new Set<string>();
  for (const t of shown) {
    for (const o of overlaps.get(t.id) ?? []) {
      const pair = [t.id, o.with].sort().join(' ');
      if (seen.has(pair)) continue;
      seen.add(pair);
      const other = shownIds.has(o.with) ? shortId(o.with) : `${shortId(o.with)} (not listed)`;
      const files = o.files.slice(0, 5).map(termSafe).join(', ') + (o.files.length > 5 ? ` and ${o.files.length - 5} more` : '');
      lines.push(`  ${shortId(t.id)} and ${other} both changed ${files}: ${verdict(o, style)}`);
    }
  }
  return lines.length ? ['', style.bold('OVERLAPS'), ...lines] : [];
}

/** The overlaps of one task as `ps --json` gives them. */
export function overlapsJson(overlaps: ReadonlyMap<string, TaskOverlap[]>, id: string): TaskOverlap[] {
  return overlaps.get(id) ?? [];
}

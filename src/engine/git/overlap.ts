import type { TaskSummary } from '../store/store';
import { checkObjectId } from './record-checks';
import { changedBetween, predictMerge, stateCommit, worktreeState, type MergePrediction, type WorktreeState } from './merge-prediction';

/*
 * Overlap before it hurts (issue 25): the files each running or finished-but-unapplied worktree task has changed so
 * far, compared across the tasks of one repository. Two tasks that changed a file in common overlap; git's
 * merge-tree predicts whether applying both will conflict.
 *
 * Kept cheap, since the Tasks view asks on every change and `caesar ps` on every listing:
 *  - a finished task's files come from its result.json (git computed them when it ended): no git process at all
 *    until it shares a file with another task;
 *  - a running task's files come from git (its worktree staged into a private index and written as a tree); the
 *    tree is recomputed only when the task moved on (its event log grew, its status changed), and reused otherwise;
 *  - a prediction is cached by the two states' trees, which name the exact contents: unchanged tasks cost nothing;
 *  - a file both tasks changed to the same content is no overlap (the same fix twice is in nobody's way).
 */

export type OverlapPrediction = 'clean' | 'conflict' | 'unknown';

export interface TaskOverlap {
  /** The other task. */
  with: string;
  /** Files both tasks changed. */
  files: string[];
  prediction: OverlapPrediction;
  /** The files git could not merge, when it predicts a conflict. */
  conflicts: string[];
  /** Why there is no prediction (a worktree git could not read), when prediction is 'unknown'. */
  reason?: string;
}

/** What one task's side of the comparison is built from. */
interface TaskSide {
  summary: TaskSummary;
  base: string;
  /** The files it changed so far (result.json for a finished task, else git). */
  files: string[];
  /** Its worktree as git objects, once needed; undefined while not yet read. */
  state?: WorktreeState;
  commit?: string;
  error?: string;
}

interface CachedSide {
  key: string;
  side: TaskSide;
}

/** Tasks whose work may still be applied: a worktree task not yet applied or discarded, with a base to compare from. */
export function overlapCandidates(summaries: readonly TaskSummary[]): TaskSummary[] {
  return summaries.filter(
    (s) => s.state.isolation === 'worktree' && s.state.mode === 'write' && !!s.state.worktree && !!s.state.base_ref && !s.applied && !s.discarded && s.observed !== 'lost',
  );
}

const finished = (s: TaskSummary) => s.state.status !== 'pending' && s.state.status !== 'running';

/** What makes a cached side stale: a running task that did something since, or a task that ended. */
function sideKey(s: TaskSummary): string {
  return finished(s) ? `final:${s.state.status}:${s.state.ended_at ?? ''}` : `live:${s.state.status}:${s.eventsBytes}`;
}

/**
 * Computes overlaps, keeping what it learned between calls: one instance per view (the extension's tree), or a
 * fresh one per command (`caesar ps`). Not safe for concurrent calls on one instance: callers serialize.
 */
export class OverlapTracker {
  private readonly sides = new Map<string, CachedSide>();
  /** By the two states' trees: the shared files whose contents differ, and git's prediction for them. */
  private readonly predictions = new Map<string, MergePrediction & { files: string[] }>();

  /** Every candidate task's overlaps with the others (tasks without one are absent). */
  async compute(summaries: readonly TaskSummary[]): Promise<Map<string, TaskOverlap[]>> {
    const candidates = overlapCandidates(summaries);
    const sides = await Promise.all(candidates.map((s) => this.sideOf(s)));
    this.forgetAllBut(new Set(candidates.map((s) => s.id)));
    const overlaps = new Map<string, TaskOverlap[]>();
    for (let i = 0; i < sides.length; i++) {
      for (let j = i + 1; j < sides.length; j++) {
        const [a, b] = [sides[i] as TaskSide, sides[j] as TaskSide];
        const shared = sharedFiles(a.files, b.files);
        if (shared.length === 0) continue;
        const pair = await this.comparePair(a, b, shared);
        if (!pair) continue; // different repositories, or the same content in both: they are not in each other's way
        const add = (side: TaskSide, other: TaskSide) =>
          overlaps.set(side.summary.id, [...(overlaps.get(side.summary.id) ?? []), { with: other.summary.id, ...pair }]);
        add(a, b);
        add(b, a);
      }
    }
    return overlaps;
  }

  private async sideOf(summary: TaskSummary): Promise<TaskSide> {
    const key = sideKey(summary);
    const cached = this.sides.get(summary.id);
    if (cached?.key === key) {
      cached.side.summary = summary;
      return cached.side;
    }
    const side: TaskSide = { summary, base: '', files: [] };
    try {
      side.base = checkObjectId(summary.state.base_ref);
      if (finished(summary) && summary.result?.diff) {
        side.files = summary.result.diff.files.flatMap((f) => (f.old_path ? [f.path, f.old_path] : [f.path]));
      } else {
        side.state = await worktreeState(summary.state.worktree as string, side.base, summary.state.excluded_paths);
        side.files = side.state.files;
      }
    } catch (error) {
      side.error = (error as Error).message;
    }
    this.sides.set(summary.id, { key, side });
    return side;
  }

  /**
   * The overlap of two tasks sharing `shared` files: the files whose contents differ between them (a file both
   * changed the same way is no overlap) and git's prediction. Undefined when they belong to different repositories
   * or differ in none of the shared files.
   */
  private async comparePair(a: TaskSide, b: TaskSide, shared: string[]): Promise<Omit<TaskOverlap, 'with'> | undefined> {
    try {
      await Promise.all([this.ensureState(a), this.ensureState(b)]);
      const [sa, sb] = [a.state as WorktreeState, b.state as WorktreeState];
      if (sa.commonDir !== sb.commonDir) return undefined;
      const key = [`${a.base}:${sa.tree}`, `${b.base}:${sb.tree}`].sort().join(' ');
      let known = this.predictions.get(key);
      if (!known) {
        const differing = new Set(sa.tree === sb.tree ? [] : await changedBetween(sa.repo, sa.tree, sb.tree));
        const files = shared.filter((f) => differing.has(f));
        known = { files, ...(files.length ? await predictMerge(sa.repo, await this.commitOf(a), await this.commitOf(b)) : { conflict: false, conflicts: [] }) };
        this.predictions.set(key, known);
      }
      if (known.files.length === 0) return undefined;
      return { files: known.files, prediction: known.conflict ? 'conflict' : 'clean', conflicts: known.conflicts };
    } catch (error) {
      return { files: shared, prediction: 'unknown', conflicts: [], reason: (error as Error).message };
    }
  }

  private async commitOf(side: TaskSide): Promise<string> {
    const state = side.state as WorktreeState;
    side.commit ??= await stateCommit(state.repo, state.tree, side.base);
    return side.commit;
  }

  /** A finished task's worktree is read only once it shares a file with another task. */
  private async ensureState(side: TaskSide): Promise<void> {
    if (side.error) throw new Error(side.error);
    if (side.state) return;
    const { summary } = side;
    side.state = await worktreeState(summary.state.worktree as string, side.base, summary.state.excluded_paths);
  }

  /** Tasks applied, discarded or removed since: their entries (and predictions naming them, by commit) go. */
  private forgetAllBut(ids: ReadonlySet<string>): void {
    for (const id of this.sides.keys()) if (!ids.has(id)) this.sides.delete(id);
    if (this.predictions.size > 4 * ids.size * ids.size + 16) this.predictions.clear();
  }
}

function sharedFiles(a: readonly string[], b: readonly string[]): string[] {
  const inB = new Set(b);
  return [...new Set(a.filter((f) => inB.has(f)))].sort();
}

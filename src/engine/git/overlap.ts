import type { TaskSummary } from '../store/store';
import { checkObjectId, checkWorktree, rootRepository, type RootRepository } from './record-checks';
import { blobIds, predictMerges, stateCommit, worktreeState, type MergePrediction, type WorktreeState } from './merge-prediction';

/*
 * Overlap before it hurts (issue 25): the files each running or finished-but-unapplied worktree task has changed so
 * far, compared across the tasks of one repository. Two tasks that changed a file in common overlap; git's
 * merge-tree predicts whether applying both will conflict.
 *
 * Kept cheap, since the Tasks view asks on every change and `caesar ps` on every listing:
 *  - a finished task's files come from its result.json (git computed them when it ended): no git process at all
 *    until it shares a file with another task;
 *  - a running task's files come from git (its worktree staged into a private index and written as a tree); the
 *    tree is recomputed only when the task moved on (its event log grew, its status changed), at most every
 *    LIVE_REFRESH_MS however busy its agent, and reused otherwise;
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

/** Two tasks that changed some files in common, and what the comparison found. */
interface Pair {
  a: TaskSide;
  b: TaskSide;
  shared: string[];
  /** The shared files whose contents differ between the two. */
  differing?: string[];
  result?: Omit<TaskOverlap, 'with'>;
}

/** What is kept per pair of states: the differing shared files and git's prediction for them. */
type KnownPrediction = MergePrediction & { files: string[] };

/** The two states by base and tree: the exact contents compared (the same tree on another base is another merge). */
function pairKey({ a, b }: Pair): string {
  return [`${a.base}:${a.state!.tree}`, `${b.base}:${b.state!.tree}`].sort().join(' ');
}

/** The overlap to show, or undefined when no shared file differs. */
function resultOf(known: KnownPrediction): Omit<TaskOverlap, 'with'> | undefined {
  if (known.files.length === 0) return undefined;
  return { files: known.files, prediction: known.conflict ? 'conflict' : 'clean', conflicts: known.conflicts };
}

interface CachedSide {
  key: string;
  side: TaskSide;
  /** When the side was read (Date.now()). */
  at: number;
}

/** A running task's worktree is read again at most this often, however busy its agent (the views refresh anyway). */
export const LIVE_REFRESH_MS = 10_000;

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
 * Computes overlaps of one root's tasks, keeping what it learned between calls: one instance per root of a view (the
 * extension's tree), or a fresh one per command (`caesar ps`). Not safe for concurrent calls on one instance: callers serialize.
 */
export class OverlapTracker {
  private repository: Promise<RootRepository | undefined> | undefined;

  /**
   * `root`: the caesar root whose tasks are compared; only worktrees of its own repository are ever read.
   * `liveRefreshMs`: how long a running task's state is reused although its agent moved on (0: read it again).
   */
  constructor(
    private readonly root: string,
    private readonly options: { liveRefreshMs?: number } = {},
  ) {}

  private readonly sides = new Map<string, CachedSide>();
  /** By the two states' trees: the shared files whose contents differ, and git's prediction for them. */
  private readonly predictions = new Map<string, KnownPrediction>();

  /** Every candidate task's overlaps with the others (tasks without one are absent). */
  async compute(summaries: readonly TaskSummary[]): Promise<Map<string, TaskOverlap[]>> {
    this.repository ??= rootRepository(this.root);
    const repo = await this.repository;
    if (!repo) return new Map();
    const candidates = overlapCandidates(summaries);
    const sides = await Promise.all(candidates.map((s) => this.sideOf(s, repo)));
    this.forgetAllBut(new Set(candidates.map((s) => s.id)));
    const pairs: Pair[] = [];
    for (let i = 0; i < sides.length; i++) {
      for (let j = i + 1; j < sides.length; j++) {
        const [a, b] = [sides[i] as TaskSide, sides[j] as TaskSide];
        const shared = sharedFiles(a.files, b.files);
        if (shared.length) pairs.push({ a, b, shared });
      }
    }
    await this.predictAll(pairs, repo);
    const overlaps = new Map<string, TaskOverlap[]>();
    const add = (side: TaskSide, overlap: TaskOverlap) => overlaps.set(side.summary.id, [...(overlaps.get(side.summary.id) ?? []), overlap]);
    for (const { a, b, result } of pairs) {
      // Undefined: different repositories, or the same content in both (they are not in each other's way).
      if (!result) continue;
      add(a, { with: b.summary.id, ...result });
      add(b, { with: a.summary.id, ...result });
    }
    return overlaps;
  }

  /**
   * Fills each pair's result: a handful of git processes for all of them together, whatever their number — each
   * side's worktree read once, one `cat-file` for the shared files' contents, one commit per side, one `merge-tree
   * --stdin` for every pair not already known — per repository.
   */
  private async predictAll(pairs: Pair[], repo: RootRepository): Promise<void> {
    const involved = [...new Set(pairs.flatMap((p) => [p.a, p.b]))];
    await Promise.all(involved.map((side) => this.ensureState(side, repo).catch((error: Error) => (side.error = error.message))));
    const open: Pair[] = [];
    for (const pair of pairs) {
      const { a, b } = pair;
      if (a.error || b.error) pair.result = { files: pair.shared, prediction: 'unknown', conflicts: [], reason: (a.error ?? b.error) as string };
      else if (a.state?.commonDir !== b.state?.commonDir) pair.result = undefined;
      else if (this.known(pair)) pair.result = resultOf(this.known(pair)!);
      else open.push(pair);
    }
    const byRepository = new Map<string, Pair[]>();
    for (const pair of open) byRepository.set(pair.a.state!.commonDir, [...(byRepository.get(pair.a.state!.commonDir) ?? []), pair]);
    await Promise.all([...byRepository.values()].map((group) => this.predictGroup(group)));
  }

  private async predictGroup(group: Pair[]): Promise<void> {
    const repo = (group[0] as Pair).a.state!.repo;
    try {
      const specs = group.flatMap(({ a, b, shared }) => shared.filter((f) => !f.includes('\n')).flatMap((f) => [`${a.state!.tree}:${f}`, `${b.state!.tree}:${f}`]));
      const blobs = await blobIds(repo, [...new Set(specs)]);
      // A file both changed to the same content is no overlap (a path holding a newline is never taken as the same).
      const same = (a: TaskSide, b: TaskSide, f: string) => !f.includes('\n') && blobs.get(`${a.state!.tree}:${f}`) === blobs.get(`${b.state!.tree}:${f}`);
      for (const pair of group) pair.differing = pair.shared.filter((f) => !same(pair.a, pair.b, f));
      const merging = group.filter((p) => p.differing!.length > 0);
      const sides = [...new Set(merging.flatMap((p) => [p.a, p.b]))];
      await Promise.all(sides.map((side) => this.commitOf(side)));
      const predictions = await predictMerges(repo, merging.map((p) => [p.a.commit!, p.b.commit!] as const));
      for (const pair of group) {
        const at = merging.indexOf(pair);
        const known = { files: pair.differing!, ...(at >= 0 ? (predictions[at] as MergePrediction) : { conflict: false, conflicts: [] }) };
        this.predictions.set(pairKey(pair), known);
        pair.result = resultOf(known);
      }
    } catch (error) {
      for (const pair of group) pair.result = { files: pair.shared, prediction: 'unknown', conflicts: [], reason: (error as Error).message };
    }
  }

  private known(pair: Pair): KnownPrediction | undefined {
    return this.predictions.get(pairKey(pair));
  }

  private async sideOf(summary: TaskSummary, repo: RootRepository): Promise<TaskSide> {
    const key = sideKey(summary);
    const cached = this.sides.get(summary.id);
    if (cached && (cached.key === key || this.stillFresh(cached, key))) {
      cached.side.summary = summary;
      return cached.side;
    }
    const side: TaskSide = { summary, base: '', files: [] };
    try {
      side.base = checkObjectId(summary.state.base_ref);
      if (finished(summary) && summary.result?.diff) {
        side.files = summary.result.diff.files.flatMap((f) => (f.old_path ? [f.path, f.old_path] : [f.path]));
      } else {
        await this.ensureState(side, repo);
        side.files = side.state!.files;
      }
    } catch (error) {
      side.error = (error as Error).message;
    }
    this.sides.set(summary.id, { key, side, at: Date.now() });
    return side;
  }

  /** A running task that moved on since it was read, but read recently enough: its state stands a little longer. */
  private stillFresh(cached: CachedSide, key: string): boolean {
    const live = cached.key.startsWith('live:') && key.startsWith('live:');
    return live && Date.now() - cached.at < (this.options.liveRefreshMs ?? LIVE_REFRESH_MS);
  }

  private async commitOf(side: TaskSide): Promise<string> {
    const state = side.state as WorktreeState;
    side.commit ??= await stateCommit(state.repo, state.tree, side.base);
    return side.commit;
  }

  /** A finished task's worktree is read only once it shares a file with another task. */
  private async ensureState(side: TaskSide, repo: RootRepository): Promise<void> {
    if (side.error) throw new Error(side.error);
    if (side.state) return;
    const { state } = side.summary;
    // A record may come from a cloned repository: its worktree is read only when it is one of this repository's
    // caesar worktrees (record-checks), never a folder, or another repository, the record chose.
    const worktree = await checkWorktree(repo, state.worktree);
    side.state = await worktreeState(worktree, side.base, state.excluded_paths);
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

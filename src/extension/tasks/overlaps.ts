import * as vscode from 'vscode';
import { Disposable } from '../../base/disposable';
import { Debouncer, Emitter, type Event } from '../../base/event';
import { LIVE_REFRESH_MS, OverlapTracker, isActive, type TaskOverlap } from '../../engine/tasks';
import type { LiveTasks } from './liveTasks';

/** Changes come in bursts (a running agent's events): one computation per burst. */
const SETTLE_MS = 400;

/**
 * The overlaps of the window's tasks (issue 25), for the Tasks tree: recomputed off the tree's path after the task
 * list changes (never before the first paint: the tree reads `of()`, which answers from what is known so far), one
 * root at a time, one computation at a time. The engine's tracker caches per task and per pair of states, so a
 * change to one task costs that task's git processes, not everyone's. Nothing is computed in an untrusted workspace
 * (it runs git, which Caesar never does there); granting trust starts it.
 */
export class TaskOverlaps extends Disposable {
  private readonly trackers = new Map<string, OverlapTracker>();
  private current = new Map<string, TaskOverlap[]>();
  private running: Promise<void> = Promise.resolve();
  private readonly changed = this._register(new Emitter<string[]>());
  /** Fires with the tasks whose overlaps changed. */
  readonly onDidChange: Event<string[]> = this.changed.event;
  private readonly debouncer: Debouncer<string>;

  constructor(
    private readonly tasks: LiveTasks,
    private readonly log: vscode.LogOutputChannel,
  ) {
    super();
    this.debouncer = this._register(new Debouncer<string>(SETTLE_MS, (roots) => void this.recompute(roots)));
    this._register(tasks.onDidChange((ids) => ids.forEach((id) => this.debouncer.add(tasks.rootOf(id)))));
    const everyRoot = () => void tasks.ready().then(() => tasks.roots.forEach((r) => this.debouncer.add(r.root)));
    everyRoot();
    this._register(vscode.workspace.onDidGrantWorkspaceTrust(everyRoot));
    // A running agent's edits come without a change of the task list when its shell writes (no file_changed event),
    // and the tracker reads a busy task at most every LIVE_REFRESH_MS: looked at again that often while tasks run.
    const clock = setInterval(() => {
      for (const r of tasks.roots) if (tasks.list(r.root).some((s) => isActive(s.observed))) this.debouncer.add(r.root);
    }, LIVE_REFRESH_MS);
    this._register({ dispose: () => clearInterval(clock) });
  }

  /** What is known of a task's overlaps now (empty until the first computation is in). */
  of(id: string): TaskOverlap[] {
    return this.current.get(id) ?? [];
  }

  /** Resolves once every computation asked for so far has finished (the tests' seam; the tree never waits). */
  settled(): Promise<void> {
    this.debouncer.flushNow();
    return this.running;
  }

  private recompute(roots: string[]): Promise<void> {
    if (!vscode.workspace.isTrusted) return this.running;
    this.running = this.running.then(async () => {
      for (const root of roots) await this.recomputeRoot(root);
    });
    return this.running;
  }

  private async recomputeRoot(root: string): Promise<void> {
    let tracker = this.trackers.get(root);
    if (!tracker) this.trackers.set(root, (tracker = new OverlapTracker(root)));
    const listed = this.tasks.list(root);
    const found = await tracker.compute(listed).catch((err: Error) => {
      this.log.warn(`computing the overlaps of the tasks in ${root}: ${err.message}`);
      return new Map<string, TaskOverlap[]>();
    });
    const next = new Map([...this.current].filter(([id]) => this.tasks.rootOf(id) !== root));
    for (const [id, overlaps] of found) next.set(id, overlaps);
    const touched = new Set([...this.current.keys(), ...next.keys()].filter((id) => JSON.stringify(this.current.get(id)) !== JSON.stringify(next.get(id))));
    this.current = next;
    if (touched.size) this.changed.fire([...touched]);
  }
}

/** ` · overlaps codex (will conflict)`: the description's part; the names come from the caller. */
export function overlapDescription(overlaps: readonly TaskOverlap[], nameOf: (id: string) => string): string {
  if (overlaps.length === 0) return '';
  const conflicting = overlaps.filter((o) => o.prediction === 'conflict');
  const shown = conflicting.length ? conflicting : overlaps;
  const names = shown.slice(0, 2).map((o) => nameOf(o.with)).join(', ') + (shown.length > 2 ? ` +${shown.length - 2}` : '');
  if (conflicting.length) return `conflicts with ${names}`;
  return overlaps.every((o) => o.prediction === 'clean') ? `overlaps ${names} (merges cleanly)` : `overlaps ${names}`;
}

/** One tooltip line per overlapping task: who, which files, and git's prediction. */
export function overlapTooltipLines(overlaps: readonly TaskOverlap[], nameOf: (id: string) => string): string[] {
  return overlaps.map((o) => {
    const files = o.files.slice(0, 5).join(', ') + (o.files.length > 5 ? ` and ${o.files.length - 5} more` : '');
    const verdict = o.prediction === 'conflict' ? `will conflict in ${o.conflicts.join(', ')}` : o.prediction === 'clean' ? 'merges cleanly' : `no prediction: ${o.reason ?? 'unknown'}`;
    return `overlaps ${nameOf(o.with)} (${o.with}) on ${files}: ${verdict}`;
  });
}

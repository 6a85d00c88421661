import type * as vscode from 'vscode';
import { Disposable, toDisposable, type IDisposable } from '../../base/disposable';
import { Emitter, type Event } from '../../base/event';
import { taskPaths, type ProtocolEvent } from '../../protocol';
import { lastLogLines, sortForDisplay, type TaskStore, type TaskSummary } from '../../engine/tasks';
import { TaskActivity } from './activity';

/** The longest the tree waits for a task's events to be read before showing what it has (they still stream in). */
const ACTIVITY_LOAD_LIMIT_MS = 2000;

/** One workspace folder's tasks: its caesar root, the folder's name, the store reading `<root>/.caesar/tasks`. */
export interface TaskRoot {
  readonly root: string;
  readonly name: string;
  readonly store: TaskStore;
}

/** A batch of a task's events, as its one follower read them (the timeline may subscribe instead of following again). */
export interface EventsRead {
  taskId: string;
  events: readonly ProtocolEvent[];
  /** Byte offset in events.jsonl just after the batch. */
  nextOffset: number;
}

interface ActivityEntry {
  activity: TaskActivity;
  follower?: IDisposable;
  /** Resolves once the events written before the first use have been folded in. */
  loaded: Promise<TaskActivity>;
  markLoaded(): void;
}

/**
 * The extension's one source of task summaries, for every folder of the window: each root's store watches its
 * tasks folder (one watcher per root, coalesced once, in the engine) and a changed task is re-read through the store.
 * Each task's events are followed by one follower at most (started when someone needs them, stopped when the task is
 * over and read), folded for the tree and offered raw through onDidReadEvents. Nothing here polls.
 */
export class LiveTasks extends Disposable {
  private readonly summaries = new Map<string, TaskSummary>();
  private readonly rootById = new Map<string, TaskRoot>();
  private readonly activities = new Map<string, ActivityEntry>();
  private readonly changed = this._register(new Emitter<string[]>());
  private readonly activityChanged = this._register(new Emitter<string>());
  private readonly eventsRead = this._register(new Emitter<EventsRead>());
  private readonly loaded: Promise<void>;

  /** Fires with the ids whose summary changed (added, updated or removed). */
  readonly onDidChange: Event<string[]> = this.changed.event;
  /** Fires with a task id when new events were folded into its activity (tool calls, files, errors). */
  readonly onDidChangeActivity: Event<string> = this.activityChanged.event;
  /** Every batch of events the follower of a task read, in order. */
  readonly onDidReadEvents: Event<EventsRead> = this.eventsRead.event;

  constructor(
    readonly roots: readonly TaskRoot[],
    private readonly log: vscode.LogOutputChannel,
  ) {
    super();
    if (roots.length === 0) throw new Error('LiveTasks needs at least one root');
    for (const root of roots) this._register(root.store.watch((ids) => void this.refreshAndFire(root, ids)));
    this._register(toDisposable(() => this.releaseAll()));
    this.loaded = this.reloadAll();
  }

  /** The first folder's store (a single-folder window's only one). */
  get store(): TaskStore {
    return this.roots[0]!.store;
  }

  /** The root a task lives in (the first folder's for an unknown id). */
  taskRootOf(id: string): TaskRoot {
    return this.rootById.get(id) ?? this.roots[0]!;
  }

  storeOf(id: string): TaskStore {
    return this.taskRootOf(id).store;
  }

  rootOf(id: string): string {
    return this.taskRootOf(id).root;
  }

  /** Resolves when the first listing is in. */
  ready(): Promise<void> {
    return this.loaded;
  }

  /** Summaries in display order (needing input, running, pending, then recent), of every root or of one. */
  list(root?: string): TaskSummary[] {
    const all = [...this.summaries.values()];
    return sortForDisplay(root === undefined ? all : all.filter((s) => this.rootOf(s.id) === root));
  }

  get(id: string): TaskSummary | undefined {
    return this.summaries.get(id);
  }

  /** The listed tasks a task delegated (its `parent_task_id`, in its own root), in display order. */
  subtasksOf(id: string): TaskSummary[] {
    const root = this.rootOf(id);
    return this.list(root).filter((s) => s.state.parent_task_id === id);
  }

  /** The parent a task is shown under: its `parent_task_id` when that task is listed in the same root, else none. */
  parentOf(id: string): string | undefined {
    const parent = this.summaries.get(id)?.state.parent_task_id;
    return parent && parent !== id && this.summaries.has(parent) && this.rootOf(parent) === this.rootOf(id) ? parent : undefined;
  }

  /**
   * The folded event stream of a task, resolved once every event written before this first use has been read; then
   * followed live while the task is active. Started on first use (a tree node expanded, a running task shown) so
   * finished tasks nobody looks at cost nothing. The tree awaits it: answering VS Code with a half-read stream (for a
   * task nobody followed yet, no tool call at all) and counting on the refresh that follows left expanded tasks
   * showing only their changed files whenever VS Code did not ask again.
   */
  activity(id: string): Promise<TaskActivity> {
    return (this.activities.get(id) ?? this.startFollowing(id)).loaded;
  }

  private startFollowing(id: string): ActivityEntry {
    const activity = new TaskActivity();
    // Where the summary saw the stream end (after its last complete line): read up to there, the activity is current.
    const readTo = this.summaries.get(id)?.eventsBytes ?? 0;
    let markLoaded!: () => void;
    const loaded = new Promise<void>((resolve) => (markLoaded = resolve));
    // Unreadable last lines report no events, so their offset is never seen: do not hold the view for them.
    const limit = setTimeout(markLoaded, ACTIVITY_LOAD_LIMIT_MS);
    void loaded.then(() => clearTimeout(limit));
    if (readTo === 0) markLoaded();
    const entry: ActivityEntry = { activity, loaded: loaded.then(() => activity), markLoaded };
    this.activities.set(id, entry);
    entry.follower = this.storeOf(id).follow(
      id,
      0,
      (events, nextOffset) => {
        activity.apply(events);
        if (nextOffset >= readTo) markLoaded();
        this.eventsRead.fire({ taskId: id, events, nextOffset });
        this.activityChanged.fire(id);
        this.stopFollowingIfOver(id);
      },
      (_line, error) => this.log.warn(`task ${id}: unreadable event line: ${error}`),
    );
    return entry;
  }

  /** Re-reads everything (first load, and the "Refresh" command after e.g. a dropped watcher). */
  async reloadAll(): Promise<void> {
    const started = Date.now();
    const ids = new Set<string>();
    await Promise.all(
      this.roots.map(async (root) => {
        try {
          const all = await root.store.list();
          const seen = new Set(all.map((s) => s.id));
          for (const [id, owner] of [...this.rootById]) {
            if (owner !== root || seen.has(id)) continue;
            this.forget(id);
            ids.add(id);
          }
          for (const summary of all) this.remember(root, summary);
          for (const id of seen) ids.add(id);
        } catch (err) {
          this.log.error(`cannot list tasks in ${root.store.tasksDir}: ${(err as Error).message}`);
        }
      }),
    );
    this.log.debug(`listed ${this.summaries.size} task(s) in ${Date.now() - started} ms`);
    this.changed.fire([...ids]);
  }

  private async refreshAndFire(root: TaskRoot, ids: string[]): Promise<void> {
    await Promise.all(ids.map((id) => this.refresh(root, id)));
    this.changed.fire(ids);
  }

  private async refresh(root: TaskRoot, id: string): Promise<void> {
    try {
      const summary = await root.store.summary(id);
      if (summary) {
        const before = this.summaries.get(id);
        this.remember(root, summary);
        if (!before) this.log.info(`task ${id} appeared (${summary.state.agent}: ${summary.state.status})`);
        else if (before.observed !== summary.observed) {
          this.log.info(`task ${id}: ${before.observed} -> ${summary.observed}`);
          if (['failed', 'lost', 'timed_out'].includes(summary.observed)) void this.logEngineDiagnostics(root, id, summary.state.error);
        }
        this.stopFollowingIfOver(id);
      } else if (this.rootById.get(id) === root) {
        this.forget(id);
      }
    } catch (err) {
      // A state.json mid-write cannot happen (atomic renames); anything else is worth a line in the log.
      this.log.warn(`task ${id}: cannot read its state: ${(err as Error).message}`);
    }
  }

  private remember(root: TaskRoot, summary: TaskSummary): void {
    this.summaries.set(summary.id, summary);
    this.rootById.set(summary.id, root);
  }

  /**
   * The engine's side of a failure: the orchestration error and the end of the supervisor's own log
   * (supervisor.log), so "why did it fail" is answered in the Caesar output channel without opening task files.
   */
  private async logEngineDiagnostics(root: TaskRoot, id: string, error: string | undefined): Promise<void> {
    if (error) this.log.error(`task ${id}: ${error}`);
    try {
      // The end of the file only, regular files only, never blocking (a FIFO planted there must not hang the host).
      const lines = await lastLogLines(taskPaths(root.root, id).supervisorLog, 20);
      if (lines.length && lines[0]) this.log.error(`task ${id}: supervisor.log (last ${lines.length} lines):\n${lines.join('\n')}`);
    } catch {
      /* no supervisor log: nothing more to say */
    }
  }

  /** A finished task's events never change again: close its follower once everything was read. */
  private stopFollowingIfOver(id: string): void {
    const entry = this.activities.get(id);
    const summary = this.summaries.get(id);
    if (!entry?.follower || !summary) return;
    const over = summary.observed !== 'running' && summary.observed !== 'pending';
    if (over && entry.activity.finished) {
      entry.follower.dispose();
      entry.follower = undefined;
    }
  }

  private forget(id: string): void {
    this.summaries.delete(id);
    this.rootById.delete(id);
    this.release(this.activities.get(id));
    this.activities.delete(id);
    this.log.info(`task ${id} is gone`);
  }

  /** Stops following, and lets whoever awaits the first read go on with what was read (the task is gone). */
  private release(entry: ActivityEntry | undefined): void {
    entry?.follower?.dispose();
    entry?.markLoaded();
  }

  private releaseAll(): void {
    for (const entry of this.activities.values()) this.release(entry);
    this.activities.clear();
  }
}

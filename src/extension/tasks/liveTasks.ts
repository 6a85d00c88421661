import * as path from 'node:path';
import * as vscode from 'vscode';
import { isSafeId, taskPaths } from '../../protocol';
import { lastLogLines } from '../../engine/report';
import { sortForDisplay, type TaskStore, type TaskSummary } from '../../engine/store';
import { TaskActivity } from './activity';

/** The longest the tree waits for a task's events to be read before showing what it has (they still stream in). */
const ACTIVITY_LOAD_LIMIT_MS = 2000;

interface ActivityEntry {
  activity: TaskActivity;
  follower?: vscode.Disposable;
  /** Resolves once the events written before the first use have been folded in. */
  loaded: Promise<TaskActivity>;
  markLoaded(): void;
}

/**
 * The extension's live view of `.caesar/tasks/`: summaries read through the store, refreshed per task when VS Code's
 * file watcher reports a change (it also works under Remote, where the extension host runs next to the files).
 * Nothing here polls; the store is the only reader of task files, and the caches below are all this keeps.
 */
export class LiveTasks implements vscode.Disposable {
  private readonly summaries = new Map<string, TaskSummary>();
  private readonly activities = new Map<string, ActivityEntry>();
  private readonly changed = new vscode.EventEmitter<string[]>();
  private readonly activityChanged = new vscode.EventEmitter<string>();
  private readonly disposables: vscode.Disposable[] = [];
  private readonly dirty = new Set<string>();
  private flushTimer: NodeJS.Timeout | undefined;
  private loaded: Promise<void>;

  /** Fires with the ids whose summary changed (added, updated or removed). */
  readonly onDidChange = this.changed.event;
  /** Fires with a task id when new events were folded into its activity (tool calls, files, errors). */
  readonly onDidChangeActivity = this.activityChanged.event;

  constructor(
    readonly store: TaskStore,
    private readonly log: vscode.LogOutputChannel,
  ) {
    const pattern = new vscode.RelativePattern(vscode.Uri.file(store.tasksDir), '**');
    const watcher = vscode.workspace.createFileSystemWatcher(pattern);
    const onUri = (uri: vscode.Uri) => this.onFileEvent(uri);
    this.disposables.push(watcher, watcher.onDidCreate(onUri), watcher.onDidChange(onUri), watcher.onDidDelete(onUri));
    // The tasks folder may not exist yet: watch the root's .caesar for its creation, then list everything.
    const parentWatcher = vscode.workspace.createFileSystemWatcher(
      new vscode.RelativePattern(vscode.Uri.file(store.root), '.caesar/{tasks,tasks/*}'),
    );
    this.disposables.push(parentWatcher, parentWatcher.onDidCreate((uri) => this.onFileEvent(uri)));
    // VS Code's watcher batches events (about a second in code-server); the store's fs.watch on the task folders
    // reports within milliseconds. Both feed the same coalesced refresh, so either one alone keeps the view right.
    this.disposables.push(store.watch((ids) => ids.forEach((id) => this.markDirty(id))));
    this.loaded = this.reloadAll();
  }

  /** Resolves when the first listing is in. */
  ready(): Promise<void> {
    return this.loaded;
  }

  /** Summaries in display order: needing input, running, pending, then recent. */
  list(): TaskSummary[] {
    return sortForDisplay([...this.summaries.values()]);
  }

  get(id: string): TaskSummary | undefined {
    return this.summaries.get(id);
  }

  /**
   * The folded event stream of a task, resolved once every event written before this first use has been read; then
   * followed live while the task is active. Started on first use (a tree node expanded, a running task shown) so
   * finished tasks nobody looks at cost nothing. The tree awaits it: answering VS Code with a half-read stream (for a
   * task nobody followed yet, no tool call at all) and counting on the refresh that follows left expanded tasks
   * showing only their changed files whenever VS Code did not ask again.
   */
  activity(id: string): Promise<TaskActivity> {
    let entry = this.activities.get(id);
    if (!entry) {
      const activity = new TaskActivity();
      // Where the summary saw the stream end (after its last complete line): read up to there, the activity is current.
      const readTo = this.summaries.get(id)?.eventsBytes ?? 0;
      let markLoaded!: () => void;
      const loaded = new Promise<void>((resolve) => (markLoaded = resolve));
      // Unreadable last lines report no events, so their offset is never seen: do not hold the view for them.
      const limit = setTimeout(markLoaded, ACTIVITY_LOAD_LIMIT_MS);
      void loaded.then(() => clearTimeout(limit));
      if (readTo === 0) markLoaded();
      const current: ActivityEntry = { activity, loaded: loaded.then(() => activity), markLoaded };
      this.activities.set(id, current);
      current.follower = this.store.follow(
        id,
        0,
        (events, nextOffset) => {
          activity.apply(events);
          if (nextOffset >= readTo) markLoaded();
          this.activityChanged.fire(id);
          this.stopFollowingIfOver(id);
        },
        (_line, error) => this.log.warn(`task ${id}: unreadable event line: ${error}`),
      );
      entry = current;
    }
    return entry.loaded;
  }

  /** Re-reads everything (first load, and the "Refresh" command after e.g. a dropped watcher). */
  async reloadAll(): Promise<void> {
    const started = Date.now();
    try {
      const all = await this.store.list();
      const seen = new Set(all.map((s) => s.id));
      const gone = [...this.summaries.keys()].filter((id) => !seen.has(id));
      for (const id of gone) this.forget(id);
      for (const summary of all) this.summaries.set(summary.id, summary);
      this.log.debug(`listed ${all.length} task(s) in ${Date.now() - started} ms`);
      this.changed.fire([...seen, ...gone]);
    } catch (err) {
      this.log.error(`cannot list tasks in ${this.store.tasksDir}: ${(err as Error).message}`);
    }
  }

  private onFileEvent(uri: vscode.Uri): void {
    const relative = path.relative(this.store.tasksDir, uri.fsPath);
    if (relative === '' || relative.startsWith('..')) {
      // The tasks folder itself appeared or vanished.
      void this.reloadAll();
      return;
    }
    const id = relative.split(path.sep)[0]!;
    if (!isSafeId(id)) return;
    // events.jsonl appends are the hot path; the follower handles them. They matter for the summary only to update
    // lastEvent (silence, last activity), so they are coalesced like every other change.
    this.markDirty(id);
  }

  private markDirty(id: string): void {
    this.dirty.add(id);
    this.flushTimer ??= setTimeout(() => void this.flush(), 40);
  }

  private async flush(): Promise<void> {
    this.flushTimer = undefined;
    const ids = [...this.dirty];
    this.dirty.clear();
    await Promise.all(ids.map((id) => this.refresh(id)));
    this.changed.fire(ids);
  }

  private async refresh(id: string): Promise<void> {
    try {
      const summary = await this.store.summary(id);
      if (summary) {
        const before = this.summaries.get(id);
        this.summaries.set(id, summary);
        if (!before) this.log.info(`task ${id} appeared (${summary.state.agent}: ${summary.state.status})`);
        else if (before.observed !== summary.observed) {
          this.log.info(`task ${id}: ${before.observed} -> ${summary.observed}`);
          if (['failed', 'lost', 'timed_out'].includes(summary.observed)) void this.logEngineDiagnostics(id, summary.state.error);
        }
        this.stopFollowingIfOver(id);
      } else if (this.summaries.has(id)) {
        this.forget(id);
      }
    } catch (err) {
      // A state.json mid-write cannot happen (atomic renames); anything else is worth a line in the log.
      this.log.warn(`task ${id}: cannot read its state: ${(err as Error).message}`);
    }
  }

  /**
   * The engine's side of a failure: the orchestration error and the end of the supervisor's own log
   * (supervisor.log), so "why did it fail" is answered in the Caesar output channel without opening task files.
   */
  private async logEngineDiagnostics(id: string, error: string | undefined): Promise<void> {
    if (error) this.log.error(`task ${id}: ${error}`);
    try {
      // The end of the file only, regular files only, never blocking (a FIFO planted there must not hang the host).
      const lines = await lastLogLines(taskPaths(this.store.root, id).supervisorLog, 20);
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
    this.release(this.activities.get(id));
    this.activities.delete(id);
    this.log.info(`task ${id} is gone`);
  }

  /** Stops following, and lets whoever awaits the first read go on with what was read (the task is gone). */
  private release(entry: ActivityEntry | undefined): void {
    entry?.follower?.dispose();
    entry?.markLoaded();
  }

  dispose(): void {
    if (this.flushTimer) clearTimeout(this.flushTimer);
    for (const entry of this.activities.values()) this.release(entry);
    this.activities.clear();
    for (const d of this.disposables) d.dispose();
    this.changed.dispose();
    this.activityChanged.dispose();
  }
}

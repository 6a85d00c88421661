import { randomBytes } from 'node:crypto';
import * as vscode from 'vscode';
import { taskPaths } from '../../protocol';
import type { TaskSummary } from '../../engine/tasks';
import { taskLifecycle } from '../../common/lifecycle';
import { nextActions, offers } from '../../common/next-actions';
import type { LiveTasks } from '../tasks/liveTasks';
import { openChange } from '../review/openChange';
import { headerButtons, lifecycleActionOf, type HostToWebview, type TimelineAction, type TimelineFilter, type TimelineStats, type TimelineTaskInfo, type WebviewToHost } from './messages';
import { TimelineSource } from './timeline-source';

export const TIMELINE_VIEW_TYPE = 'caesar.timeline';
/** The header actions a webview may ask for (its messages are checked: only these commands run). */
const TIMELINE_ACTIONS: readonly TimelineAction[] = ['reviewAll', 'apply', 'applySelected', 'discard'];
/** How often, at most, the webview hears of new rows while the backlog is indexed, and once it is (live appends). */
const PUSH_BACKLOG_MS = 100;
const PUSH_LIVE_MS = 16;
/** A window never asks for more rows than this (a screenful is ~40). */
const MAX_WINDOW = 500;
/** A window this close to the end is re-sent on appends even when not following (rows in it may have ended). */
const NEAR_END_ROWS = 200;

export interface TimelineTiming {
  /** From the open request to the webview's script asking for its data (the webview's own load). */
  openToReadyMs?: number;
  /** From the open request to the host posting the first rows. */
  openToFirstRowsPostedMs?: number;
  /** From the open request to the webview's first rendered rows. */
  openToFirstRowsMs?: number;
  /** From the open request to the webview reporting the whole backlog indexed and its rows rendered. */
  openToCaughtUpMs?: number;
  /** From the open request to the host having indexed the file's backlog. */
  openToIndexedMs?: number;
}

/** What the webview shows: the query it named by `generation` and the window it last asked for. */
interface ShownWindow {
  generation: number;
  start: number;
  count: number;
  follow: boolean;
}

/**
 * One webview panel per task. The task's events.jsonl is followed once, from a byte offset, and indexed into rows in
 * the extension host (TimelineSource); the webview asks for the window it shows and receives only those rows, so
 * what crosses the channel and what the webview holds stays a screenful whatever the event count. When the webview
 * is recreated (hidden then shown, window reloaded) it asks again with `ready` and the index is reused.
 *
 * A panel opened as a preview, and not yet worked in, is taken over by the next task opened (retarget), as VS Code
 * reuses a preview editor: the page stays loaded and only its data changes, so that second open costs a message and a
 * window of rows instead of a new webview (~0.7 s of code-server loading a page, issue 14).
 */
export class TimelinePanel implements vscode.Disposable {
  private readonly disposables: vscode.Disposable[] = [];
  private lastStats: TimelineStats | undefined;
  private readonly statsWaiters: { predicate: (s: TimelineStats) => boolean; resolve: (s: TimelineStats) => void }[] = [];
  private openedAt = Date.now();
  timing: TimelineTiming = {};
  private source: TimelineSource;
  private shown: ShownWindow = { generation: 0, start: 0, count: 0, follow: true };
  private pushTimer: NodeJS.Timeout | undefined;
  private disposed = false;
  /** After a retarget, until the page says `ready`: what it sends meanwhile is about the previous task. */
  private awaitingReady = false;
  /** The user worked in the panel: no other task takes it over. */
  private kept = false;

  constructor(
    private shownTaskId: string,
    readonly panel: vscode.WebviewPanel,
    private readonly tasks: LiveTasks,
    private readonly extensionUri: vscode.Uri,
    private readonly log: vscode.LogOutputChannel,
    private readonly onDispose: () => void,
    /** Opened as a preview: the next task opened may take it over until the user works in it. */
    private readonly preview = false,
  ) {
    panel.webview.options = { enableScripts: true, localResourceRoots: [vscode.Uri.joinPath(extensionUri, 'dist', 'webview')] };
    panel.iconPath = vscode.Uri.joinPath(extensionUri, 'media', 'caesar.svg');
    panel.webview.html = this.html();
    // Indexing starts with the panel, while the webview loads its script.
    this.source = this.followEvents();
    this.disposables.push(
      panel.webview.onDidReceiveMessage((m: WebviewToHost) => this.onMessage(m)),
      tasks.onDidChange((ids) => {
        if (ids.includes(this.taskId)) this.sendTask();
      }),
      panel.onDidDispose(() => this.dispose()),
    );
  }

  /** The task shown (it changes when a preview is taken over). */
  get taskId(): string {
    return this.shownTaskId;
  }

  /** True while the next task opened may take this panel over. */
  get isPreview(): boolean {
    return this.preview && !this.kept && !this.disposed;
  }

  /**
   * Shows another task in this panel: its events are indexed instead, and the page forgets what it showed and asks
   * again. Timing starts over, so `timing` measures this open.
   */
  retarget(taskId: string, title: string): void {
    this.source.dispose();
    if (this.pushTimer) clearTimeout(this.pushTimer);
    this.pushTimer = undefined;
    this.shownTaskId = taskId;
    this.openedAt = Date.now();
    this.timing = {};
    this.lastStats = undefined;
    this.statsWaiters.length = 0; // they waited for the previous task; their callers' own timeouts end them
    this.shown = { generation: 0, start: 0, count: 0, follow: true };
    this.awaitingReady = true;
    this.panel.title = title;
    this.source = this.followEvents();
    // A hidden panel's page is gone (and would miss the message): it loads again, for this task, when shown.
    if (this.panel.visible) this.post({ type: 'retarget', taskId });
    else this.panel.webview.html = this.html();
  }

  private followEvents(): TimelineSource {
    const taskId = this.taskId;
    const source = new TimelineSource(taskPaths(this.tasks.rootOf(taskId), taskId).events, {
      onRows: () => this.schedulePush(),
      onBadLine: (error) => {
        this.log.warn(`timeline ${taskId}: unreadable event line: ${error}`);
        this.schedulePush();
      },
      onReset: () => this.log.info(`timeline ${taskId}: events.jsonl was rewritten; indexing it again`),
    });
    source.start();
    return source;
  }

  get stats(): TimelineStats | undefined {
    return this.lastStats;
  }

  /** Resolves with the first stats report that satisfies the predicate (tests and measurements wait on this). */
  waitForStats(predicate: (s: TimelineStats) => boolean): Promise<TimelineStats> {
    if (this.lastStats && predicate(this.lastStats)) return Promise.resolve(this.lastStats);
    return new Promise((resolve) => this.statsWaiters.push({ predicate, resolve }));
  }

  reveal(): void {
    this.panel.reveal();
  }

  /** Types a search and picks a filter in the page's toolbar (the page then asks for the matching rows). */
  search(text: string, filter: TimelineFilter): void {
    this.post({ type: 'search', text, filter });
  }

  /** Whether the task's lifecycle offers the header action now. */
  private offersNow(action: TimelineAction): boolean {
    const summary = this.tasks.get(this.taskId);
    return !!summary && offers(nextActions(taskLifecycle(summary)), lifecycleActionOf(action));
  }

  private onMessage(message: WebviewToHost): void {
    if (message.type === 'keep') {
      this.kept = true;
      return;
    }
    // Sent by the page before it learnt of a retarget: about the previous task (an action on it must not hit this one).
    if (this.awaitingReady && message.type !== 'ready') return;
    switch (message.type) {
      case 'ready':
        this.awaitingReady = false;
        this.timing.openToReadyMs ??= Date.now() - this.openedAt;
        // A new webview (first load, or recreated): it starts on every row, following the end.
        this.shown = { generation: 0, start: 0, count: 0, follow: true };
        void this.source.setQuery({ text: '', types: [] });
        this.sendTask();
        this.post({ type: 'status', status: this.source.status });
        break;
      case 'window':
        if (message.generation !== this.shown.generation) return; // asked for a query that has been replaced
        this.shown = { generation: message.generation, start: message.start, count: clampCount(message.count), follow: message.follow };
        void this.sendWindow();
        break;
      case 'query':
        void this.runQuery(message);
        break;
      case 'detail': {
        const source = this.source;
        void source.detail(message.index).then(
          (text) => source === this.source && this.post({ type: 'detail', index: message.index, text }),
          (err: Error) => this.log.warn(`timeline ${this.taskId}: reading row ${message.index}: ${err.message}`),
        );
        break;
      }
      case 'stats':
        this.onStats(message.stats);
        break;
      case 'openFile':
        void openChange(this.tasks, this.taskId, message.path).catch((err: Error) =>
          vscode.window.showErrorMessage(`Caesar: cannot open ${message.path}: ${err.message}`),
        );
        break;
      case 'action':
        // Only what the task's lifecycle still offers: the page may have been drawn before the records changed.
        if (TIMELINE_ACTIONS.includes(message.action) && this.offersNow(message.action)) void vscode.commands.executeCommand(`caesar.${message.action}`, this.taskId);
        break;
    }
  }

  private async runQuery(message: Extract<WebviewToHost, { type: 'query' }>): Promise<void> {
    this.shown = { generation: message.generation, start: 0, count: clampCount(message.count), follow: message.follow };
    const source = this.source;
    const current = await source.setQuery({ text: String(message.query.text ?? ''), types: [...(message.query.types ?? [])] });
    if (current && source === this.source && message.generation === this.shown.generation) await this.sendWindow();
  }

  /** Sends the rows of the shown window (the last rows when following). */
  private async sendWindow(): Promise<void> {
    const { generation, count, follow } = this.shown;
    // A retarget while the rows are read replaces the source: rows of the previous task are never sent.
    const source = this.source;
    const start = follow ? source.total - count : this.shown.start;
    // Taken before the read: the rows sent hold at least the events this status counts.
    const status = source.status;
    try {
      const window = await source.window(start, count);
      if (source !== this.source || generation !== this.shown.generation) return;
      if (window.rows.length) this.timing.openToFirstRowsPostedMs ??= Date.now() - this.openedAt;
      this.post({ type: 'rows', generation, start: window.start, total: window.total, rows: window.rows, follow, status });
    } catch (err) {
      this.log.warn(`timeline ${this.taskId}: reading rows: ${(err as Error).message}`);
    }
  }

  /** New rows: the status, and the window when the webview follows the end or shows rows near it. Throttled. */
  private schedulePush(): void {
    const caughtUp = this.source.status.caughtUp;
    if (caughtUp && this.timing.openToIndexedMs === undefined) {
      this.timing.openToIndexedMs = Date.now() - this.openedAt;
      this.log.info(`timeline ${this.taskId}: ${this.source.status.events} events indexed in ${this.timing.openToIndexedMs} ms`);
    }
    if (this.pushTimer || this.disposed) return;
    this.pushTimer = setTimeout(() => {
      this.pushTimer = undefined;
      this.post({ type: 'status', status: this.source.status });
      const { start, count, follow } = this.shown;
      if (count > 0 && (follow || start + count + NEAR_END_ROWS >= this.source.total)) void this.sendWindow();
    }, caughtUp ? PUSH_LIVE_MS : PUSH_BACKLOG_MS);
  }

  private onStats(stats: TimelineStats): void {
    this.lastStats = stats;
    if (stats.rendered > 0 && this.timing.openToFirstRowsMs === undefined) this.timing.openToFirstRowsMs = Date.now() - this.openedAt;
    if (stats.caughtUp && stats.rendered > 0 && this.timing.openToCaughtUpMs === undefined) {
      this.timing.openToCaughtUpMs = Date.now() - this.openedAt;
      this.log.info(`timeline ${this.taskId}: ${stats.received} events, first rows in ${this.timing.openToFirstRowsMs} ms`);
    }
    for (let i = this.statsWaiters.length - 1; i >= 0; i--) {
      const waiter = this.statsWaiters[i]!;
      if (waiter.predicate(stats)) {
        this.statsWaiters.splice(i, 1);
        waiter.resolve(stats);
      }
    }
  }

  private post(message: HostToWebview): void {
    if (!this.disposed) void this.panel.webview.postMessage(message);
  }

  private sendTask(): void {
    const summary = this.tasks.get(this.taskId);
    if (summary) this.post({ type: 'task', task: taskInfo(summary) });
  }

  private html(): string {
    const webview = this.panel.webview;
    const nonce = randomBytes(16).toString('base64');
    const asset = (name: string) => webview.asWebviewUri(vscode.Uri.joinPath(this.extensionUri, 'dist', 'webview', name)).toString();
    const csp = [
      "default-src 'none'",
      `style-src ${webview.cspSource} 'nonce-${nonce}'`,
      `font-src ${webview.cspSource}`,
      `img-src ${webview.cspSource}`,
      `script-src 'nonce-${nonce}'`,
    ].join('; ');
    return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link rel="stylesheet" href="${asset('timeline.css')}" nonce="${nonce}">
<title>Caesar timeline</title>
</head>
<body data-task-id="${this.taskId}">
<div id="app" aria-busy="true"></div>
<script nonce="${nonce}" src="${asset('timeline.js')}"></script>
</body>
</html>`;
  }

  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    if (this.pushTimer) clearTimeout(this.pushTimer);
    this.source.dispose();
    for (const d of this.disposables) d.dispose();
    this.panel.dispose();
    this.onDispose();
  }
}

function clampCount(count: unknown): number {
  return typeof count === 'number' && Number.isFinite(count) ? Math.max(0, Math.min(MAX_WINDOW, Math.floor(count))) : 0;
}

export function taskInfo(summary: TaskSummary): TimelineTaskInfo {
  const { state, result } = summary;
  const life = taskLifecycle(summary);
  const actions = nextActions(life);
  return {
    lifecycle: { phase: life.phase, label: life.label },
    actions,
    buttons: headerButtons(actions),
    id: summary.id,
    agent: state.agent,
    objective: state.objective,
    status: summary.observed,
    phase: state.phase,
    createdAt: state.created_at,
    startedAt: state.started_at,
    endedAt: state.ended_at,
    error: state.error,
    usage: result?.usage ?? state.usage,
    report: result?.report,
    reportSource: result?.report_source,
    files: result?.diff?.files.map((f) => ({ path: f.path, action: f.action, additions: f.additions, deletions: f.deletions, binary: f.binary })),
    review: life.decision,
    worktreeGone: !!summary.discarded,
  };
}

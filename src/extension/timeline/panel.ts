import { randomBytes } from 'node:crypto';
import * as vscode from 'vscode';
import type { ProtocolEvent } from '../../protocol';
import type { TaskSummary } from '../../engine/store';
import type { LiveTasks } from '../tasks/liveTasks';
import { openChange } from '../tasks/review';
import type { HostToWebview, TimelineAction, TimelineStats, TimelineTaskInfo, WebviewToHost } from './messages';

export const TIMELINE_VIEW_TYPE = 'caesar.timeline';
/** Events per message at most (a follower chunk of 256 KB holds ~1-2k): bounds one message to a few MB. */
const BATCH = 20_000;
/** The header actions a webview may ask for (its messages are checked: only these commands run). */
const TIMELINE_ACTIONS: readonly TimelineAction[] = ['reviewAll', 'apply', 'applySelected', 'discard'];
const encoder = new TextEncoder();

export interface TimelineTiming {
  /** From the open request to the webview reporting the whole backlog received and its first screen rendered. */
  openToCaughtUpMs?: number;
  /** From the open request to the webview's first rendered rows. */
  openToFirstRowsMs?: number;
  /** From the webview's `ready` to the host having read and posted the whole backlog. */
  readyToBacklogPostedMs?: number;
}

/**
 * One webview panel per task, streaming its events.jsonl into the timeline. The panel keeps no copy of the events:
 * it follows the file through the store and forwards batches; when the webview is recreated (hidden then shown,
 * window reloaded) it asks again with `ready` and the stream restarts from the beginning.
 */
export class TimelinePanel implements vscode.Disposable {
  private follower: vscode.Disposable | undefined;
  private readonly disposables: vscode.Disposable[] = [];
  private lastStats: TimelineStats | undefined;
  private readonly statsWaiters: { predicate: (s: TimelineStats) => boolean; resolve: (s: TimelineStats) => void }[] = [];
  private readonly openedAt = Date.now();
  readonly timing: TimelineTiming = {};
  private badLines = 0;
  private disposed = false;

  constructor(
    readonly taskId: string,
    readonly panel: vscode.WebviewPanel,
    private readonly tasks: LiveTasks,
    private readonly extensionUri: vscode.Uri,
    private readonly log: vscode.LogOutputChannel,
    private readonly onDispose: () => void,
  ) {
    panel.webview.options = { enableScripts: true, localResourceRoots: [vscode.Uri.joinPath(extensionUri, 'dist', 'webview')] };
    panel.iconPath = vscode.Uri.joinPath(extensionUri, 'media', 'caesar.svg');
    panel.webview.html = this.html();
    this.disposables.push(
      panel.webview.onDidReceiveMessage((m: WebviewToHost) => this.onMessage(m)),
      tasks.onDidChange((ids) => {
        if (ids.includes(taskId)) this.sendTask();
      }),
      panel.onDidDispose(() => this.dispose()),
    );
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

  private onMessage(message: WebviewToHost): void {
    switch (message.type) {
      case 'ready':
        this.restartStream();
        break;
      case 'stats':
        this.onStats(message.stats);
        break;
      case 'openFile':
        void openChange(this.tasks, this.taskId, message.path).catch((err: Error) =>
          vscode.window.showErrorMessage(`Caesar: cannot open ${message.path}: ${err.message}`),
        );
        break;
      case 'action':
        if (TIMELINE_ACTIONS.includes(message.action)) void vscode.commands.executeCommand(`caesar.${message.action}`, this.taskId);
        break;
    }
  }

  private onStats(stats: TimelineStats): void {
    this.lastStats = stats;
    if (stats.rendered > 0 && this.timing.openToFirstRowsMs === undefined) this.timing.openToFirstRowsMs = Date.now() - this.openedAt;
    if (stats.caughtUp && this.timing.openToCaughtUpMs === undefined) {
      this.timing.openToCaughtUpMs = Date.now() - this.openedAt;
      this.log.info(`timeline ${this.taskId}: ${stats.received} events shown in ${this.timing.openToCaughtUpMs} ms`);
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

  /**
   * Events travel as UTF-8 JSON in a Uint8Array (VS Code passes typed arrays through as binary). Through code-server
   * the channel carries ~1.5 MB/s here, so bytes are what costs: few large messages, no repeated fields.
   */
  private postEvents(events: ProtocolEvent[], backlog: boolean): void {
    // protocol and task_id are the same on every line of the file: left out, they are a quarter of the bytes.
    const wire = JSON.stringify(events, (key, value: unknown) => (key === 'protocol' || key === 'task_id' ? undefined : value));
    this.post({ type: 'events', data: encoder.encode(wire), count: events.length, backlog });
  }

  private sendTask(): void {
    const summary = this.tasks.get(this.taskId);
    if (summary) this.post({ type: 'task', task: taskInfo(summary) });
  }

  /** (Re)streams the task's events from the start: the backlog in batches, then live appends. */
  private restartStream(): void {
    this.follower?.dispose();
    this.sendTask();
    const summary = this.tasks.get(this.taskId);
    const backlogBytes = summary?.eventsBytes ?? 0;
    let caughtUp = false;
    let total = 0;
    let pending: ProtocolEvent[] = [];
    let sentFirst = false;
    const readyAt = Date.now();
    if (backlogBytes === 0) {
      caughtUp = true;
      this.post({ type: 'caughtUp', total: 0 });
    }
    this.follower = this.tasks.store.follow(
      this.taskId,
      0,
      (events: ProtocolEvent[], nextOffset: number) => {
        total += events.length;
        if (caughtUp) {
          this.postEvents(events, false); // live: every append goes out at once
          return;
        }
        // Backlog: the first chunk at once (the first screen), then few large messages (each costs a round trip).
        pending.push(...events);
        const done = nextOffset >= backlogBytes;
        if (!sentFirst || pending.length >= BATCH || done) {
          sentFirst = true;
          this.postEvents(pending, !done);
          pending = [];
        }
        if (done) {
          caughtUp = true;
          this.post({ type: 'caughtUp', total });
          this.timing.readyToBacklogPostedMs = Date.now() - readyAt;
        }
      },
      (_line, error) => {
        this.badLines++;
        this.log.warn(`timeline ${this.taskId}: unreadable event line: ${error}`);
        this.post({ type: 'badLines', count: this.badLines });
      },
    );
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
    this.follower?.dispose();
    for (const d of this.disposables) d.dispose();
    this.panel.dispose();
    this.onDispose();
  }
}

export function taskInfo(summary: TaskSummary): TimelineTaskInfo {
  const { state, result } = summary;
  return {
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
  };
}

/** Owns the open timeline panels (one per task) and restores them after a window reload. */
export class TimelinePanels implements vscode.Disposable, vscode.WebviewPanelSerializer {
  private readonly panels = new Map<string, TimelinePanel>();
  private readonly opened = new vscode.EventEmitter<TimelinePanel>();
  /** A panel was created or restored (after a reload). */
  readonly onDidOpen = this.opened.event;

  constructor(
    private readonly tasks: LiveTasks,
    private readonly extensionUri: vscode.Uri,
    private readonly log: vscode.LogOutputChannel,
  ) {}

  open(taskId: string): TimelinePanel {
    const existing = this.panels.get(taskId);
    if (existing) {
      existing.reveal();
      return existing;
    }
    const summary = this.tasks.get(taskId);
    const title = `Timeline: ${summary ? summary.state.objective.slice(0, 40) : taskId}`;
    const panel = vscode.window.createWebviewPanel(TIMELINE_VIEW_TYPE, title, vscode.ViewColumn.Active, {
      enableScripts: true,
      localResourceRoots: [vscode.Uri.joinPath(this.extensionUri, 'dist', 'webview')],
    });
    return this.adopt(taskId, panel);
  }

  get(taskId: string): TimelinePanel | undefined {
    return this.panels.get(taskId);
  }

  /** The task of the timeline panel that is active (focused or in front in the active group), if any. */
  activeTaskId(): string | undefined {
    for (const [taskId, p] of this.panels) if (p.panel.active) return taskId;
    return undefined;
  }

  async deserializeWebviewPanel(panel: vscode.WebviewPanel, state: unknown): Promise<void> {
    const taskId = (state as { taskId?: unknown } | undefined)?.taskId;
    if (typeof taskId !== 'string' || !this.tasks.get(taskId)) {
      await this.tasks.ready();
      if (typeof taskId !== 'string' || !this.tasks.get(taskId)) {
        panel.dispose();
        return;
      }
    }
    this.adopt(taskId, panel);
  }

  private adopt(taskId: string, panel: vscode.WebviewPanel): TimelinePanel {
    const timeline = new TimelinePanel(taskId, panel, this.tasks, this.extensionUri, this.log, () => this.panels.delete(taskId));
    this.panels.set(taskId, timeline);
    this.opened.fire(timeline);
    return timeline;
  }

  dispose(): void {
    for (const p of [...this.panels.values()]) p.dispose();
    this.opened.dispose();
  }
}

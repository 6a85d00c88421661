import * as vscode from 'vscode';
import type { LiveTasks } from '../tasks/liveTasks';
import { TIMELINE_VIEW_TYPE, TimelinePanel } from './panel';

/**
 * Owns the open timeline panels (one per task; an untouched preview is taken over by the next task opened) and
 * restores them after a window reload.
 */
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

  /**
   * Shows a task's timeline: its panel if one is open, else (as a preview, the default) a preview panel nobody worked
   * in yet taken over, else a new panel.
   */
  open(taskId: string, options: { preview?: boolean } = {}): TimelinePanel {
    const existing = this.panels.get(taskId);
    if (existing) {
      existing.reveal();
      return existing;
    }
    const preview = options.preview ?? true;
    const reusable = preview ? [...this.panels.values()].find((p) => p.isPreview) : undefined;
    if (reusable) {
      this.panels.delete(reusable.taskId);
      reusable.retarget(taskId, this.titleFor(taskId));
      this.panels.set(taskId, reusable);
      reusable.reveal();
      this.opened.fire(reusable);
      return reusable;
    }
    const panel = vscode.window.createWebviewPanel(TIMELINE_VIEW_TYPE, this.titleFor(taskId), vscode.ViewColumn.Active, {
      enableScripts: true,
      localResourceRoots: [vscode.Uri.joinPath(this.extensionUri, 'dist', 'webview')],
    });
    return this.adopt(taskId, panel, preview);
  }

  /** The tasks whose timeline is open, in the order their panels were opened. */
  openTaskIds(): string[] {
    return [...this.panels.keys()];
  }

  private titleFor(taskId: string): string {
    const summary = this.tasks.get(taskId);
    return `Timeline: ${summary ? summary.state.objective.slice(0, 40) : taskId}`;
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

  /** A restored panel (after a reload) is not a preview: it was open, the user may have worked in it. */
  private adopt(taskId: string, panel: vscode.WebviewPanel, preview = false): TimelinePanel {
    const forget = () => {
      if (this.panels.get(timeline.taskId) === timeline) this.panels.delete(timeline.taskId);
    };
    const timeline = new TimelinePanel(taskId, panel, this.tasks, this.extensionUri, this.log, forget, preview);
    this.panels.set(taskId, timeline);
    this.opened.fire(timeline);
    return timeline;
  }

  dispose(): void {
    for (const p of [...this.panels.values()]) p.dispose();
    this.opened.dispose();
  }
}

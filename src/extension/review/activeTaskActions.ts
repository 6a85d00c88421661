import * as vscode from 'vscode';
import { taskLifecycle } from '../../common/lifecycle';
import { nextActions } from '../../common/next-actions';
import type { LiveTasks } from '../tasks/liveTasks';
import type { TimelinePanels } from '../timeline/panels';
import { activeEditorTarget } from './target';

/**
 * The context key the editor title menus read (package.json `editor/title`: `caesar.activeTask.actions =~ /;apply;/`):
 * the actions open to the task shown in the active editor (a diff of one of its files, the multi-file diff of Review
 * All Changes, a file of its worktree, its timeline), from the one lifecycle (src/common/next-actions.ts), as
 * `;review;apply;…;`, or '' when the active editor shows no task. Re-set on every tab change and whenever a task's
 * records change (from any process: LiveTasks watches the task folders), so after Apply the title bar drops Apply.
 */
export const ACTIVE_TASK_ACTIONS_KEY = 'caesar.activeTask.actions';

export class ActiveTaskActions implements vscode.Disposable {
  private value: string | undefined;
  private readonly subscriptions: vscode.Disposable[];

  constructor(
    private readonly tasks: LiveTasks,
    private readonly timelines: TimelinePanels,
  ) {
    const refresh = () => this.refresh();
    this.subscriptions = [
      vscode.window.tabGroups.onDidChangeTabs(refresh),
      vscode.window.tabGroups.onDidChangeTabGroups(refresh),
      // A webview's `active` flag changes with its view state, which may come after the tab change.
      timelines.onDidOpen((p) => this.subscriptions.push(p.panel.onDidChangeViewState(refresh))),
      tasks.onDidChange(refresh),
    ];
    void tasks.ready().then(refresh);
  }

  /** The value last given to the context key (the tests read it through caesar.activeTaskActions). */
  get current(): string {
    return this.value ?? '';
  }

  refresh(): void {
    const target = activeEditorTarget(this.tasks, () => this.timelines.activeTaskId());
    const summary = target ? this.tasks.get(target.taskId) : undefined;
    const next = summary ? `;${nextActions(taskLifecycle(summary)).map((a) => `${a.id};`).join('')}` : '';
    if (next === this.value) return;
    this.value = next;
    void vscode.commands.executeCommand('setContext', ACTIVE_TASK_ACTIONS_KEY, next);
  }

  dispose(): void {
    for (const s of this.subscriptions) s.dispose();
  }
}

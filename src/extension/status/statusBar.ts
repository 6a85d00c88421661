import * as vscode from 'vscode';
import { Disposable } from '../../base/disposable';
import type { LiveTasks } from '../tasks/liveTasks';
import { taskLifecycle } from '../../common/lifecycle';

export interface ActivityCounts {
  running: number;
  questions: number;
}

/** Counted from each task's lifecycle (src/common/lifecycle.ts): active ones, and the questions of those waiting. */
export function countActivity(tasks: LiveTasks): ActivityCounts {
  let running = 0;
  let questions = 0;
  for (const s of tasks.list()) {
    const life = taskLifecycle(s);
    if (!life.active) continue;
    running++;
    if (life.phase === 'waiting') questions += s.pendingQuestions.length;
  }
  return { running, questions };
}

/**
 * The status-bar item and the view badge: running tasks and pending questions, both focusing the Tasks view.
 * The badge shows questions when there are any (they need the user), else the running count.
 */
export class CaesarStatus extends Disposable {
  private readonly item = this._register(vscode.window.createStatusBarItem('caesar.status', vscode.StatusBarAlignment.Left, 50));

  constructor(
    private readonly tasks: LiveTasks,
    private readonly view: vscode.TreeView<unknown>,
  ) {
    super();
    this.item.name = 'Caesar';
    this.item.command = 'caesar.tasks.focus';
    this._register(tasks.onDidChange(() => this.update()));
    this.update();
  }

  /** What the item shows now (the tests read it). */
  get text(): string {
    return this.item.text;
  }

  update(): void {
    const { running, questions } = countActivity(this.tasks);
    if (running === 0 && questions === 0) {
      this.item.hide();
      this.view.badge = undefined;
      return;
    }
    const parts = [`$(sync~spin) ${running}`];
    if (questions) parts.push(`$(question) ${questions}`);
    this.item.text = parts.join('  ');
    const tip = `Caesar: ${running} task${running === 1 ? '' : 's'} running${questions ? `, ${questions} question${questions === 1 ? '' : 's'} waiting for you` : ''}`;
    // With questions waiting, a click answers them (the one inbox); otherwise it shows the Tasks view.
    this.item.tooltip = `${tip} — click to ${questions ? 'answer' : 'show the Tasks view'}`;
    this.item.command = questions ? 'caesar.answerQuestion' : 'caesar.tasks.focus';
    this.item.backgroundColor = questions ? new vscode.ThemeColor('statusBarItem.warningBackground') : undefined;
    this.item.show();
    this.view.badge = questions
      ? { value: questions, tooltip: `${questions} question${questions === 1 ? '' : 's'} waiting for you` }
      : { value: running, tooltip: `${running} task${running === 1 ? '' : 's'} running` };
  }
}

import * as vscode from 'vscode';
import { taskLifecycle } from '../../common/lifecycle';
import type { WorkspaceServices } from '../services';
import type { DelegateOutcome } from '../delegate/delegateCommands';
import type { LiveTasks } from '../tasks/liveTasks';

/** The walkthrough's id in package.json `contributes.walkthroughs`. */
export const WALKTHROUGH_ID = 'caesar.getStarted';

/** The objective the walkthrough's first button delegates to the demo agent ("ask": it asks one question first). */
export const WALKTHROUGH_OBJECTIVE = 'Write HELLO.md with a greeting; ask me a question first';

/** workspaceState key: the task the walkthrough started here, which its later buttons act on. */
const TASK_KEY = 'caesar.walkthrough.task';

/** The context keys the steps' completionEvents wait for (`onContext:<key>`), set once each step's work is done. */
export const WALKTHROUGH_CONTEXT = {
  delegated: 'caesar.walkthrough.delegated',
  answered: 'caesar.walkthrough.answered',
  reviewed: 'caesar.walkthrough.reviewed',
  applied: 'caesar.walkthrough.applied',
} as const;
type StepDone = keyof typeof WALKTHROUGH_CONTEXT;

export interface WalkthroughState {
  taskId: string | undefined;
  done: StepDone[];
}

/**
 * "Get Started with Caesar": its buttons run the real commands on the task the walkthrough started (remembered per
 * workspace, else the newest demo task), so "Open the Timeline" or "Review All Changes" do not ask which task. Its
 * steps are checked by context keys set from what happened, wherever it was done (a notification's button, the tree,
 * the timeline, the command line), not only when the walkthrough's own button was used.
 */
class Walkthrough implements vscode.Disposable {
  private readonly done = new Set<StepDone>();
  /** Tasks seen waiting for an answer: once one of them no longer waits, its question was answered. */
  private readonly asking = new Set<string>();
  private readonly subscription: vscode.Disposable;

  constructor(
    private readonly tasks: LiveTasks,
    private readonly state: vscode.Memento,
  ) {
    this.subscription = tasks.onDidChange(() => this.observe());
    void tasks.ready().then(() => this.observe());
  }

  /** The task the buttons act on: the one the walkthrough started while it is listed, else the newest demo task. */
  task(): string | undefined {
    const remembered = this.state.get<string>(TASK_KEY);
    if (remembered && this.tasks.get(remembered)) return remembered;
    return this.tasks.list().find((s) => s.state.agent === 'demo')?.id;
  }

  async delegateDemo(): Promise<DelegateOutcome | undefined> {
    const outcome = await vscode.commands.executeCommand<DelegateOutcome | undefined>('caesar.delegate', { objective: WALKTHROUGH_OBJECTIVE, agent: 'demo' });
    const id = outcome?.tasks[0]?.id;
    if (id) {
      await this.state.update(TASK_KEY, id);
      this.mark('delegated');
    }
    return outcome;
  }

  /**
   * Runs a task command on the walkthrough's task (the command itself asks when there is none). `step` is done once
   * the command did it (`did` reads its result): the walkthrough's own Answer and Apply buttons tick their steps even
   * when the task list changed too fast for observe() to see the question open.
   */
  async run(command: string, step?: StepDone, did: (result: unknown) => boolean = () => true): Promise<unknown> {
    const id = this.task();
    const result = await (id ? vscode.commands.executeCommand(command, id) : vscode.commands.executeCommand(command));
    if (step && did(result)) this.mark(step);
    return result;
  }

  snapshot(): WalkthroughState {
    return { taskId: this.task(), done: [...this.done] };
  }

  private observe(): void {
    const list = this.tasks.list();
    if (list.length) this.mark('delegated');
    // Read from each task's lifecycle (src/common/lifecycle.ts), as every other surface reads it.
    for (const s of list) {
      const life = taskLifecycle(s);
      if (life.phase === 'waiting') this.asking.add(s.id);
      else if (this.asking.has(s.id)) this.mark('answered');
      if (life.decision === 'applied') this.mark('applied');
    }
  }

  private mark(step: StepDone): void {
    if (this.done.has(step)) return;
    this.done.add(step);
    void vscode.commands.executeCommand('setContext', WALKTHROUGH_CONTEXT[step], true);
  }

  dispose(): void {
    this.subscription.dispose();
  }
}

/**
 * "Caesar: Get Started with Caesar" opens the walkthrough (delegate the demo agent → watch → answer → review → apply);
 * `caesar.walkthrough.*` are its buttons (hidden from the palette), and `caesar.walkthrough.state` says which task
 * they act on and which steps are done (read by the tests; it changes nothing).
 */
export function registerWalkthroughCommands(services: Pick<WorkspaceServices, 'context' | 'tasks'>): vscode.Disposable[] {
  const extensionId = services.context.extension.id;
  const walkthrough = new Walkthrough(services.tasks, services.context.workspaceState);
  return [
    walkthrough,
    vscode.commands.registerCommand('caesar.openWalkthrough', () =>
      vscode.commands.executeCommand('workbench.action.openWalkthrough', `${extensionId}#${WALKTHROUGH_ID}`, false),
    ),
    vscode.commands.registerCommand('caesar.walkthrough.delegateDemo', () => walkthrough.delegateDemo()),
    vscode.commands.registerCommand('caesar.walkthrough.openTimeline', () => walkthrough.run('caesar.openTimeline')),
    vscode.commands.registerCommand('caesar.walkthrough.answer', () => walkthrough.run('caesar.answerQuestion', 'answered', (r) => (r as { answered?: boolean } | undefined)?.answered === true)),
    vscode.commands.registerCommand('caesar.walkthrough.reviewAll', () => walkthrough.run('caesar.reviewAll', 'reviewed')),
    vscode.commands.registerCommand('caesar.walkthrough.apply', () => walkthrough.run('caesar.apply', 'applied', (r) => (r as { applied?: boolean } | undefined)?.applied === true)),
    vscode.commands.registerCommand('caesar.walkthrough.state', () => walkthrough.snapshot()),
  ];
}

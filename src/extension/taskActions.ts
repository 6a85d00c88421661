import { existsSync } from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { taskTitle } from '../common/format';
import { taskPaths } from '../protocol';
import { allows } from '../common/next-actions';
import { checkWorkspace, delegateTask, requestCancel, requireTaskView, type CancelOutcome, type DelegatedTask, type TaskSummary } from '../engine/tasks';
import { activeEditorTarget, pickTaskTarget, targetOf } from './review/target';
import type { LiveTasks } from './tasks/liveTasks';

export interface TaskActionsDeps {
  tasks: LiveTasks;
  /** The bundled CLI the supervisor of a re-run runs from. */
  cliScript: string;
  log: vscode.LogOutputChannel;
  activeTimelineTask: () => string | undefined;
  /** Reveals a task in the Tasks view (a re-run's new task). */
  reveal?: (taskId: string) => Thenable<void> | void;
  /** Asks before what cannot be undone (a modal with `action` as its button); true when the person agreed. */
  confirm: (message: string, detail: string, action: string) => Promise<boolean>;
}

/**
 * The per-task actions of the Tasks tree's context menu: Cancel, Re-run, Open Raw Log, Reveal Task Folder (registered
 * in commands.ts). Cancel writes the engine's cancel request; Re-run delegates the same objective with the same
 * settings through the engine; the others only open files of the task directory.
 */
export class TaskActions {
  constructor(private readonly deps: TaskActionsDeps) {}

  /** The handlers of the per-task commands, by command id, for commands.ts to register. */
  handlers(): Record<string, (arg?: unknown) => Promise<unknown>> {
    const { log, tasks } = this.deps;
    const command =
      (id: string, placeHolder: string, eligible: (s: TaskSummary) => boolean, fn: (taskId: string) => Promise<unknown>) =>
      async (arg?: unknown) => {
        try {
          const target =
            arg !== undefined
              ? targetOf(tasks, arg)
              : (activeEditorTarget(tasks, this.deps.activeTimelineTask) ?? (await pickTaskTarget(tasks, eligible, placeHolder)));
          return target ? await fn(target.taskId) : undefined;
        } catch (err) {
          log.warn(`${id}: ${(err as Error).message}`);
          void vscode.window.showErrorMessage(`Caesar: ${(err as Error).message}`);
          return undefined;
        }
      };
    return {
      // The pickers list the tasks whose lifecycle allows the action (src/common/next-actions.ts).
      'caesar.cancel': command('caesar.cancel', 'Cancel which task?', allows('cancel'), (id) => this.cancel(id)),
      'caesar.rerun': command('caesar.rerun', 'Run which task again?', allows('rerun'), (id) => this.rerun(id)),
      'caesar.openRawLog': command('caesar.openRawLog', "Open which task's raw log?", () => true, (id) => this.openRawLog(id)),
      'caesar.revealTaskFolder': command('caesar.revealTaskFolder', "Reveal which task's folder?", () => true, (id) => this.revealTaskFolder(id)),
    };
  }

  /** The task as a person names it (its objective and agent), its id when it is not listed. */
  private title(taskId: string): string {
    const summary = this.deps.tasks.get(taskId);
    return summary ? taskTitle(summary.state) : `task ${taskId}`;
  }

  /** Files the cancel request the task's supervisor acts on (it stops the agent and concludes `cancelled`). */
  async cancel(taskId: string): Promise<CancelOutcome | undefined> {
    // Stopping an agent cannot be undone: asked first, like Apply and Discard. Its work so far stays to review.
    const agreed = await this.deps.confirm(
      `Cancel ${this.title(taskId)}?`,
      'Its agent is stopped now and cannot be resumed; what it changed so far stays in its worktree for you to review.',
      'Cancel Task',
    );
    if (!agreed) return undefined;
    const outcome = await requestCancel(this.deps.tasks.rootOf(taskId), taskId, 'vscode');
    this.deps.log.info(`cancel ${taskId}: ${outcome.requested ? 'requested' : `nothing to cancel (${outcome.status})`}`);
    if (!outcome.requested) void vscode.window.showInformationMessage(`Caesar: ${this.title(taskId)} is ${outcome.status.replace('_', ' ')}; there is nothing to cancel.`);
    return outcome;
  }

  /**
   * Delegates the task's objective again, to the same agent with the same mode, isolation, network, model and
   * timeout (a fresh base commit). Refused in an untrusted workspace: the record may come from a cloned repository.
   */
  async rerun(taskId: string): Promise<DelegatedTask | undefined> {
    if (!vscode.workspace.isTrusted) {
      void vscode.window.showWarningMessage('Caesar: this workspace is not trusted, so Caesar starts no agent here. Trust the workspace (Workspaces: Manage Workspace Trust) to re-run a task.');
      return undefined;
    }
    const root = this.deps.tasks.rootOf(taskId);
    const view = await requireTaskView(root, taskId);
    const { state, task } = view;
    const workspace = await checkWorkspace(root, state.workspace);
    const delegated = await delegateTask(
      root,
      {
        objective: state.objective,
        workspace,
        agent: state.agent,
        mode: state.mode,
        isolation: state.isolation,
        // The recorded network is the resolved fact: closed asks for closed again, open for the same default as before.
        network: state.network ? 'auto' : 'off',
        timeout: state.timeout_ms,
        ...(state.model ? { model: state.model } : {}),
        ...(task?.context ? { context: task.context } : {}),
        ...(task?.constraints.length ? { constraints: task.constraints } : {}),
        ...(task?.acceptance_criteria.length ? { acceptance_criteria: task.acceptance_criteria } : {}),
      },
      { cliScript: this.deps.cliScript, trusted: true },
    );
    this.deps.log.info(`re-ran ${taskId} as ${delegated.id} (${delegated.launch.agent}, ${delegated.launch.isolation})`);
    for (const warning of delegated.warnings) void vscode.window.showWarningMessage(`Caesar: ${warning}`);
    await this.deps.tasks.reloadAll();
    await this.deps.reveal?.(delegated.id);
    return delegated;
  }

  /** The agent's own output (stdout and stderr, as it wrote them), in an editor. */
  async openRawLog(taskId: string): Promise<vscode.Uri | undefined> {
    const file = taskPaths(this.deps.tasks.rootOf(taskId), taskId).rawLog;
    if (!existsSync(file)) {
      void vscode.window.showInformationMessage(`Caesar: ${this.title(taskId)} has no raw log (yet): its agent has written nothing.`);
      return undefined;
    }
    const uri = vscode.Uri.file(file);
    await vscode.window.showTextDocument(uri, { preview: true });
    return uri;
  }

  /** Shows `.caesar/tasks/<id>/` in the Explorer when it is inside an open folder, else in the system's file manager. */
  async revealTaskFolder(taskId: string): Promise<vscode.Uri> {
    const dir = vscode.Uri.file(taskPaths(this.deps.tasks.rootOf(taskId), taskId).dir);
    const inWorkspace = vscode.workspace.workspaceFolders?.some((f) => f.uri.scheme === 'file' && !path.relative(f.uri.fsPath, dir.fsPath).startsWith('..'));
    await vscode.commands.executeCommand(inWorkspace ? 'revealInExplorer' : 'revealFileInOS', dir);
    return dir;
  }

}

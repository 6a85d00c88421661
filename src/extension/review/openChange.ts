import * as vscode from 'vscode';
import { taskTitle } from '../../common/format';
import { taskVersionPath } from '../../engine/tasks';
import type { LiveTasks } from '../tasks/liveTasks';
import { UNTRUSTED_REVIEW, baseVersionUri } from './baseContent';

/**
 * The left side of a task's diff for `file`, or undefined when the task recorded no base commit; `beside` is the
 * right side's URI (see baseVersionUri: one path for both sides).
 */
export function baseSideOf(tasks: LiveTasks, taskId: string, file: string, beside?: vscode.Uri): vscode.Uri | undefined {
  const commit = tasks.get(taskId)?.state.base_ref;
  return commit ? baseVersionUri({ taskId, commit, root: tasks.rootOf(taskId), file }, beside) : undefined;
}

/** Opens the native diff editor: the base version on the left, the task's version (its worktree) on the right. */
export async function openChange(tasks: LiveTasks, taskId: string, file: string): Promise<void> {
  const summary = tasks.get(taskId);
  if (!summary) throw new Error(`Unknown task ${taskId}`);
  if (!vscode.workspace.isTrusted) {
    void vscode.window.showWarningMessage(`Caesar: ${UNTRUSTED_REVIEW}`);
    return;
  }
  if (summary.discarded) {
    // The worktree is gone: say so, rather than git's "the task's worktree … does not exist".
    const title = taskTitle(summary.state);
    void vscode.window.showInformationMessage(
      summary.applied
        ? `Caesar: ${title} was applied and its worktree removed: ${file} as the task left it is in your workspace now.`
        : `Caesar: ${title} was discarded: its version of ${file} is gone with its worktree.`,
    );
    return;
  }
  // Throws RecordRefused (shown by the caller) for a worktree that is not this repository's, or a path with "..".
  const right = vscode.Uri.file(await taskVersionPath(tasks.rootOf(taskId), summary.state, file));
  const left = baseSideOf(tasks, taskId, file, right);
  if (!left) {
    await vscode.commands.executeCommand('vscode.open', right);
    return;
  }
  await vscode.commands.executeCommand('vscode.diff', left, right, `${file} (${taskId.slice(0, 10)}: base ↔ task)`);
}

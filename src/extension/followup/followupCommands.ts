import * as vscode from 'vscode';
import { allows } from '../../common/next-actions';
import { continueTask, isActive, type ContinuedTask } from '../../engine/tasks';
import { activeEditorTarget, pickTaskTarget, targetOf } from '../review/target';
import { askText } from '../picker';
import type { LiveTasks } from '../tasks/liveTasks';
import { runNumbers, taskTitle } from '../../common/titles';
import { ReviewComments, replyLine } from './reviewComments';

export interface FollowupDeps {
  tasks: LiveTasks;
  /** The bundled CLI the follow-up's supervisor runs from. */
  cliScript: string;
  log: vscode.LogOutputChannel;
  /** The task of the timeline panel in front, if any (the command's target from the timeline's title bar). */
  activeTimelineTask?: () => string | undefined;
  /** Reveals a task in the Tasks view (the new follow-up task). */
  reveal?: (taskId: string) => Thenable<void> | void;
}

export interface Followup extends vscode.Disposable {
  readonly comments: ReviewComments;
  continueWithFeedback(taskId: string, feedback?: string): Promise<ContinuedTask | undefined>;
}

const finished = allows('continue');

/**
 * "Continue with Feedback…" and the review comments it sends. Registers:
 *  - `caesar.continueWithFeedback` (task from the tree, the diff or timeline in front, or a pick; optional feedback
 *    text as the second argument, else an input box);
 *  - `caesar.review.addComment` (the Comments widget's button: a CommentReply; or `uri, line, text` from a caller);
 *  - `caesar.review.deleteComment`.
 */
export function createFollowup(deps: FollowupDeps): Followup {
  const { tasks, log } = deps;
  const comments = new ReviewComments(tasks, log);
  const report = (what: string) => (err: Error) => {
    log.warn(`${what}: ${err.message}`);
    void vscode.window.showErrorMessage(`Caesar: ${err.message}`);
    return undefined;
  };

  async function continueWithFeedback(taskId: string, feedback?: string): Promise<ContinuedTask | undefined> {
    if (!vscode.workspace.isTrusted) {
      void vscode.window.showWarningMessage('Caesar: this workspace is not trusted, so Caesar starts no agent here. Trust the workspace (Workspaces: Manage Workspace Trust) to continue a task.');
      return undefined;
    }
    const summary = tasks.get(taskId);
    if (!summary) throw new Error(`Unknown task ${taskId}.`);
    if (isActive(summary.observed)) throw new Error(`Task ${taskId} is still ${summary.observed}: continue it once it has finished.`);
    const pending = await comments.unsent(taskId);
    const text =
      feedback ??
      (await askText({
        // Which task: its title (numbered among re-runs) and agent, as the Tasks view names it.
        title: `Caesar: Continue with Feedback — ${taskTitle(summary, runNumbers(tasks.list(tasks.rootOf(taskId))))} (${summary.state.agent})`,
        prompt: `A new task on ${summary.state.agent}, starting from this task's result.${pending.length ? ` Your ${pending.length} review comment(s) are sent with it.` : ''}`,
        placeholder: pending.length ? 'What else should change? (may be empty: the comments say it)' : 'What should change?',
      }));
    if (text === undefined) return undefined;
    if (!text.trim() && pending.length === 0) {
      void vscode.window.showInformationMessage('Caesar: say what to change, or leave review comments on the lines of the task’s diff first.');
      return undefined;
    }
    const root = tasks.rootOf(taskId);
    const continued = await continueTask(root, taskId, text, { comments: pending, cliScript: deps.cliScript, trusted: true });
    if (pending.length) await comments.markSent(taskId, continued.id);
    log.info(`continued ${taskId} as ${continued.id} (${continued.launch.agent}${continued.base_commit ? `, from snapshot ${continued.base_commit}` : ''}, ${pending.length} comment(s))`);
    for (const warning of continued.warnings) void vscode.window.showWarningMessage(`Caesar: ${warning}`);
    await tasks.reloadAll();
    await deps.reveal?.(continued.id);
    return continued;
  }

  const disposables: vscode.Disposable[] = [
    comments,
    vscode.commands.registerCommand('caesar.continueWithFeedback', async (arg?: unknown, feedback?: unknown) => {
      const target =
        arg !== undefined
          ? targetOf(tasks, arg)
          : (activeEditorTarget(tasks, deps.activeTimelineTask ?? (() => undefined)) ?? (await pickTaskTarget(tasks, finished, 'Continue which task with feedback?')));
      if (!target) return undefined;
      return continueWithFeedback(target.taskId, typeof feedback === 'string' ? feedback : undefined).catch(report('continue with feedback'));
    }),
    vscode.commands.registerCommand('caesar.review.addComment', (arg: vscode.CommentReply | vscode.Uri, line?: number, text?: string) => {
      if (arg instanceof vscode.Uri) return comments.add(arg, line ?? 1, text ?? '').catch(report('review comment'));
      return comments.add(arg.thread.uri, replyLine(arg.thread), arg.text, arg.thread).catch((err: Error) => {
        // A thread the user opened on a line that takes no comment must not stay behind empty.
        if (arg.thread.comments.length === 0) arg.thread.dispose();
        return report('review comment')(err);
      });
    }),
    vscode.commands.registerCommand('caesar.review.deleteComment', (comment: vscode.Comment) => comments.remove(comment).catch(report('delete review comment'))),
  ];
  return {
    comments,
    continueWithFeedback,
    dispose: () => {
      for (const d of disposables) d.dispose();
    },
  };
}

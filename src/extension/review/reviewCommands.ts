import * as vscode from 'vscode';
import { plural, taskTitle } from '../../common/format';
import { taskLifecycle } from '../../common/lifecycle';
import { actionsFor, allows, offers, type TaskActionId } from '../../common/next-actions';
import {
  applyTaskById,
  changedSinceBase,
  diffTask,
  discardTask,
  RecordRefused,
  requireTaskView,
  taskVersionPath,
  type ApplyOutcome,
  type DiscardOutcome,
  type Overlap,
} from '../../engine/tasks';
import type { LiveTasks } from '../tasks/liveTasks';
import { UNTRUSTED_REVIEW } from './baseContent';
import { baseSideOf, openChange } from './openChange';
import { noteTaskMultiDiff, refreshTaskMultiDiffContext } from './multiDiffContext';
import { activeEditorTarget, pickTaskTarget, targetOf, type TaskTarget } from './target';

/** Asks the user to confirm a consequential action (a modal warning); resolves true to go ahead. */
export type Confirm = (message: string, detail: string, action: string) => Promise<boolean>;

const modalConfirm: Confirm = async (message, detail, action) =>
  (await vscode.window.showWarningMessage(message, { modal: true, detail }, action)) === action;

/** How "Review All Changes" showed the task: the multi-file diff editor, or one diff per file where it is absent. */
export type ReviewShown = 'multiDiff' | 'perFile' | 'nothing';

/** More per-file diff editors than this at once is noise: the rest are listed in the tree. */
const MAX_PER_FILE_DIFFS = 10;


/**
 * Review and the decisions after it: "Review All Changes" (the multi-file diff editor, base_ref ↔ the task's
 * worktree), "Apply", "Apply Selected Files…" and "Discard", from the Tasks tree, the timeline and the diff editor's
 * title (registered in commands.ts). Apply and discard are the engine's (all or nothing, conflicting files named);
 * this class adds the editor's part: choosing files, the warning before applying over files changed since the task's
 * base, and the messages. In an untrusted workspace nothing here runs git: each command says why.
 */
export class ReviewCommands {
  /** Replaceable by the in-editor tests, which cannot click a modal dialog. */
  confirm: Confirm = modalConfirm;

  constructor(
    private readonly tasks: LiveTasks,
    private readonly activeTimelineTask: () => string | undefined,
    private readonly log: vscode.LogOutputChannel,
  ) {}

  /** The handlers of the review commands, by command id, for commands.ts to register. */
  handlers(): Record<string, (arg?: unknown, selection?: unknown) => Promise<unknown>> {
    const run = <T>(what: string, fn: () => Promise<T>) =>
      fn().catch((err: Error) => {
        this.log.warn(`${what}: ${err.message}`);
        void vscode.window.showErrorMessage(`Caesar: ${err.message}`);
        return undefined;
      });
    return {
      'caesar.reviewAll': (arg, selection) =>
        run('review all changes', async () => {
          const target = await this.targetFor(arg, selection, 'Review the changes of which task?', 'review');
          return target ? this.reviewAll(target.taskId) : undefined;
        }),
      'caesar.apply': (arg, selection) =>
        run('apply', async () => {
          const target = await this.targetFor(arg, selection, 'Apply the changes of which task?', 'apply');
          // "Apply" on one task applies all of it; selected files go through "Apply Selected Files…".
          return target ? this.apply(target.taskId) : undefined;
        }),
      'caesar.applySelected': (arg, selection) =>
        run('apply selected files', async () => {
          const target = await this.targetFor(arg, selection, 'Apply files of which task?', 'applySelected');
          if (!target) return undefined;
          // Files chosen already (changed-file items selected in the tree, or ids and files from a caller): no pick.
          const files = target.files?.length ? target.files : await this.pickFiles(target);
          return files?.length ? this.apply(target.taskId, files) : undefined;
        }),
      'caesar.discard': (arg, selection) =>
        run('discard', async () => {
          const target = await this.targetFor(arg, selection, 'Discard the worktree of which task?', 'discard');
          return target ? this.discard(target.taskId) : undefined;
        }),
    };
  }

  private async targetFor(arg: unknown, selection: unknown, placeHolder: string, action: TaskActionId): Promise<TaskTarget | undefined> {
    if (arg !== undefined) {
      const target = targetOf(this.tasks, arg, selection);
      // An editor title menu passes the editor's resource: the multi-file diff editor's is no task's, the editor is.
      if (target || !(arg instanceof vscode.Uri)) return target;
    }
    return activeEditorTarget(this.tasks, this.activeTimelineTask) ?? pickTaskTarget(this.tasks, allows(action), placeHolder);
  }

  private trusted(): boolean {
    if (vscode.workspace.isTrusted) return true;
    void vscode.window.showWarningMessage(`Caesar: ${UNTRUSTED_REVIEW}`);
    return false;
  }

  /** Opens every changed file of the task in the multi-file diff editor (or one diff editor per file). */
  async reviewAll(taskId: string): Promise<ReviewShown> {
    if (!this.trusted()) return 'nothing';
    const root = this.tasks.rootOf(taskId);
    if (await this.saidClosed(taskId, 'review')) return 'nothing';
    const diff = await diffTask(root, taskId);
    const { state } = await requireTaskView(root, taskId);
    if (!diff.worktree || diff.files.length === 0) {
      void vscode.window.showInformationMessage(`Caesar: ${diff.message ?? `task ${taskId} changed nothing.`}`);
      return 'nothing';
    }
    const title = `Caesar: ${oneLineTitle(state.objective)} (${taskId.slice(0, 10)}: base ↔ task)`;
    if ((await vscode.commands.getCommands(true)).includes('vscode.changes')) {
      const resources: [vscode.Uri, vscode.Uri | undefined, vscode.Uri | undefined][] = [];
      for (const file of diff.files) {
        // Where each side sits in the worktree: a modified file's two sides share a path (shown "M", as Source Control
        // shows it); a renamed file's base side takes its old path (shown "R").
        const at = vscode.Uri.file(await taskVersionPath(root, state, file.path));
        const right = file.action === 'deleted' ? undefined : at;
        const oldAt = file.old_path ? vscode.Uri.file(await taskVersionPath(root, state, file.old_path)) : at;
        const left = file.action === 'created' ? undefined : baseSideOf(this.tasks, taskId, file.old_path ?? file.path, oldAt);
        resources.push([at, left, right]);
      }
      noteTaskMultiDiff(title, taskId);
      await vscode.commands.executeCommand('vscode.changes', title, resources);
      refreshTaskMultiDiffContext();
      return 'multiDiff';
    }
    for (const file of diff.files.slice(0, MAX_PER_FILE_DIFFS)) await openChange(this.tasks, taskId, file.path);
    return 'perFile';
  }

  /**
   * Applies the task (or `files` of it) to the workspace, all or nothing. Warns first (modal) when some of those files
   * changed in the workspace since the task's base commit. Resolves with the engine's outcome, or undefined when the
   * user backed out or the workspace is untrusted.
   */
  async apply(taskId: string, files?: string[]): Promise<ApplyOutcome | undefined> {
    if (!this.trusted()) return undefined;
    if (await this.saidClosed(taskId, 'apply')) return undefined;
    const root = this.tasks.rootOf(taskId);
    const view = await requireTaskView(root, taskId);
    const title = taskTitle(view.state);
    if (view.state.worktree && view.state.base_ref) {
      const paths = files?.length ? files : (await diffTask(root, taskId)).files.map((f) => f.path);
      const overlaps = await changedSinceBase(root, view, paths, this.tasks.list(root)).catch((err: Error) => {
        if (err instanceof RecordRefused) throw err;
        this.log.warn(`checking ${taskId}'s files against the workspace: ${err.message}`);
        return [] as Overlap[];
      });
      if (overlaps.length) {
        const detail = overlaps
          .map((o) => `${o.file}${o.appliedBy.length ? ` (also changed by applied task ${o.appliedBy.join(', ')})` : ' (changed in the workspace)'}`)
          .join('\n');
        const go = await this.confirm(
          `Task ${title} changed files that were also changed in your workspace since the task started. Apply anyway?`,
          `${detail}\n\nThe agent did not see these changes. Applying is all or nothing: if a change does not fit, nothing is written.`,
          'Apply Anyway',
        );
        if (!go) return undefined;
      }
    }
    let outcome = await applyTaskById(root, taskId, files);
    if (outcome.reason === 'repository_changed') {
      // The engine refused: the user must see what changed in the git dir and accept it explicitly (issue 22).
      const changes = outcome.repository_changes ?? [];
      const go = await this.confirm(
        `The repository's git dir changed while task ${title} ran. Apply anyway?`,
        `${changes.slice(0, 30).join('\n')}${changes.length > 30 ? `\n… and ${changes.length - 30} more` : ''}\n\nA planted hook or config runs in your own git commands: check these first.`,
        'Accept and Apply',
      );
      if (!go) return undefined;
      outcome = await applyTaskById(root, taskId, files, { acceptRepositoryChanges: true });
    }
    this.log.info(`apply ${taskId}${files?.length ? ` (${files.join(', ')})` : ''}: ${outcome.message}`);
    if (outcome.applied) {
      void vscode.window.showInformationMessage(
        outcome.empty ? `Caesar: ${outcome.message}` : `Caesar: applied ${plural(outcome.files.length, 'file')} of ${title}: ${outcome.files.join(', ')}.`,
      );
    } else if (outcome.reason === 'already_applied') {
      // The engine's message tells a terminal user to run `caesar discard`; here the button does it.
      void this.offerDiscardAfterApply(taskId, title, actionsFor(view).find((a) => a.id === 'discard')?.label);
    } else if (outcome.reason === 'conflicts') {
      void vscode.window.showErrorMessage(`Caesar: ${outcome.message}`);
    } else {
      void vscode.window.showWarningMessage(`Caesar: ${outcome.message}`);
    }
    void this.tasks.reloadAll();
    return outcome;
  }

  /** Removes the task's worktree and branch (after a modal confirmation); the workspace is never touched. */
  async discard(taskId: string): Promise<DiscardOutcome | undefined> {
    if (!this.trusted()) return undefined;
    const root = this.tasks.rootOf(taskId);
    const view = await requireTaskView(root, taskId);
    if (view.state.worktree) {
      const applied = view.applied ? ' It was applied: your workspace keeps those changes.' : ' Its changes were not applied: they will be lost.';
      const go = await this.confirm(`Discard the worktree of ${taskTitle(view.state)}?`, `${view.state.worktree}${view.state.branch ? ` and branch ${view.state.branch}` : ''} will be removed.${applied}`, 'Discard');
      if (!go) return undefined;
    }
    const outcome = await discardTask({ root, state: view.state });
    this.log.info(`discard ${taskId}: ${outcome.message}`);
    void (outcome.discarded
      ? vscode.window.showInformationMessage(`Caesar: discarded the worktree of ${taskTitle(view.state)}.`)
      : vscode.window.showWarningMessage(`Caesar: ${outcome.message}`));
    void this.tasks.reloadAll();
    return outcome;
  }

  /**
   * A task whose lifecycle no longer allows the action (applied, discarded, or its worktree gone): says so in words,
   * instead of git's "the worktree does not exist" or an apply that finds nothing, and returns true. After an Apply,
   * the message offers what the lifecycle still allows: removing the worktree.
   */
  private async saidClosed(taskId: string, what: 'review' | 'apply'): Promise<boolean> {
    // Read from disk now, not from the list: a command run just as the task finished must see it finished.
    const summary = await requireTaskView(this.tasks.rootOf(taskId), taskId).catch(() => undefined);
    if (!summary) return false;
    const actions = actionsFor(summary);
    if (offers(actions, what)) return false;
    const title = taskTitle(summary.state);
    const life = taskLifecycle(summary);
    if (life.decision === 'applied') {
      void this.offerDiscardAfterApply(taskId, title, actions.find((a) => a.id === 'discard')?.label);
      return true;
    }
    void vscode.window.showInformationMessage(
      life.phase === 'discarded'
        ? `Caesar: ${title} was discarded: its worktree and its changes are gone, so there is nothing to ${what}.`
        : `Caesar: ${title} is ${life.label}: there is nothing to ${what}.`,
    );
    return true;
  }

  /** After an Apply of a task applied already: says so, with the lifecycle's button to remove its worktree when it allows one. */
  private async offerDiscardAfterApply(taskId: string, title: string, removeLabel: string | undefined): Promise<void> {
    const message = `Caesar: ${title} was already applied: its changes are in your workspace (Source Control shows them), nothing is left to apply.`;
    if (!removeLabel) {
      void vscode.window.showInformationMessage(message);
      return;
    }
    if ((await vscode.window.showInformationMessage(message, removeLabel)) === removeLabel) await this.discard(taskId);
  }

  /** A quick pick of the task's changed files, all checked: the user unchecks what to leave out. */
  private async pickFiles(target: TaskTarget): Promise<string[] | undefined> {
    if (!this.trusted()) return undefined;
    const diff = await diffTask(this.tasks.rootOf(target.taskId), target.taskId);
    if (diff.files.length === 0) {
      void vscode.window.showInformationMessage(`Caesar: ${diff.message ?? `task ${target.taskId} changed nothing.`}`);
      return undefined;
    }
    const preselected = new Set(target.files ?? diff.files.map((f) => f.path));
    const items = diff.files.map((f) => ({
      label: f.path,
      description: `${f.action}${f.binary ? ' · binary' : ` · +${f.additions} −${f.deletions}`}`,
      picked: preselected.has(f.path),
    }));
    const summary = this.tasks.get(target.taskId);
    const placeHolder = `Apply which files of ${summary ? taskTitle(summary.state) : 'the task'}?`;
    const picked = await vscode.window.showQuickPick(items, { canPickMany: true, title: 'Caesar: Apply Selected Files', placeHolder });
    return picked?.map((p) => p.label);
  }

}

function oneLineTitle(text: string): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > 50 ? `${line.slice(0, 49)}…` : line;
}

import * as vscode from 'vscode';
import { plural } from '../../common/format';
import { holdsUnappliedWork, isActive, removeTask, type TaskSummary } from '../../engine/tasks';
import type { WorkspaceServices } from '../services';
import { pickMany } from '../picker';
import { TaskNode } from './nodes';
import { CATEGORY_LABELS, categoryOf, type TaskCategory } from './taskFilter';

export interface ClearOutcome {
  removed: string[];
  hidden: string[];
  failed: { id: string; message: string }[];
}

/**
 * The Tasks view's housekeeping, so it does not grow without end:
 *  - Clear Finished: applied and discarded tasks are removed for good (engine removeTask: records, and a worktree an
 *    applied task still had), after one confirmation; other finished tasks (work never applied, failures) are
 *    only hidden — nothing of theirs is lost, and the filter shows them again;
 *  - Remove Task (a finished task's context menu): removed for good, discarding unapplied work only when confirmed;
 *  - Filter Tasks…: which categories the view shows, as the Problems view filters severities.
 */
export function registerTreeCommands(services: WorkspaceServices): vscode.Disposable[] {
  const { tasks, tree, view, log } = services;
  const filter = tree.filter;
  const confirm = (message: string, detail: string, action: string) => services.review.confirm(message, detail, action);
  const describe = () => {
    const hidden = filter.hiddenCount(tasks.list());
    view.description = filter.filtering ? 'filtered' : hidden && !filter.isShown('hidden') ? `${hidden} cleared` : undefined;
    void vscode.commands.executeCommand('setContext', 'caesar.tasks.filtered', filter.filtering);
    // An empty view says why: no task at all, or every task hidden (package.json viewsWelcome reads this).
    const listed = tasks.list();
    void vscode.commands.executeCommand('setContext', 'caesar.tasks.allHidden', listed.length > 0 && !listed.some((s) => filter.visible(s)));
  };
  describe();
  const describeOnChange = tasks.onDidChange(() => describe());

  async function clearFinished(): Promise<ClearOutcome | undefined> {
    const finished = tasks.list().filter((s) => !isActive(s.observed) && filter.visible(s));
    const removable = finished.filter((s) => s.applied || s.discarded);
    const hideOnly = finished.filter((s) => !s.applied && !s.discarded);
    if (finished.length === 0) {
      void vscode.window.showInformationMessage('Caesar: no finished task to clear.');
      return { removed: [], hidden: [], failed: [] };
    }
    const detail = [
      removable.length ? `${plural(removable.length, 'applied or discarded task is', 'applied or discarded tasks are')} removed for good: their records under .caesar/tasks and any worktree left.` : '',
      hideOnly.length ? `${plural(hideOnly.length, 'other finished task (work not applied, a failure) is', 'other finished tasks (work not applied, failures) are')} only hidden; Filter Tasks… shows them again.` : '',
    ].filter(Boolean).join(' ');
    if (!(await confirm(`Clear ${plural(finished.length, 'finished task')} from the Tasks view?`, detail, 'Clear'))) return undefined;
    const outcome: ClearOutcome = { removed: [], hidden: hideOnly.map((s) => s.id), failed: [] };
    for (const s of removable) {
      try {
        await removeTask(tasks.rootOf(s.id), s.id);
        outcome.removed.push(s.id);
      } catch (err) {
        outcome.failed.push({ id: s.id, message: (err as Error).message });
        outcome.hidden.push(s.id); // cleared from the view all the same
      }
    }
    await filter.hide(outcome.hidden, tasks.list());
    log.info(`clear finished: removed ${outcome.removed.length}, hidden ${outcome.hidden.length}, failed ${outcome.failed.length}`);
    for (const f of outcome.failed) void vscode.window.showWarningMessage(`Caesar: could not remove task ${f.id} (hidden instead): ${f.message}`);
    await tasks.reloadAll();
    describe();
    return outcome;
  }

  async function remove(arg?: unknown): Promise<string | undefined> {
    const id = arg instanceof TaskNode ? arg.taskId : typeof arg === 'string' ? arg : undefined;
    const summary = id ? tasks.get(id) : undefined;
    if (!summary) return undefined;
    if (isActive(summary.observed)) {
      void vscode.window.showWarningMessage('Caesar: this task is still running: cancel it before removing it.');
      return undefined;
    }
    const unapplied = holdsUnappliedWork(summary);
    const title = tree.titleOf(summary);
    const go = await confirm(
      `Remove the task "${title}"?`,
      unapplied
        ? 'Its changes were never applied: they are discarded with its worktree and branch, and its records go.'
        : 'Its records under .caesar/tasks go (and its worktree, if one is left). Work you applied stays in your folder.',
      unapplied ? 'Discard and Remove' : 'Remove',
    );
    if (!go) return undefined;
    try {
      const outcome = await removeTask(tasks.rootOf(summary.id), summary.id, { discardUnapplied: unapplied });
      log.info(outcome.message);
    } catch (err) {
      void vscode.window.showErrorMessage(`Caesar: ${(err as Error).message}`);
      return undefined;
    }
    await tasks.reloadAll();
    describe();
    return summary.id;
  }

  async function chooseFilter(): Promise<TaskCategory[] | undefined> {
    const listed = tasks.list();
    // A cleared task counts once, under "Cleared", not under its own category too.
    const count = (c: TaskCategory) => (c === 'hidden' ? filter.hiddenCount(listed) : listed.filter((s: TaskSummary) => categoryOf(s) === c && !filter.isHidden(s)).length);
    const items = filter.categories.map((c) => ({ label: CATEGORY_LABELS[c], description: String(count(c)), category: c, picked: filter.isShown(c) }));
    const picked = await pickMany(items, { title: 'Caesar: Filter Tasks', placeholder: 'Which tasks does the Tasks view show?' });
    if (!picked) return undefined;
    await filter.show(picked.map((p) => p.category));
    describe();
    return picked.map((p) => p.category);
  }

  return [
    describeOnChange,
    vscode.commands.registerCommand('caesar.clearFinished', () => clearFinished()),
    vscode.commands.registerCommand('caesar.removeTask', (arg?: unknown) => remove(arg)),
    vscode.commands.registerCommand('caesar.filterTasks', () => chooseFilter()),
    vscode.commands.registerCommand('caesar.filterTasksActive', () => chooseFilter()),
    filter.onDidChange(describe),
  ];
}

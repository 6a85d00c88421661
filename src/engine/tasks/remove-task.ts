import { existsSync, promises as fs } from 'node:fs';
import * as path from 'node:path';
import { isSafeId, tasksDir } from '../../protocol';
import { discardTask } from '../git/apply';
import { checkWorktree, rootRepository } from '../git/record-checks';
import { RequestError } from '../store/requests';
import { isActive, type TaskView } from '../store/store';
import { requireTaskView } from './operations';

export interface RemoveTaskOutcome {
  task_id: string;
  /** The worktree (and branch) removed on the way, if the task still had one. */
  worktree_removed?: string;
  message: string;
}

/** Whether removing the task loses work nobody applied: its worktree is still there, and it was neither applied nor discarded. */
export function holdsUnappliedWork(view: Pick<TaskView, 'state' | 'applied' | 'discarded'>): boolean {
  return !!view.state.worktree && !view.applied && !view.discarded && existsSync(view.state.worktree);
}

/**
 * Removes a finished task for good: its worktree and branch (as discard does) when it still has one, then its folder
 * under .caesar/tasks/. Refused for an active task, and — unless `discardUnapplied` — for one whose worktree holds work
 * that was never applied. The record is untrusted: the id must be a task id, the folder a real directory directly in
 * the tasks folder (no link leads the removal elsewhere), the worktree under this repository's .caesar/wt/.
 */
export async function removeTask(root: string, id: string, options: { discardUnapplied?: boolean } = {}): Promise<RemoveTaskOutcome> {
  const view = await requireTaskView(root, id);
  if (isActive(view.observed)) throw new RequestError(`Task ${id} is still ${view.observed}: cancel it before removing it.`, 'finished');
  if (holdsUnappliedWork(view) && !options.discardUnapplied) {
    throw new RequestError(`Task ${id}'s changes were never applied: apply or discard them first (removing it would lose them).`, 'finished');
  }
  const outcome: RemoveTaskOutcome = { task_id: id, message: '' };
  if (view.state.worktree && !view.discarded && existsSync(view.state.worktree)) {
    const repo = await rootRepository(root);
    if (!repo) throw new RequestError(`${root} is not inside a git repository: task ${id}'s worktree cannot be removed.`, 'finished');
    const worktree = await checkWorktree(repo, view.state.worktree);
    await discardTask({ root, state: { ...view.state, worktree } });
    outcome.worktree_removed = worktree;
  }
  await removeTaskFolder(root, id);
  outcome.message = `Removed task ${id}${outcome.worktree_removed ? ` and its worktree ${outcome.worktree_removed}` : ''}.`;
  return outcome;
}

async function removeTaskFolder(root: string, id: string): Promise<void> {
  if (!isSafeId(id)) throw new RequestError(`Invalid task id ${JSON.stringify(id)}.`, 'invalid_id');
  const parent = tasksDir(root);
  const folder = path.join(parent, id);
  const [parentStat, folderStat] = await Promise.all([fs.lstat(parent), fs.lstat(folder)]);
  if (!parentStat.isDirectory() || !folderStat.isDirectory()) {
    throw new RequestError(`Refusing to remove ${folder}: it (or the tasks folder) is not a real directory.`, 'unknown_task');
  }
  // Renamed aside first: readers listing the tasks never see a half-removed folder, and a failed removal leaves
  // only a dot-folder the listing ignores.
  const aside = path.join(parent, `.removing-${id}-${process.pid}`);
  await fs.rename(folder, aside);
  await fs.rm(aside, { recursive: true, force: true });
}

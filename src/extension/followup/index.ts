import type * as vscode from 'vscode';
import type { WorkspaceServices } from '../services';
import { createFollowup } from './followupCommands';

export { createFollowup, type Followup, type FollowupDeps } from './followupCommands';
export { ReviewComments, REVIEW_CONTROLLER_ID } from './reviewComments';

/** Continue with Feedback and the review comments it sends (see followupCommands.ts), wired to the window's services. */
export function registerFollowupCommands(services: WorkspaceServices): vscode.Disposable[] {
  const { tasks, tree, view, timelines, cliScript, log } = services;
  return [
    createFollowup({
      tasks,
      cliScript,
      log,
      activeTimelineTask: () => timelines.activeTaskId(),
      reveal: async (id) => {
        await tasks.ready();
        // Best effort, as for a re-run: the view may not have re-read its root yet.
        if (tasks.get(id)) await view.reveal(tree.nodeFor(id), { select: true, focus: false }).then(undefined, (err: Error) => log.warn(`revealing task ${id}: ${err.message}`));
      },
    }),
  ];
}

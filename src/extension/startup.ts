import * as vscode from 'vscode';
import { isActive } from '../engine/tasks';
import type { LiveTasks } from './tasks/liveTasks';
import type { TimelinePanels } from './timeline/panels';

/** The setting `npm start` turns on in its private profile; off by default so a user's own windows open as they left them. */
export const SHOW_ON_STARTUP_SETTING = 'caesar.showOnStartup';

/**
 * With `caesar.showOnStartup`, the window opens on the Caesar view and the timeline of the newest running task (else
 * the newest task): what a newcomer started with `npm start` should see first, instead of a welcome page.
 */
export async function showOnStartup(tasks: LiveTasks, timelines: TimelinePanels, log: vscode.LogOutputChannel): Promise<void> {
  if (!vscode.workspace.getConfiguration().get<boolean>(SHOW_ON_STARTUP_SETTING, false)) return;
  await vscode.commands.executeCommand('workbench.view.extension.caesar');
  await tasks.ready();
  const byNewest = [...tasks.list()].sort((a, b) => b.state.created_at.localeCompare(a.state.created_at));
  const newest = byNewest.find((task) => isActive(task.observed)) ?? byNewest[0];
  if (!newest) return;
  log.info(`showing task ${newest.id} on startup (${SHOW_ON_STARTUP_SETTING})`);
  timelines.open(newest.id);
}

import type * as vscode from 'vscode';
import type { DelegateCommands } from './delegate/delegateCommands';
import type { QuestionInbox } from './questions/inbox';
import type { ReviewCommands } from './review/reviewCommands';
import type { TaskActions } from './taskActions';
import type { LiveTasks } from './tasks/liveTasks';
import type { TasksTreeProvider, TaskTreeNode } from './tasks/tree';
import type { TimelinePanels } from './timeline/panels';

/*
 * The services the extension's parts are handed at activation. They live here, below commands.ts and the feature
 * folders (compare/, followup/, walkthrough/) that both need them, so no feature imports the command table that
 * registers it.
 */

/** What every window has, folder or not. */
export interface WindowServices {
  context: vscode.ExtensionContext;
  log: vscode.LogOutputChannel;
  /** dist/caesar.js of the extension. */
  cliScript: string;
}

/** What a window with at least one local folder has: the tasks and the views over them. */
export interface WorkspaceServices extends WindowServices {
  tasks: LiveTasks;
  tree: TasksTreeProvider;
  view: vscode.TreeView<TaskTreeNode>;
  timelines: TimelinePanels;
  inbox: QuestionInbox;
  delegator: DelegateCommands;
  review: ReviewCommands;
  actions: TaskActions;
}

import * as vscode from 'vscode';
import { registerCliCommands } from './cliCommand';
import { registerCompareCommands } from './compare';
import { registerFollowupCommands } from './followup';
import { registerLandCommands } from './land';
import { registerTreeCommands } from './tasks/treeCommands';
import { registerWalkthroughCommands } from './walkthrough/walkthrough';
import { openChange } from './review/openChange';
import type { LiveTasks } from './tasks/liveTasks';
import { QuestionNode, TaskNode } from './tasks/nodes';
import type { TaskTreeNode } from './tasks/tree';
import type { WindowServices, WorkspaceServices } from './services';

type Handler = (...args: never[]) => unknown;

/**
 * Feature commands that live in their own folders (followup/, compare/, walkthrough/) plug in here: each folder
 * exports `registerXxxCommands(services: WorkspaceServices): vscode.Disposable[]` and gets one line in this list.
 * They are registered only when a folder is open (without one, their ids answer "open a folder").
 */
const FEATURE_COMMANDS: ((services: WorkspaceServices) => vscode.Disposable[])[] = [
  registerFollowupCommands,
  registerCompareCommands,
  registerLandCommands,
  registerWalkthroughCommands,
  registerTreeCommands,
];

/**
 * Every command of the extension, registered in one place. Without a folder, the commands that need one say so
 * instead of being missing ("command not found"); every command package.json declares is registered either way.
 */
export function registerCommands(window: WindowServices, workspace?: WorkspaceServices): vscode.Disposable[] {
  const handlers: Record<string, Handler> = {
    'caesar.showLog': () => window.log.show(),
    ...(workspace ? workspaceHandlers(workspace) : {}),
  };
  const disposables = [
    ...registerCliCommands(window.context, window.cliScript, window.log),
    ...(workspace ? FEATURE_COMMANDS.flatMap((register) => register(workspace)) : []),
  ];
  const registered = new Set([...Object.keys(handlers), 'caesar.installCli', 'caesar.uninstallCli']);
  for (const [id, handler] of Object.entries(handlers)) disposables.push(vscode.commands.registerCommand(id, handler as (...args: unknown[]) => unknown));
  // Declared commands left unregistered need a folder (delegate, review, task actions, features).
  const declared = (window.context.extension.packageJSON as { contributes?: { commands?: { command: string }[] } }).contributes?.commands ?? [];
  if (!workspace) {
    for (const { command } of declared) if (!registered.has(command)) disposables.push(vscode.commands.registerCommand(command, noFolder));
  }
  return disposables;
}

function workspaceHandlers(ws: WorkspaceServices): Record<string, Handler> {
  const { tasks, timelines, inbox, delegator } = ws;
  return {
    'caesar.delegate': (arg?: unknown) => delegator.delegate(arg),
    'caesar.delegateSeveral': (arg?: unknown) => delegator.delegateSeveral(arg),
    'caesar.openTimeline': async (arg?: TaskNode | string) => {
      const id = typeof arg === 'string' ? arg : arg instanceof TaskNode ? arg.taskId : await pickTask(tasks);
      if (id) timelines.open(id);
    },
    'caesar.openChange': (taskId: string, file: string) =>
      openChange(tasks, taskId, file).catch((err: Error) => vscode.window.showErrorMessage(`Caesar: ${err.message}`)),
    'caesar.refresh': () => tasks.reloadAll(),
    'caesar.answerQuestion': (arg?: TaskTreeNode | string, questionId?: string) =>
      arg instanceof QuestionNode
        ? inbox.answerCommand(arg.taskId, arg.questionId)
        : inbox.answerCommand(typeof arg === 'string' ? arg : arg instanceof TaskNode ? arg.taskId : undefined, questionId),
    'caesar.copyTaskId': (node?: TaskNode) => {
      if (node instanceof TaskNode) void vscode.env.clipboard.writeText(node.taskId);
    },
    ...ws.review.handlers(),
    ...ws.actions.handlers(),
  };
}

function noFolder(): undefined {
  void vscode.window.showInformationMessage('Caesar: open a folder to use this command; its tasks live in the folder’s .caesar/ directory.');
  return undefined;
}

async function pickTask(tasks: LiveTasks): Promise<string | undefined> {
  const picked = await vscode.window.showQuickPick(
    tasks.list().map((s) => ({ label: s.state.objective, description: `${s.state.agent} · ${s.observed}`, detail: s.id, id: s.id })),
    // As the other pickers: not closed when a webview (a timeline the user was working in) takes the focus back as
    // the command palette closes, which made the pick vanish before it could be used.
    { placeHolder: 'Open the timeline of which task?', ignoreFocusOut: true },
  );
  return picked?.id;
}

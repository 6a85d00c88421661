import { loadStartedAt } from './loadClock';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { TaskStore } from '../engine/store';
import { createCaesarApi, type CaesarApi } from './api';
import { registerCliCommands } from './cliCommand';
import { findCaesarRoot } from './root';
import { showOnStartup } from './startup';
import { CaesarStatus } from './status/statusBar';
import { LiveTasks } from './tasks/liveTasks';
import { BASE_SCHEME, BaseRefContentProvider, openChange } from './tasks/review';
import { DetailNode, TaskNode, TasksTreeProvider, type TaskTreeNode } from './tasks/tree';
import { DelegateCommands } from './delegate/delegateCommands';
import { QuestionInbox } from './questions/inbox';
import { TIMELINE_VIEW_TYPE, TimelinePanels } from './timeline/panel';
import { registerCaesarMcp } from './mcp/provider';
import { changeUri } from './review/changeUri';
import { TaskFileDecorations } from './review/decorations';
import { ReviewCommands } from './review/reviewCommands';
import { TaskActions } from './taskActions';

/** Set when the bundle has been evaluated (every import above has run). */
const bundleEvaluatedAt = Date.now();

export async function activate(context: vscode.ExtensionContext): Promise<CaesarApi | undefined> {
  const started = Date.now();
  const log = vscode.window.createOutputChannel('Caesar', { log: true });
  context.subscriptions.push(log);
  const folder = vscode.workspace.workspaceFolders?.find((f) => f.uri.scheme === 'file');
  let delegator: DelegateCommands | undefined;
  context.subscriptions.push(
    vscode.commands.registerCommand('caesar.showLog', () => log.show()),
    vscode.commands.registerCommand('caesar.delegate', (arg?: unknown) => (delegator ? delegator.delegate(arg) : noFolder())),
    vscode.commands.registerCommand('caesar.delegateSeveral', (arg?: unknown) => (delegator ? delegator.delegateSeveral(arg) : noFolder())),
    ...registerCliCommands(context, cliScriptOf(context), log),
  );
  if (!folder) {
    log.info('no local folder is open: the Tasks view stays empty');
    return undefined;
  }

  const root = findCaesarRoot(folder.uri.fsPath);
  const store = new TaskStore(root);
  const tasks = new LiveTasks(store, log);
  const tree = new TasksTreeProvider(tasks);
  const view = vscode.window.createTreeView<TaskTreeNode>('caesar.tasks', { treeDataProvider: tree, showCollapseAll: true, canSelectMany: true });
  const status = new CaesarStatus(tasks, view as vscode.TreeView<unknown>);
  const timelines = new TimelinePanels(tasks, context.extensionUri, log);
  context.subscriptions.push(tasks, tree, view, status, timelines);
  delegator = new DelegateCommands({ root, tasks, tree, view, cliScript: cliScriptOf(context), state: context.workspaceState, log });
  const inbox = new QuestionInbox(root, tasks, log);
  context.subscriptions.push(delegator, inbox);
  context.subscriptions.push(
    vscode.window.registerWebviewPanelSerializer(TIMELINE_VIEW_TYPE, timelines),
    vscode.workspace.registerTextDocumentContentProvider(BASE_SCHEME, new BaseRefContentProvider(tasks)),
    vscode.commands.registerCommand('caesar.openTimeline', async (arg?: TaskNode | string) => {
      const id = typeof arg === 'string' ? arg : arg instanceof TaskNode ? arg.taskId : await pickTask(tasks);
      if (id) timelines.open(id);
    }),
    vscode.commands.registerCommand('caesar.openChange', (taskId: string, file: string) =>
      openChange(tasks, taskId, file).catch((err: Error) => vscode.window.showErrorMessage(`Caesar: ${err.message}`)),
    ),
    vscode.commands.registerCommand('caesar.refresh', () => tasks.reloadAll()),
    vscode.commands.registerCommand('caesar.answerQuestion', (arg?: TaskTreeNode | string, questionId?: string) =>
      arg instanceof DetailNode && arg.kind === 'question'
        ? inbox.answerCommand(arg.taskId, arg.key)
        : inbox.answerCommand(typeof arg === 'string' ? arg : arg?.taskId, questionId),
    ),
    vscode.commands.registerCommand('caesar.copyTaskId', (node?: TaskNode) => {
      if (node instanceof TaskNode) void vscode.env.clipboard.writeText(node.taskId);
    }),
  );

  // Review, apply, discard (review/), the per-task actions, and the MCP server offered to the editor's chat.
  const activeTimelineTask = () => timelines.activeTaskId();
  const review = new ReviewCommands(tasks, activeTimelineTask, log);
  const decorations = new TaskFileDecorations(tasks);
  const actions = new TaskActions({
    tasks, cliScript: cliScriptOf(context), log, activeTimelineTask,
    reveal: async (id) => {
      await tasks.ready();
      // Best effort: the view may not have re-read its root yet (the task still shows up, at the top).
      if (tasks.get(id)) await view.reveal(tree.nodeFor(id), { select: true, focus: false }).then(undefined, (err: Error) => log.warn(`revealing task ${id}: ${err.message}`));
    },
  });
  const mcp = registerCaesarMcp(cliScriptOf(context), root, log);
  context.subscriptions.push(review, decorations, actions, vscode.window.registerFileDecorationProvider(decorations), ...(mcp?.disposables ?? []));

  const activationMs = Date.now() - started;
  const loadAndActivateMs = Date.now() - loadStartedAt;
  log.info(`activated in ${activationMs} ms (${loadAndActivateMs} ms with loading the bundle); root ${root} (tasks in ${store.tasksDir})`);
  void tasks.ready().then(() => log.info(`${tasks.list().length} task(s) listed, ${Date.now() - started} ms after activation began`));
  const startup = () => showOnStartup(tasks, timelines, log).catch((err: Error) => log.warn(`showing the Caesar view on startup: ${err.message}`));
  void startup();

  return createCaesarApi({
    root,
    store,
    tasks,
    tree,
    view,
    status,
    timelines,
    delegator,
    inbox,
    cliPath: cliScriptOf(context),
    timing: { activationMs, loadAndActivateMs, bundleEvaluationMs: bundleEvaluatedAt - loadStartedAt },
    showOnStartup: startup,
    review: {
      fileDecoration: (uri) => decorations.provideFileDecoration(uri),
      treeFileUri: changeUri,
      setConfirm: (confirm) => {
        const previous = review.confirm;
        review.confirm = confirm;
        return previous;
      },
    },
    ...(mcp ? { mcp: mcp.provider } : {}),
  });
}

function noFolder(): undefined {
  void vscode.window.showInformationMessage('Caesar: open a folder to delegate a task; its tasks live in the folder’s .caesar/ directory.');
  return undefined;
}

/** The bundled CLI shipped with the extension. */
function cliScriptOf(context: vscode.ExtensionContext): string {
  return path.join(context.extensionPath, 'dist', 'caesar.js');
}

async function pickTask(tasks: LiveTasks): Promise<string | undefined> {
  const picked = await vscode.window.showQuickPick(
    tasks.list().map((s) => ({ label: s.state.objective, description: `${s.state.agent} · ${s.observed}`, detail: s.id, id: s.id })),
    { placeHolder: 'Open the timeline of which task?' },
  );
  return picked?.id;
}

export function deactivate(): void {
  /* everything is in context.subscriptions */
}

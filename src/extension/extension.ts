import { loadStartedAt } from './loadClock';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { TaskStore } from '../engine/tasks';
import { createCaesarApi, type CaesarApi } from './api';
import { registerCommands } from './commands';
import type { WindowServices } from './services';
import { DelegateCommands } from './delegate/delegateCommands';
import { registerCaesarMcp } from './mcp/provider';
import { QuestionInbox } from './questions/inbox';
import { BASE_SCHEME, BaseVersionProvider } from './review/baseContent';
import { changeUri } from './review/changeUri';
import { TaskFileDecorations } from './review/decorations';
import { taskMultiDiffContext, trackTaskMultiDiff } from './review/multiDiffContext';
import { ActiveTaskActions } from './review/activeTaskActions';
import { ReviewCommands, type Confirm } from './review/reviewCommands';
import { findCaesarRoot } from './root';
import { showOnStartup } from './startup';
import { CaesarStatus } from './status/statusBar';
import { TaskActions } from './taskActions';
import { LiveTasks, type TaskRoot } from './tasks/liveTasks';
import { TasksTreeProvider, type TaskTreeNode } from './tasks/tree';
import { TaskOverlaps } from './tasks/overlaps';
import { TIMELINE_VIEW_TYPE } from './timeline/panel';
import { TimelinePanels } from './timeline/panels';
import { recordTrustWithWorkspace } from './workspaceTrust';

/** True only in the in-editor tests' bundle (esbuild-extension.mjs defines it for every build of the extension). */
declare const CAESAR_TEST_SEAMS: boolean;

/** Set when the bundle has been evaluated (every import above has run). */
const bundleEvaluatedAt = Date.now();

export async function activate(context: vscode.ExtensionContext): Promise<CaesarApi | undefined> {
  const started = Date.now();
  const log = vscode.window.createOutputChannel('Caesar', { log: true });
  context.subscriptions.push(log);
  const window: WindowServices = { context, log, cliScript: path.join(context.extensionPath, 'dist', 'caesar.js') };
  const roots = taskRootsOf(vscode.workspace.workspaceFolders ?? []);
  // The base side of a diff reads its URI alone (task, commit, root): registered first, so a diff editor restored
  // after a reload is served before the task list has loaded.
  context.subscriptions.push(
    vscode.workspace.registerTextDocumentContentProvider(BASE_SCHEME, new BaseVersionProvider(() => taskRootsOf(vscode.workspace.workspaceFolders ?? []).map((r) => r.root))),
  );
  if (roots.length === 0) {
    context.subscriptions.push(...registerCommands(window));
    log.info('no local folder is open: the Tasks view stays empty');
    return undefined;
  }

  const tasks = new LiveTasks(roots, log);
  const overlaps = new TaskOverlaps(tasks, log);
  const tree = new TasksTreeProvider(tasks, context.workspaceState, overlaps);
  const view = vscode.window.createTreeView<TaskTreeNode>('caesar.tasks', { treeDataProvider: tree, showCollapseAll: true, canSelectMany: true });
  const status = new CaesarStatus(tasks, view as vscode.TreeView<unknown>);
  const timelines = new TimelinePanels(tasks, context.extensionUri, log);
  const delegator = new DelegateCommands({ tasks, tree, view, cliScript: window.cliScript, state: context.workspaceState, log });
  const inbox = new QuestionInbox(tasks, log);
  // Review, apply, discard (review/), the per-task actions, and the MCP server offered to the editor's chat.
  const activeTimelineTask = () => timelines.activeTaskId();
  const review = new ReviewCommands(tasks, activeTimelineTask, log);
  const decorations = new TaskFileDecorations(tasks);
  const actions = new TaskActions({
    tasks, cliScript: window.cliScript, log, activeTimelineTask,
    // The same modal as Apply and Discard (the in-editor tests replace it through review.confirm).
    confirm: (message, detail, action) => review.confirm(message, detail, action),
    reveal: async (id) => {
      await tasks.ready();
      // Best effort: the view may not have re-read its root yet (the task still shows up, at the top).
      if (tasks.get(id)) await view.reveal(tree.nodeFor(id), { select: true, focus: false }).then(undefined, (err: Error) => log.warn(`revealing task ${id}: ${err.message}`));
    },
  });
  // The editor title bars offer what the active editor's task allows (src/common/next-actions.ts).
  const activeTaskActions = new ActiveTaskActions(tasks, timelines);
  // The chat's MCP server works on the first folder's root (one server definition per window).
  const mcp = registerCaesarMcp(window.cliScript, roots[0]!.root, log);
  context.subscriptions.push(
    tasks, overlaps, tree, view, status, timelines, delegator, inbox, decorations,
    vscode.window.registerWebviewPanelSerializer(TIMELINE_VIEW_TYPE, timelines),
    vscode.window.registerFileDecorationProvider(decorations),
    trackTaskMultiDiff(),
    activeTaskActions,
    // What the title bars' context key holds now (read by the tests, as caesar.walkthrough.state; it changes nothing).
    vscode.commands.registerCommand('caesar.activeTaskActions', () => activeTaskActions.current),
    ...registerCommands(window, { ...window, tasks, tree, view, timelines, inbox, delegator, review, actions }),
    ...(mcp?.disposables ?? []),
    // The roots are read once: a folder added later is listed after a reload (said in the log, not guessed at).
    vscode.workspace.onDidChangeWorkspaceFolders(() => log.info('the window’s folders changed: reload the window to list the tasks of added folders')),
    recordTrustWithWorkspace(roots.map((r) => r.root), log),
  );

  const activationMs = Date.now() - started;
  const loadAndActivateMs = Date.now() - loadStartedAt;
  log.info(`activated in ${activationMs} ms (${loadAndActivateMs} ms with loading the bundle); roots ${roots.map((r) => r.root).join(', ')}`);
  void tasks.ready().then(() => log.info(`${tasks.list().length} task(s) listed, ${Date.now() - started} ms after activation began`));
  const startup = () => showOnStartup(tasks, timelines, log).catch((err: Error) => log.warn(`showing the Caesar view on startup: ${err.message}`));
  void startup();

  // The API is the in-editor tests' driver (it answers questions, drives pickers, reaches the store): compiled only
  // into their build (CAESAR_TEST_SEAMS, esbuild-extension.mjs). What ships exports nothing another extension can call.
  return CAESAR_TEST_SEAMS
    ? createCaesarApi({
        roots: roots.map((r) => r.root),
        tasks,
        tree,
        view,
        status,
        timelines,
        delegator,
        inbox,
        cliPath: window.cliScript,
        timing: { activationMs, loadAndActivateMs, bundleEvaluationMs: bundleEvaluatedAt - loadStartedAt },
        showOnStartup: startup,
        review: {
          fileDecoration: (uri) => decorations.provideFileDecoration(uri),
          treeFileUri: changeUri,
          reviewingTaskChanges: taskMultiDiffContext,
          setConfirm: (confirm: Confirm) => {
            const previous = review.confirm;
            review.confirm = confirm;
            return previous;
          },
        },
        ...(mcp ? { mcp: mcp.provider } : {}),
      })
    : undefined;
}

/** One task root per local folder (folders inside the same repository share its root, shown once). */
function taskRootsOf(folders: readonly vscode.WorkspaceFolder[]): TaskRoot[] {
  const roots = new Map<string, TaskRoot>();
  for (const folder of folders) {
    if (folder.uri.scheme !== 'file') continue;
    const root = findCaesarRoot(folder.uri.fsPath);
    if (!roots.has(root)) roots.set(root, { root, name: folder.name, store: new TaskStore(root) });
  }
  return [...roots.values()];
}

export function deactivate(): void {
  /* everything is in context.subscriptions */
}

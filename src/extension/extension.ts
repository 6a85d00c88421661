import { loadStartedAt } from './loadClock';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { TaskStore } from '../engine/store';
import type { CaesarApi, TreeItemSnapshot } from './api';
import { findCaesarRoot } from './root';
import { CaesarStatus } from './status/statusBar';
import { LiveTasks } from './tasks/liveTasks';
import { BASE_SCHEME, BaseRefContentProvider, openChange } from './tasks/review';
import { TaskNode, TasksTreeProvider, type TaskTreeNode } from './tasks/tree';
import { TIMELINE_VIEW_TYPE, TimelinePanels, type TimelinePanel } from './timeline/panel';

/** Set when the bundle has been evaluated (every import above has run). */
const bundleEvaluatedAt = Date.now();

export async function activate(context: vscode.ExtensionContext): Promise<CaesarApi | undefined> {
  const started = Date.now();
  const log = vscode.window.createOutputChannel('Caesar', { log: true });
  context.subscriptions.push(log);
  const folder = vscode.workspace.workspaceFolders?.find((f) => f.uri.scheme === 'file');
  context.subscriptions.push(
    vscode.commands.registerCommand('caesar.showLog', () => log.show()),
    vscode.commands.registerCommand('caesar.delegate', () =>
      vscode.window.showInformationMessage(
        'Caesar: delegating from the editor is not available yet. Run `caesar run --agent demo "objective"` in a terminal; the task appears in the Tasks view.',
      ),
    ),
  );
  if (!folder) {
    log.info('no local folder is open: the Tasks view stays empty');
    return undefined;
  }

  const root = findCaesarRoot(folder.uri.fsPath);
  const store = new TaskStore(root);
  const tasks = new LiveTasks(store, log);
  const tree = new TasksTreeProvider(tasks);
  const view = vscode.window.createTreeView<TaskTreeNode>('caesar.tasks', { treeDataProvider: tree, showCollapseAll: true });
  const status = new CaesarStatus(tasks, view as vscode.TreeView<unknown>);
  const timelines = new TimelinePanels(tasks, context.extensionUri, log);
  context.subscriptions.push(tasks, tree, view, status, timelines);
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
    vscode.commands.registerCommand('caesar.copyTaskId', (node?: TaskNode) => {
      if (node instanceof TaskNode) void vscode.env.clipboard.writeText(node.taskId);
    }),
  );

  const activationMs = Date.now() - started;
  const loadAndActivateMs = Date.now() - loadStartedAt;
  log.info(`activated in ${activationMs} ms (${loadAndActivateMs} ms with loading the bundle); root ${root} (tasks in ${store.tasksDir})`);
  void tasks.ready().then(() => log.info(`${tasks.list().length} task(s) listed, ${Date.now() - started} ms after activation began`));

  // Children are listed for active tasks (the view shows them expanded) and for the ids asked for: listing a finished
  // task's children reads its events, which the view itself only does when the user expands it.
  const snapshot = async (expand: string[] = []): Promise<TreeItemSnapshot[]> => {
    const wanted = (node: TaskTreeNode) => {
      if (!(node instanceof TaskNode)) return false;
      const summary = tasks.get(node.taskId);
      return expand.includes(node.taskId) || (summary !== undefined && (summary.observed === 'running' || summary.observed === 'pending'));
    };
    const walk = async (nodes: TaskTreeNode[], depth: number): Promise<TreeItemSnapshot[]> =>
      Promise.all(
        nodes.map(async (node) => {
          const item = tree.getTreeItem(node);
          const icon = item.iconPath instanceof vscode.ThemeIcon ? item.iconPath.id : '';
          const label = typeof item.label === 'string' ? item.label : (item.label?.label ?? '');
          return {
            id: item.id ?? '',
            label,
            description: typeof item.description === 'string' ? item.description : '',
            icon,
            contextValue: item.contextValue ?? '',
            children: depth === 0 && wanted(node) ? await walk(tree.getChildren(node), 1) : [],
          };
        }),
      );
    return walk(tree.getChildren(), 0);
  };

  const api: CaesarApi = {
    root,
    store,
    activationMs,
    loadAndActivateMs,
    bundleEvaluationMs: bundleEvaluatedAt - loadStartedAt,
    cliPath: path.join(context.extensionPath, 'dist', 'caesar.js'),
    ready: () => tasks.ready(),
    treeSnapshot: snapshot,
    waitForTree: (predicate, timeoutMs, expand) =>
      new Promise((resolve, reject) => {
        const subs: vscode.Disposable[] = [];
        const done = (fn: () => void) => {
          clearTimeout(timer);
          for (const s of subs) s.dispose();
          fn();
        };
        const check = async () => {
          const current = await snapshot(expand);
          if (predicate(current)) done(() => resolve(current));
        };
        const timer = setTimeout(async () => {
          const current = await snapshot(expand);
          done(() => reject(new Error(`tree condition not met within ${timeoutMs} ms; tree: ${JSON.stringify(current, null, 1)}`)));
        }, timeoutMs);
        subs.push(tree.onDidChangeTreeData(() => void check()));
        void check();
      }),
    statusSnapshot: () => ({ text: status.text, badge: view.badge?.value }),
    timeline: {
      open: (taskId) => void timelines.open(taskId),
      stats: (taskId) => timelines.get(taskId)?.stats,
      timing: (taskId) => timelines.get(taskId)?.timing,
      waitForStats: (taskId, predicate, timeoutMs) => {
        let timer: NodeJS.Timeout | undefined;
        let sub: vscode.Disposable | undefined;
        const panelOpen = new Promise<TimelinePanel>((resolve) => {
          const existing = timelines.get(taskId);
          if (existing) return resolve(existing);
          sub = timelines.onDidOpen((p) => p.taskId === taskId && resolve(p));
        });
        const timeout = new Promise<never>((_, reject) => {
          timer = setTimeout(
            () => reject(new Error(`timeline stats condition not met within ${timeoutMs} ms; last: ${JSON.stringify(timelines.get(taskId)?.stats)}`)),
            timeoutMs,
          );
        });
        return Promise.race([panelOpen.then((p) => p.waitForStats(predicate)), timeout]).finally(() => {
          clearTimeout(timer);
          sub?.dispose();
        });
      },
    },
  };
  return api;
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

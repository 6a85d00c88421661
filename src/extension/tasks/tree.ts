import * as vscode from 'vscode';
import { Disposable } from '../../base/disposable';
import { Emitter } from '../../base/event';
import { isActive, reviewOutcome, type TaskSummary } from '../../engine/store';
import type { TaskActivity } from './activity';
import { formatUsage } from './format';
import type { LiveTasks, TaskRoot } from './liveTasks';
import { ChangedFileNode, DetailNode, ErrorNode, FolderNode, MoreNode, QuestionNode, TaskNode, ToolCallNode, UsageNode, type ChangedFile } from './nodes';

export { DetailNode, FolderNode, TaskNode };
export type TaskTreeNode = FolderNode | TaskNode | DetailNode;

/**
 * The "Tasks" tree. It adapts LiveTasks (summaries + folded events) to nodes, one class per kind (tasks/nodes/), and
 * holds nothing else: every label is computed from the caches when VS Code asks for it. Tasks delegated by another
 * task are nested under it (orphans, whose parent is gone, stay at the top); with several folders in the window,
 * the top level is one node per folder.
 */
export class TasksTreeProvider extends Disposable implements vscode.TreeDataProvider<TaskTreeNode> {
  private readonly nodes = new Map<string, TaskNode>();
  private readonly folders = new Map<string, FolderNode>();
  private readonly emitter = this._register(new Emitter<TaskTreeNode | undefined>());
  private readonly served = this._register(new Emitter<{ taskId: string; children: TaskTreeNode[] }>());
  private clock: NodeJS.Timeout | undefined;
  /** The shape of the tree the view was last given or told to re-read (getChildren of the root, a root refresh). */
  private shownShape = '';
  readonly onDidChangeTreeData = this.emitter.event;
  /** Fires with each list of children handed to the view for a task: what a user expanding it was shown. */
  readonly onDidServeChildren = this.served.event;

  constructor(private readonly tasks: LiveTasks) {
    super();
    this._register(
      tasks.onDidChange((ids) => {
        // A root refresh makes VS Code drop its cached nodes and cancel children being fetched (a task being expanded
        // shows nothing new, or only its files): only when a task appeared, went, moved or changed parent. A running
        // task's events change its own row alone.
        const shape = this.shape();
        if (shape !== this.shownShape) {
          this.shownShape = shape; // VS Code re-reads the root on this refresh (or when the view next shows)
          this.emitter.fire(undefined);
        } else {
          for (const id of ids) this.fireFor(id);
        }
        this.updateClock();
      }),
    );
    this._register(tasks.onDidChangeActivity((id) => this.fireFor(id)));
    this._register(
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (e.affectsConfiguration('caesar')) this.emitter.fire(undefined);
      }),
    );
    this._register({ dispose: () => this.clock && clearInterval(this.clock) });
  }

  nodeFor(id: string): TaskNode {
    let node = this.nodes.get(id);
    if (!node) {
      node = new TaskNode(id);
      this.nodes.set(id, node);
    }
    return node;
  }

  private folderNode(root: TaskRoot): FolderNode {
    let node = this.folders.get(root.root);
    if (!node) {
      node = new FolderNode(root.root, root.name);
      this.folders.set(root.root, node);
    }
    return node;
  }

  /** Folders are shown when the window has more than one root. */
  private get grouped(): boolean {
    return this.tasks.roots.length > 1;
  }

  async getChildren(element?: TaskTreeNode): Promise<TaskTreeNode[]> {
    const children = await this.childrenOf(element);
    if (!element) this.shownShape = this.shape();
    if (element instanceof TaskNode) this.served.fire({ taskId: element.taskId, children });
    return children;
  }

  /** The task ids in display order with their parents, as one comparable string. */
  private shape(): string {
    return this.tasks
      .list()
      .map((s) => `${this.tasks.rootOf(s.id)}:${s.id}<${this.tasks.parentOf(s.id) ?? ''}`)
      .join('\n');
  }

  private fireFor(id: string): void {
    const node = this.nodes.get(id);
    if (node) this.emitter.fire(node);
  }

  /** What getChildren answers, for readers other than the view (the test API's snapshot). */
  async childrenOf(element?: TaskTreeNode): Promise<TaskTreeNode[]> {
    if (!element) {
      this.forgetGoneNodes();
      if (this.grouped) return this.tasks.roots.filter((r) => this.tasks.list(r.root).length > 0).map((r) => this.folderNode(r));
      return this.topLevelTasks();
    }
    if (element instanceof FolderNode) return this.topLevelTasks(element.root);
    if (element instanceof TaskNode) {
      // Every answer lists what the events say so far, read before answering: VS Code may not ask again.
      const activity = await this.tasks.activity(element.taskId);
      const summary = this.tasks.get(element.taskId);
      if (!summary) return [];
      return [...this.tasks.subtasksOf(element.taskId).map((s) => this.nodeFor(s.id)), ...detailsOf(summary, activity)];
    }
    return [];
  }

  private topLevelTasks(root?: string): TaskNode[] {
    return this.tasks
      .list(root)
      .filter((s) => this.tasks.parentOf(s.id) === undefined)
      .map((s) => this.nodeFor(s.id));
  }

  private forgetGoneNodes(): void {
    for (const id of this.nodes.keys()) if (!this.tasks.get(id)) this.nodes.delete(id);
  }

  getParent(element: TaskTreeNode): TaskTreeNode | undefined {
    if (element instanceof DetailNode) return this.nodes.get(element.taskId);
    if (element instanceof TaskNode) {
      const parent = this.tasks.parentOf(element.taskId);
      if (parent) return this.nodeFor(parent);
      return this.grouped ? this.folderNode(this.tasks.taskRootOf(element.taskId)) : undefined;
    }
    return undefined;
  }

  getTreeItem(element: TaskTreeNode): vscode.TreeItem {
    if (element instanceof DetailNode) return element.item;
    if (element instanceof FolderNode) {
      const tasks = this.tasks.list(element.root);
      return element.treeItem(tasks.length, tasks.filter((s) => isActive(s.observed)).length);
    }
    const summary = this.tasks.get(element.taskId);
    if (!summary) return new vscode.TreeItem(element.taskId);
    return element.treeItem(summary, this.tasks.subtasksOf(element.taskId).length);
  }

  /** A render clock for elapsed times and silence, running only while some task is active. Reads no file. */
  private updateClock(): void {
    const anyActive = this.tasks.list().some((s) => isActive(s.observed));
    if (anyActive && !this.clock) {
      this.clock = setInterval(() => {
        for (const s of this.tasks.list()) if (isActive(s.observed)) this.emitter.fire(this.nodeFor(s.id));
      }, 1000);
    } else if (!anyActive && this.clock) {
      clearInterval(this.clock);
      this.clock = undefined;
    }
  }
}

/** A task's rows under it: its error, pending questions, reported errors, changed files, usage, latest tool calls. */
function detailsOf(summary: TaskSummary, activity: TaskActivity): DetailNode[] {
  const id = summary.id;
  const out: DetailNode[] = [];
  if (summary.state.error) out.push(new ErrorNode(id, 'state', summary.state.error, true));
  for (const q of summary.pendingQuestions) out.push(new QuestionNode(id, q));
  activity.errors.slice(-10).forEach((e, i) => out.push(new ErrorNode(id, `e${i}`, e.message, e.fatal)));
  out.push(...changedFiles(summary, activity).map((f) => new ChangedFileNode(id, f)));
  const usage = formatUsage(summary.result?.usage ?? summary.state.usage);
  if (usage) out.push(new UsageNode(id, usage));
  const hidden = activity.toolCallCount - activity.toolCalls.length;
  if (hidden > 0) out.push(new MoreNode(id, hidden));
  for (const call of activity.toolCalls) out.push(new ToolCallNode(id, call));
  return out;
}

/** The git-verified diff once the task has a result; until then, the files its events say it touched. */
function changedFiles(summary: TaskSummary, activity: TaskActivity): ChangedFile[] {
  const diffFiles = summary.result?.diff?.files;
  const gone = reviewOutcome(summary) === 'discarded';
  return diffFiles
    ? diffFiles.map((f) => ({ path: f.path, action: f.action as string, counts: f.binary ? 'binary' : `+${f.additions} −${f.deletions}`, gone }))
    : [...activity.files.values()].map((f) => ({ path: f.path, action: f.action, counts: '', gone }));
}

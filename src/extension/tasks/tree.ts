import * as vscode from 'vscode';
import { Disposable } from '../../base/disposable';
import { Emitter } from '../../base/event';
import { isActive, type TaskSummary } from '../../engine/tasks';
import { taskLifecycle } from '../../common/lifecycle';
import { nextActions, offers } from '../../common/next-actions';
import type { TaskActivity } from './activity';
import { formatUsage } from './format';
import type { LiveTasks, TaskRoot } from './liveTasks';
import { ChangedFileNode, DetailNode, ErrorNode, FolderNode, MoreNode, QuestionNode, TaskNode, ToolCallNode, ToolCallsNode, UsageNode, type ChangedFile } from './nodes';
import { TaskFilter } from './taskFilter';
import { overlapDescription, overlapTooltipLines, type TaskOverlaps } from './overlaps';
import { runNumbers, taskTitle } from '../../common/titles';

export { DetailNode, FolderNode, TaskNode };
export type TaskTreeNode = FolderNode | TaskNode | DetailNode;

/**
 * The "Tasks" tree. It adapts LiveTasks (summaries + folded events) to nodes, one class per kind (tasks/nodes/), and
 * holds nothing else: every label is computed from the caches when VS Code asks for it. Tasks delegated by another
 * task are nested under it (orphans, whose parent is gone or filtered out, stay at the top); with several folders in
 * the window, the top level is one node per folder. The filter (./taskFilter.ts) leaves tasks out by category and
 * those Clear Finished hid.
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

  /** Run numbers of re-runs (titles "… #2"), recomputed when the task list changes. */
  private numbers: Map<string, number> | undefined;
  readonly filter: TaskFilter;

  constructor(
    private readonly tasks: LiveTasks,
    memento: vscode.Memento,
    /** Tasks that changed the same files (shown in the row's description and tooltip), when the window tracks them. */
    private readonly overlaps?: TaskOverlaps,
  ) {
    super();
    if (overlaps) this._register(overlaps.onDidChange((ids) => ids.forEach((id) => this.fireFor(id))));
    this.filter = this._register(new TaskFilter(memento));
    this._register(
      this.filter.onDidChange(() => {
        this.shownShape = this.shape();
        this.emitter.fire(undefined);
      }),
    );
    this._register(
      tasks.onDidChange((ids) => {
        this.numbers = undefined;
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

  /** The shown task ids in display order with their parents (and the filter), as one comparable string. */
  private shape(): string {
    return `${this.filter.stamp}\n${this.tasks
      .list()
      .filter((s) => this.filter.visible(s))
      .map((s) => `${this.tasks.rootOf(s.id)}:${s.id}<${this.shownParentOf(s.id) ?? ''}${this.filter.filtering ? `:${categoryKey(s)}` : ''}`)
      .join('\n')}`;
  }

  /** The parent a task is shown under: its listed parent when that one is shown too, else none (the top level). */
  private shownParentOf(id: string): string | undefined {
    const parent = this.tasks.parentOf(id);
    const summary = parent ? this.tasks.get(parent) : undefined;
    return summary && this.filter.visible(summary) ? parent : undefined;
  }

  private shownSubtasksOf(id: string): TaskSummary[] {
    return this.tasks.subtasksOf(id).filter((s) => this.filter.visible(s));
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
      return [...this.shownSubtasksOf(element.taskId).map((s) => this.nodeFor(s.id)), ...detailsOf(summary, activity)];
    }
    if (element instanceof ToolCallsNode) {
      const activity = await this.tasks.activity(element.taskId);
      return toolCallsOf(element.taskId, activity);
    }
    return [];
  }

  private topLevelTasks(root?: string): TaskNode[] {
    return this.tasks
      .list(root)
      .filter((s) => this.filter.visible(s) && this.shownParentOf(s.id) === undefined)
      .map((s) => this.nodeFor(s.id));
  }

  /** The newest task of a root's top level (by creation): shown expanded, as the one a person looks at next. */
  private isNewest(summary: TaskSummary): boolean {
    const root = this.tasks.rootOf(summary.id);
    let newest: TaskSummary | undefined;
    for (const s of this.tasks.list(root)) {
      if (this.tasks.parentOf(s.id) !== undefined || !this.filter.visible(s)) continue;
      if (!newest || s.state.created_at > newest.state.created_at) newest = s;
    }
    return newest?.id === summary.id;
  }

  /** The task's label: its short title, numbered among the runs of one objective in its folder. */
  titleOf(summary: TaskSummary): string {
    if (!this.numbers) {
      this.numbers = new Map();
      for (const root of this.tasks.roots) for (const [id, n] of runNumbers(this.tasks.list(root.root))) this.numbers.set(id, n);
    }
    return taskTitle(summary, this.numbers);
  }

  private forgetGoneNodes(): void {
    for (const id of this.nodes.keys()) if (!this.tasks.get(id)) this.nodes.delete(id);
  }

  getParent(element: TaskTreeNode): TaskTreeNode | undefined {
    if (element instanceof ToolCallNode || element instanceof MoreNode) return this.toolsNodeOf(element.taskId);
    if (element instanceof DetailNode) return this.nodes.get(element.taskId);
    if (element instanceof TaskNode) {
      const parent = this.shownParentOf(element.taskId);
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
    const item = element.treeItem(summary, this.shownSubtasksOf(element.taskId).length, { title: this.titleOf(summary), expand: this.isNewest(summary) });
    this.showOverlaps(item, summary.id);
    return item;
  }

  /** "conflicts with codex · Fix the parser #2" in the description, a line per overlapping task in the tooltip. */
  private showOverlaps(item: vscode.TreeItem, id: string): void {
    const overlaps = this.overlaps?.of(id) ?? [];
    if (overlaps.length === 0) return;
    const nameOf = (other: string) => {
      const s = this.tasks.get(other);
      return s ? `${s.state.agent} · ${this.titleOf(s)}` : other.slice(0, 10);
    };
    item.description = [item.description, overlapDescription(overlaps, nameOf)].filter(Boolean).join(' · ');
    if (item.tooltip instanceof vscode.MarkdownString) for (const line of overlapTooltipLines(overlaps, nameOf)) item.tooltip.appendText(`\n${line}`);
  }

  /** The "N tool calls" row a tool call sits under (rebuilt as the rows are: matched by id). */
  private toolsNodeOf(taskId: string): ToolCallsNode | undefined {
    const summary = this.tasks.get(taskId);
    return summary ? new ToolCallsNode(taskId, 0, 0, isActive(summary.observed)) : undefined;
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

/**
 * A task's rows under it: its error, pending questions, reported errors, changed files, usage, then its tool calls
 * under one "N tool calls" row (files first: what the task did reads before how).
 */
function detailsOf(summary: TaskSummary, activity: TaskActivity): DetailNode[] {
  const id = summary.id;
  const out: DetailNode[] = [];
  if (summary.state.error) out.push(new ErrorNode(id, 'state', summary.state.error, true));
  for (const q of summary.pendingQuestions) out.push(new QuestionNode(id, q));
  activity.errors.slice(-10).forEach((e, i) => out.push(new ErrorNode(id, `e${i}`, e.message, e.fatal)));
  out.push(...changedFiles(summary, activity).map((f) => new ChangedFileNode(id, f)));
  const usage = formatUsage(summary.result?.usage ?? summary.state.usage);
  if (usage) out.push(new UsageNode(id, usage));
  if (activity.toolCallCount > 0) {
    const running = activity.toolCalls.filter((c) => c.status === 'running').length;
    out.push(new ToolCallsNode(id, activity.toolCallCount, running, isActive(summary.observed)));
  }
  return out;
}

/** The rows of "N tool calls": the latest calls kept, after a row standing for the earlier ones. */
function toolCallsOf(id: string, activity: TaskActivity): DetailNode[] {
  const out: DetailNode[] = [];
  const hidden = activity.toolCallCount - activity.toolCalls.length;
  if (hidden > 0) out.push(new MoreNode(id, hidden));
  for (const call of activity.toolCalls) out.push(new ToolCallNode(id, call));
  return out;
}

/** What changes a task's presence in a filtered tree: its category (e.g. finished, applied, discarded). Unfiltered, a
 * task's finish refreshes its own row only (a root refresh cancels children being fetched). */
function categoryKey(s: TaskSummary): string {
  return `${isActive(s.observed) ? 'a' : 'f'}${s.applied ? 'p' : ''}${s.discarded ? 'd' : ''}`;
}

/** The git-verified diff once the task has a result; until then, the files its events say it touched. */
function changedFiles(summary: TaskSummary, activity: TaskActivity): ChangedFile[] {
  const diffFiles = summary.result?.diff?.files;
  const life = taskLifecycle(summary);
  const gone = life.phase === 'discarded';
  // A file is offered to Apply Selected Files while the task's lifecycle offers it and the file was not applied yet.
  const applied = new Set(summary.applied?.files ?? []);
  const open = offers(nextActions(life), 'applySelected');
  return diffFiles
    ? diffFiles.map((f) => ({ path: f.path, action: f.action as string, counts: f.binary ? 'binary' : `+${f.additions} −${f.deletions}`, gone, applicable: open && !applied.has(f.path) }))
    : [...activity.files.values()].map((f) => ({ path: f.path, action: f.action, counts: '', gone }));
}

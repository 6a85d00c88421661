import * as path from 'node:path';
import * as vscode from 'vscode';
import { isActive, type TaskSummary } from '../../engine/store';
import type { ObservedStatus } from '../../protocol';
import { TaskActivity, type ToolCall } from './activity';
import { formatDuration, formatUsage, oneLine } from './format';
import type { LiveTasks } from './liveTasks';
import { changeUri } from '../review/changeUri';

export type TaskTreeNode = TaskNode | DetailNode;

/** One per task id, reused across refreshes: VS Code matches refresh requests to elements by identity. */
export class TaskNode {
  readonly kind = 'task';
  constructor(readonly taskId: string) {}
}

export type DetailKind = 'tool' | 'file' | 'question' | 'error' | 'usage' | 'more';

export class DetailNode {
  constructor(
    readonly kind: DetailKind,
    readonly taskId: string,
    readonly key: string,
    readonly item: vscode.TreeItem,
  ) {}
}

const STATUS_ICONS: Record<ObservedStatus, [string, string]> = {
  pending: ['clock', 'charts.yellow'],
  running: ['sync~spin', 'charts.blue'],
  succeeded: ['pass', 'testing.iconPassed'],
  failed: ['error', 'testing.iconFailed'],
  cancelled: ['circle-slash', 'disabledForeground'],
  timed_out: ['watch', 'charts.orange'],
  lost: ['debug-disconnect', 'charts.orange'],
};


/**
 * The "Tasks" tree. It adapts LiveTasks (summaries + folded events) to tree items and holds nothing else: every
 * label is computed from the caches when VS Code asks for it.
 */
export class TasksTreeProvider implements vscode.TreeDataProvider<TaskTreeNode>, vscode.Disposable {
  private readonly nodes = new Map<string, TaskNode>();
  private readonly emitter = new vscode.EventEmitter<TaskTreeNode | undefined>();
  private readonly served = new vscode.EventEmitter<{ taskId: string; children: DetailNode[] }>();
  private readonly disposables: vscode.Disposable[] = [];
  private clock: NodeJS.Timeout | undefined;
  /** The order of the tasks the view was last given or told to re-read (getChildren of the root, a root refresh). */
  private shownOrder = '';
  readonly onDidChangeTreeData = this.emitter.event;
  /** Fires with each list of details handed to the view for a task: what a user expanding it was shown. */
  readonly onDidServeChildren = this.served.event;

  constructor(private readonly tasks: LiveTasks) {
    this.disposables.push(
      tasks.onDidChange((ids) => {
        // A root refresh makes VS Code drop its cached nodes and cancel children being fetched (a task being expanded
        // shows nothing new, or only its files): only when a task appeared, went or moved. A running task's events
        // change its own row alone.
        const order = this.order();
        if (order !== this.shownOrder) {
          this.shownOrder = order; // VS Code re-reads the root on this refresh (or when the view next shows)
          this.emitter.fire(undefined);
        } else {
          for (const id of ids) this.fireFor(id);
        }
        this.updateClock();
      }),
      tasks.onDidChangeActivity((id) => this.fireFor(id)),
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (e.affectsConfiguration('caesar')) this.emitter.fire(undefined);
      }),
    );
  }

  nodeFor(id: string): TaskNode {
    let node = this.nodes.get(id);
    if (!node) {
      node = new TaskNode(id);
      this.nodes.set(id, node);
    }
    return node;
  }

  async getChildren(element?: TaskTreeNode): Promise<TaskTreeNode[]> {
    const children = await this.childrenOf(element);
    if (!element) this.shownOrder = this.order();
    if (element instanceof TaskNode) this.served.fire({ taskId: element.taskId, children: children as DetailNode[] });
    return children;
  }

  /** The task ids in display order, as one comparable string. */
  private order(): string {
    return this.tasks.list().map((s) => s.id).join('\n');
  }

  private fireFor(id: string): void {
    const node = this.nodes.get(id);
    if (node) this.emitter.fire(node);
  }

  /** What getChildren answers, for readers other than the view (the test API's snapshot). */
  async childrenOf(element?: TaskTreeNode): Promise<TaskTreeNode[]> {
    if (!element) {
      const list = this.tasks.list();
      const live = new Set(list.map((s) => s.id));
      for (const id of this.nodes.keys()) if (!live.has(id)) this.nodes.delete(id);
      return list.map((s) => this.nodeFor(s.id));
    }
    if (element instanceof TaskNode) {
      // Every answer lists what the events say so far, read before answering: VS Code may not ask again.
      const activity = await this.tasks.activity(element.taskId);
      const summary = this.tasks.get(element.taskId);
      return summary ? this.detailsOf(summary, activity) : [];
    }
    return [];
  }

  getParent(element: TaskTreeNode): TaskTreeNode | undefined {
    return element instanceof DetailNode ? this.nodes.get(element.taskId) : undefined;
  }

  getTreeItem(element: TaskTreeNode): vscode.TreeItem {
    if (element instanceof DetailNode) return element.item;
    const summary = this.tasks.get(element.taskId);
    if (!summary) return new vscode.TreeItem(element.taskId);
    return this.taskItem(summary);
  }

  private taskItem(summary: TaskSummary): vscode.TreeItem {
    const { state } = summary;
    const now = Date.now();
    const needsInput = summary.pendingQuestions.length > 0 && isActive(summary.observed);
    const active = isActive(summary.observed);
    const item = new vscode.TreeItem(
      oneLine(state.objective, 80),
      active ? vscode.TreeItemCollapsibleState.Expanded : vscode.TreeItemCollapsibleState.Collapsed,
    );
    item.id = summary.id;
    const silence = silenceMs(summary, now);
    const silent = summary.observed === 'running' && silence > silenceThresholdMs();
    let [icon, color] = STATUS_ICONS[summary.observed];
    if (needsInput) [icon, color] = ['question', 'charts.yellow'];
    else if (silent) color = 'editorWarning.foreground';
    item.iconPath = new vscode.ThemeIcon(icon, new vscode.ThemeColor(color));

    const parts = [state.agent, statusWord(summary, needsInput)];
    const elapsed = elapsedMs(summary, now);
    if (elapsed !== undefined) parts.push(formatDuration(elapsed));
    if (silent) parts.push(`silent ${formatDuration(silence)}`);
    const usage = formatUsage(summary.result?.usage ?? state.usage);
    if (usage) parts.push(usage);
    if (summary.applied) parts.push('applied');
    item.description = parts.filter(Boolean).join(' · ');

    const tip = new vscode.MarkdownString();
    tip.appendText(state.objective); // agent- and user-provided text: never interpreted as markdown
    tip.appendMarkdown('\n\n---\n\n');
    tip.appendText(`${summary.id}\n${state.agent}${state.role ? ` (${state.role})` : ''} · ${summary.observed} · ${state.mode} · ${state.isolation}`);
    if (state.phase && active) tip.appendText(`\n${state.phase}`);
    if (state.error) tip.appendText(`\n${state.error}`);
    if (summary.result) tip.appendText(`\n${summary.result.report.status}: ${summary.result.report.summary}`);
    item.tooltip = tip;
    // task.<status>[.changes][.wt]: `.wt` while the task's worktree is there to review, apply or discard (package.json menus).
    item.contextValue = `task.${needsInput ? 'question' : summary.observed}${summary.result?.diff && !summary.result.diff.is_empty ? '.changes' : ''}${state.worktree && !summary.discarded ? '.wt' : ''}`;
    item.command = { command: 'caesar.openTimeline', title: 'Open Timeline', arguments: [summary.id] };
    return item;
  }

  private detailsOf(summary: TaskSummary, activity: TaskActivity): DetailNode[] {
    const id = summary.id;
    const out: DetailNode[] = [];
    if (summary.state.error) out.push(this.errorNode(id, 'state', summary.state.error, true));
    for (const q of summary.pendingQuestions) {
      const item = new vscode.TreeItem(oneLine(q.question));
      item.id = `${id}/q/${q.id}`;
      item.iconPath = new vscode.ThemeIcon('question', new vscode.ThemeColor('charts.yellow'));
      item.description = q.options.length ? q.options.join(' / ') : 'waiting for an answer';
      item.tooltip = q.question;
      item.contextValue = 'question';
      item.command = { command: 'caesar.answerQuestion', title: 'Answer…', arguments: [id, q.id] };
      out.push(new DetailNode('question', id, q.id, item));
    }
    activity.errors.slice(-10).forEach((e, i) => out.push(this.errorNode(id, `e${i}`, e.message, e.fatal)));
    out.push(...this.fileNodes(summary, activity));
    const usage = formatUsage(summary.result?.usage ?? summary.state.usage);
    if (usage) {
      const item = new vscode.TreeItem(usage);
      item.id = `${id}/usage`;
      item.iconPath = new vscode.ThemeIcon('dashboard');
      item.contextValue = 'usage';
      out.push(new DetailNode('usage', id, 'usage', item));
    }
    const hidden = activity.toolCallCount - activity.toolCalls.length;
    if (hidden > 0) {
      const item = new vscode.TreeItem(`${hidden} earlier tool calls`);
      item.id = `${id}/more`;
      item.description = 'open the timeline to see them';
      item.iconPath = new vscode.ThemeIcon('ellipsis');
      item.command = { command: 'caesar.openTimeline', title: 'Open Timeline', arguments: [id] };
      out.push(new DetailNode('more', id, 'more', item));
    }
    for (const call of activity.toolCalls) out.push(this.toolNode(id, call));
    return out;
  }

  private toolNode(taskId: string, call: ToolCall): DetailNode {
    const item = new vscode.TreeItem(call.tool || 'tool');
    item.id = `${taskId}/tool/${call.index}`;
    const duration = call.endedAt !== undefined ? formatDuration(call.endedAt - call.startedAt) : 'running';
    item.description = [oneLine(call.input, 80), call.status === 'failed' ? `failed · ${duration}` : duration].filter(Boolean).join(' · ');
    item.iconPath =
      call.status === 'running'
        ? new vscode.ThemeIcon('loading~spin')
        : call.status === 'failed'
          ? new vscode.ThemeIcon('error', new vscode.ThemeColor('testing.iconFailed'))
          : new vscode.ThemeIcon('tools');
    item.tooltip = `${call.tool} ${call.input}`.trim();
    item.contextValue = `tool.${call.status}`;
    return new DetailNode('tool', taskId, String(call.index), item);
  }

  private fileNodes(summary: TaskSummary, activity: TaskActivity): DetailNode[] {
    const diffFiles = summary.result?.diff?.files;
    const files = diffFiles
      ? diffFiles.map((f) => ({ path: f.path, action: f.action as string, counts: f.binary ? 'binary' : `+${f.additions} −${f.deletions}` }))
      : [...activity.files.values()].map((f) => ({ path: f.path, action: f.action, counts: '' }));
    return files.map((f) => {
      const item = new vscode.TreeItem(path.basename(f.path));
      item.id = `${summary.id}/file/${f.path}`;
      item.description = [path.dirname(f.path) === '.' ? '' : path.dirname(f.path), f.counts, f.action].filter(Boolean).join(' · ');
      item.iconPath = new vscode.ThemeIcon(FILE_ICONS[f.action] ?? 'diff', new vscode.ThemeColor(FILE_COLORS[f.action] ?? 'foreground'));
      item.tooltip = `${f.action} ${f.path}${f.counts ? ` (${f.counts})` : ''}`;
      item.contextValue = 'file';
      // Carries the added/modified/deleted colour of review/decorations.ts; never opened (the command opens the diff).
      item.resourceUri = changeUri(summary.id, f.path);
      item.command = { command: 'caesar.openChange', title: 'Open Changes', arguments: [summary.id, f.path] };
      return new DetailNode('file', summary.id, f.path, item);
    });
  }

  private errorNode(taskId: string, key: string, message: string, fatal: boolean): DetailNode {
    const item = new vscode.TreeItem(oneLine(message));
    item.id = `${taskId}/error/${key}`;
    item.iconPath = new vscode.ThemeIcon(fatal ? 'error' : 'warning', new vscode.ThemeColor(fatal ? 'errorForeground' : 'editorWarning.foreground'));
    item.tooltip = message;
    item.contextValue = 'error';
    return new DetailNode('error', taskId, key, item);
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

  dispose(): void {
    if (this.clock) clearInterval(this.clock);
    for (const d of this.disposables) d.dispose();
    this.emitter.dispose();
    this.served.dispose();
  }
}

const FILE_ICONS: Record<string, string> = { created: 'diff-added', modified: 'diff-modified', deleted: 'diff-removed', renamed: 'diff-renamed' };
const FILE_COLORS: Record<string, string> = {
  created: 'gitDecoration.addedResourceForeground',
  modified: 'gitDecoration.modifiedResourceForeground',
  deleted: 'gitDecoration.deletedResourceForeground',
  renamed: 'gitDecoration.renamedResourceForeground',
};

function statusWord(summary: TaskSummary, needsInput: boolean): string {
  if (needsInput) return 'needs input';
  if (summary.observed === 'pending') return summary.state.phase ?? 'pending';
  if (summary.observed === 'succeeded' && summary.result && summary.result.report.status !== 'success') return summary.result.report.status;
  return summary.observed.replace('_', ' ');
}

function elapsedMs(summary: TaskSummary, now: number): number | undefined {
  const { state } = summary;
  const start = Date.parse(state.started_at ?? state.created_at);
  if (!Number.isFinite(start)) return undefined;
  const end = state.ended_at ? Date.parse(state.ended_at) : isActive(summary.observed) ? now : undefined;
  return end === undefined ? undefined : end - start;
}

function silenceMs(summary: TaskSummary, now: number): number {
  const last = Date.parse(summary.lastEvent?.at ?? summary.state.started_at ?? summary.state.created_at);
  return Number.isFinite(last) ? now - last : 0;
}

export function silenceThresholdMs(): number {
  const seconds = vscode.workspace.getConfiguration('caesar').get<number>('silenceWarningSeconds', 30);
  return Math.max(5, seconds) * 1000;
}

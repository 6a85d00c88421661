import * as vscode from 'vscode';
import { isActive, type TaskSummary } from '../../../engine/tasks';
import { taskLifecycle, type Lifecycle } from '../../../common/lifecycle';
import { actionsContextValue, nextActions } from '../../../common/next-actions';
import { checksSuffix, type ObservedStatus } from '../../../protocol';
import { formatJob } from '../../../common/format';
import { formatDuration, formatUsage } from '../format';
import { shortTitle } from '../../../common/titles';
import { sandboxMark } from '../sandboxMark';

const STATUS_ICONS: Record<ObservedStatus, [string, string]> = {
  pending: ['clock', 'charts.yellow'],
  queued: ['server-process', 'charts.yellow'],
  running: ['sync~spin', 'charts.blue'],
  succeeded: ['pass', 'testing.iconPassed'],
  failed: ['error', 'testing.iconFailed'],
  cancelled: ['circle-slash', 'disabledForeground'],
  timed_out: ['watch', 'charts.orange'],
  lost: ['debug-disconnect', 'charts.orange'],
  unverified: ['shield', 'charts.red'],
};

/** One per task id, reused across refreshes: VS Code matches refresh requests to elements by identity. */
export class TaskNode {
  readonly kind = 'task';

  constructor(readonly taskId: string) {}

  /**
   * The task's row: its short title (numbered among re-runs; the whole objective is in the tooltip), agent, status,
   * elapsed time, usage; `subtasks` tasks nested under it. Collapsed unless it is active or `expand` (the newest).
   */
  treeItem(summary: TaskSummary, subtasks: number, shown: { title: string; expand: boolean } = { title: shortTitle(summary.state.objective), expand: false }, now = Date.now()): vscode.TreeItem {
    const { state } = summary;
    const life = taskLifecycle(summary);
    const { active } = life;
    const needsInput = life.phase === 'waiting';
    const item = new vscode.TreeItem(shown.title, active || shown.expand ? vscode.TreeItemCollapsibleState.Expanded : vscode.TreeItemCollapsibleState.Collapsed);
    item.id = summary.id;
    const silence = silenceMs(summary, now);
    // A task waiting for an answer is quiet because it waits for the user: that is no silence to warn about.
    const silent = life.phase === 'running' && silence > silenceThresholdMs();
    let [icon, color] = STATUS_ICONS[summary.observed];
    const outcome = life.decision;
    if (needsInput) [icon, color] = ['question', 'charts.yellow'];
    else if (checksSuffix(state)) [icon, color] = ['warning', 'testing.iconFailed'];
    else if (silent) color = 'editorWarning.foreground';
    else if (outcome === 'discarded') [icon, color] = ['trash', 'disabledForeground'];
    item.iconPath = new vscode.ThemeIcon(icon, new vscode.ThemeColor(color));

    const parts = [state.agent, statusWord(summary, life)];
    const elapsed = elapsedMs(summary, now);
    if (elapsed !== undefined) parts.push(formatDuration(elapsed));
    if (silent) parts.push(`silent ${formatDuration(silence)}`);
    const usage = formatUsage(summary.result?.usage ?? state.usage);
    if (usage) parts.push(usage);
    // What the user did with the work, as `caesar ps` says it (engine/store/store reviewOutcome); discarded is the status word.
    if (outcome === 'applied') parts.push(life.phase === 'partly_applied' ? life.label : 'applied');
    if (subtasks) parts.push(`${subtasks} subtask${subtasks === 1 ? '' : 's'}`);
    parts.push(sandboxMark(state)?.word ?? '');
    item.description = parts.filter(Boolean).join(' · ');
    item.tooltip = tooltipOf(summary, active);
    // task:<phase>;<action>;…; the actions open to it (src/common/next-actions.ts): package.json's menus match `;apply;`.
    item.contextValue = actionsContextValue('task', life, nextActions(life));
    item.command = { command: 'caesar.openTimeline', title: 'Open Timeline', arguments: [summary.id] };
    return item;
  }
}

function tooltipOf(summary: TaskSummary, active: boolean): vscode.MarkdownString {
  const { state } = summary;
  const tip = new vscode.MarkdownString();
  tip.appendText(state.objective); // agent- and user-provided text: never interpreted as markdown
  tip.appendMarkdown('\n\n---\n\n');
  tip.appendText(`${summary.id}\n${state.agent}${state.role ? ` (${state.role})` : ''} · ${summary.observed} · ${state.mode} · ${state.isolation}`);
  if (state.parent_task_id) tip.appendText(`\ndelegated by task ${state.parent_task_id}`);
  const sandbox = sandboxMark(state);
  if (sandbox) tip.appendText(`\n${sandbox.hover}`);
  if (state.phase && active) tip.appendText(`\n${state.phase}`);
  if (summary.job) tip.appendText(`\n${formatJob(summary.job)}`);
  if (state.error) tip.appendText(`\n${state.error}`);
  // Records that are not Caesar's, an older one put back, a log cut short: said, never passed over (record-order.ts).
  for (const why of summary.unverified) tip.appendText(`\n${why}`);
  if (summary.result) tip.appendText(`\n${summary.result.report.status}: ${summary.result.report.summary}`);
  for (const check of summary.result?.checks ?? []) tip.appendText(`\ncheck ${check.name}: ${check.exit_code === 0 && !check.error ? 'passed' : `failed (${check.error ?? `exit ${check.exit_code}`})`}`);
  return tip;
}

function statusWord(summary: TaskSummary, life: Lifecycle): string {
  if (life.phase === 'waiting') return 'needs input';
  if (life.phase === 'discarded') return 'discarded';
  if (summary.observed === 'pending') return summary.state.phase ?? 'pending';
  if (summary.observed === 'queued') return `queued · ${formatJob(summary.job) ?? 'by Slurm'}`;
  if (summary.observed === 'succeeded' && summary.result && summary.result.report.status !== 'success') return summary.result.report.status + checksSuffix(summary.state);
  // "succeeded · checks failed": the agent's verdict, then what Caesar observed running the checks itself.
  return summary.observed.replace('_', ' ') + checksSuffix(summary.state);
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

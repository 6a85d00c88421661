import * as path from 'node:path';
import * as vscode from 'vscode';
import type { TaskSummary } from '../../engine/tasks';
import type { LiveTasks } from '../tasks/liveTasks';
import { ChangedFileNode, DetailNode, TaskNode } from '../tasks/nodes';
import { parseBaseVersionUri } from './baseContent';
import { CHANGE_SCHEME } from './changeUri';
import { multiDiffSides, taskOfMultiDiffTab } from './multiDiffContext';

/** What a command acts on: a task, and the files of it the user chose (none: the whole task). */
export interface TaskTarget {
  taskId: string;
  files?: string[];
}

/**
 * The task (and files) a command was invoked on, from whatever VS Code passes:
 *  - a tree item (TaskNode, or a changed-file DetailNode), with the tree's multi-selection as the second argument;
 *  - a resource of an editor title menu: a `caesar-base:` left side (its query names the task), a `caesar-change:` item or a worktree file;
 *  - a task id string (the timeline, the tests, other commands), with an optional list of files.
 */
export function targetOf(tasks: LiveTasks, arg: unknown, second?: unknown): TaskTarget | undefined {
  if (typeof arg === 'string') {
    const files = Array.isArray(second) && second.every((f) => typeof f === 'string') ? (second as string[]) : undefined;
    return tasks.get(arg) ? { taskId: arg, ...(files?.length ? { files } : {}) } : undefined;
  }
  if (arg instanceof TaskNode || arg instanceof DetailNode) {
    const selected = Array.isArray(second) ? second.filter((n): n is DetailNode | TaskNode => n instanceof TaskNode || n instanceof DetailNode) : [arg];
    const nodes = selected.some((n) => n === arg) ? selected : [arg];
    const files = nodes.filter((n): n is ChangedFileNode => n instanceof ChangedFileNode && n.taskId === arg.taskId).map((n) => n.file);
    return { taskId: arg.taskId, ...(files.length ? { files } : {}) };
  }
  if (arg instanceof vscode.Uri) return targetOfUri(tasks, arg);
  return undefined;
}

/** The task a resource belongs to: one of the schemes above, or a file inside a task's worktree. */
export function targetOfUri(tasks: LiveTasks, uri: vscode.Uri): TaskTarget | undefined {
  const base = parseBaseVersionUri(uri);
  if (base) return tasks.get(base.taskId) ? { taskId: base.taskId, files: [base.file] } : undefined;
  if (uri.scheme === CHANGE_SCHEME) {
    const [, taskId, ...rest] = uri.path.split('/');
    if (!taskId || !tasks.get(taskId)) return undefined;
    return { taskId, ...(rest.length ? { files: [rest.join('/')] } : {}) };
  }
  if (uri.scheme !== 'file') return undefined;
  const found = taskOfWorktreeFile(tasks.list(), uri.fsPath);
  return found ? { taskId: found.summary.id, files: [found.file] } : undefined;
}

/** The task whose worktree holds `file`, and the file's repository-relative path. Compares paths only. */
export function taskOfWorktreeFile(summaries: TaskSummary[], file: string): { summary: TaskSummary; file: string } | undefined {
  for (const summary of summaries) {
    const worktree = summary.state.worktree;
    if (typeof worktree !== 'string' || !file.startsWith(worktree + path.sep)) continue;
    return { summary, file: path.relative(worktree, file).split(path.sep).join('/') };
  }
  return undefined;
}

/** The task shown in the active editor: a diff of a task's file, a worktree file, or a timeline panel. */
export function activeEditorTarget(tasks: LiveTasks, activeTimelineTask: () => string | undefined): TaskTarget | undefined {
  const input = vscode.window.tabGroups.activeTabGroup.activeTab?.input;
  const uris =
    input instanceof vscode.TabInputTextDiff ? [input.modified, input.original]
    : input instanceof vscode.TabInputText ? [input.uri]
    // A multi-file diff ("Review All Changes"): its left sides name the task.
    : (multiDiffSides(input)?.flatMap((d) => [d.original as vscode.Uri | undefined, d.modified as vscode.Uri | undefined]).filter((u): u is vscode.Uri => !!u) ?? []);
  for (const uri of uris) {
    const target = targetOfUri(tasks, uri);
    if (target) return { taskId: target.taskId };
  }
  const reviewed = taskOfMultiDiffTab(vscode.window.tabGroups.activeTabGroup.activeTab);
  if (reviewed && tasks.get(reviewed)) return { taskId: reviewed };
  const timeline = activeTimelineTask();
  return timeline && tasks.get(timeline) ? { taskId: timeline } : undefined;
}

/** Asks which task, among those `eligible`. */
export async function pickTaskTarget(tasks: LiveTasks, eligible: (s: TaskSummary) => boolean, placeHolder: string): Promise<TaskTarget | undefined> {
  const items = tasks
    .list()
    .filter(eligible)
    .map((s) => ({ label: s.state.objective, description: `${s.state.agent} · ${s.observed} · ${whenLabel(s)}`, id: s.id }));
  if (items.length === 0) {
    void vscode.window.showInformationMessage('Caesar: no task to choose from for this command.');
    return undefined;
  }
  const picked = await vscode.window.showQuickPick(items, { placeHolder });
  return picked ? { taskId: picked.id } : undefined;
}

/** When a task started, as a picker tells re-runs of one objective apart ("14:02", or "3 Dec 14:02" before today). */
export function whenLabel(summary: TaskSummary, now = new Date()): string {
  const at = new Date(summary.state.started_at ?? summary.state.created_at);
  if (Number.isNaN(at.getTime())) return '';
  const time = at.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit', hour12: false });
  return at.toDateString() === now.toDateString() ? time : `${at.toLocaleDateString([], { day: 'numeric', month: 'short' })} ${time}`;
}

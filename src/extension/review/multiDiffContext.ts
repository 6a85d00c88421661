import * as vscode from 'vscode';
import { BASE_SCHEME } from './baseContent';

/**
 * The context key the multi-file diff editor's title menu reads (package.json: `activeEditor == multiDiffEditor &&
 * caesar.reviewingTaskChanges`): true while the active editor is a multi-file diff of a task's changes. VS Code gives a multi-file diff editor no resource of ours (its source URI is one
 * `vscode.changes` makes up), so the menu cannot tell ours from Source Control's by `resourceScheme`.
 */
export const REVIEWING_TASK_KEY = 'caesar.reviewingTaskChanges';

/**
 * The file diffs of a multi-file diff editor's tab (VS Code's TabInputTextMultiDiff, which @types/vscode 1.101 does not
 * declare: read by shape), or undefined for any other tab. A side may be missing at run time despite the type: an
 * added file has no original, a deleted one no modified.
 */
export function multiDiffSides(input: unknown): vscode.TabInputTextDiff[] | undefined {
  const diffs = (input as { textDiffs?: unknown } | undefined)?.textDiffs;
  return Array.isArray(diffs) ? diffs.filter((d): d is vscode.TabInputTextDiff => d instanceof vscode.TabInputTextDiff) : undefined;
}

/** A file inside a task's worktree (`.caesar/wt/<id>/…`), as package.json's other title menus match them. */
const WORKTREE_FILE = /[\\/]\.caesar[\\/]wt[\\/][^\\/]+[\\/]/;

/** True when the tab is a multi-file diff of a task's changes: a base side of ours, or a side in a task's worktree. */
export function isTaskMultiDiff(input: unknown): boolean {
  const ours = (uri: vscode.Uri | undefined) => !!uri && (uri.scheme === BASE_SCHEME || (uri.scheme === 'file' && WORKTREE_FILE.test(uri.fsPath)));
  return !!multiDiffSides(input)?.some((d) => ours(d.original as vscode.Uri | undefined) || ours(d.modified as vscode.Uri | undefined));
}

let shown: boolean | undefined;
/**
 * The titles Review All Changes gave its editors, and their tasks: the extension may learn a multi-file diff tab's
 * file diffs late, or not at all (seen with a task whose files were all added), but its label at once.
 */
const openedTitles = new Map<string, string>();

/** Review All Changes is opening a multi-file diff editor titled `title` for `taskId`. */
export function noteTaskMultiDiff(title: string, taskId: string): void {
  openedTitles.set(title, taskId);
}

/** The task whose Review All Changes editor the tab is, by the title it was given (VS Code adds " (N files)"). */
export function taskOfMultiDiffTab(tab: vscode.Tab | undefined): string | undefined {
  if (!tab || tab.input instanceof vscode.TabInputText || tab.input instanceof vscode.TabInputTextDiff) return undefined;
  for (const [title, taskId] of openedTitles) if (tab.label.startsWith(title)) return taskId;
  return undefined;
}

function isTaskMultiDiffTab(tab: vscode.Tab | undefined): boolean {
  return !!tab && (isTaskMultiDiff(tab.input) || taskOfMultiDiffTab(tab) !== undefined);
}

/**
 * Sets the context key from the active tab. Called on every tab change, and by Review All Changes once its editor is
 * open: the tab-change event of a new multi-file diff editor may come before its file diffs are known.
 */
export function refreshTaskMultiDiffContext(): void {
  const now = isTaskMultiDiffTab(vscode.window.tabGroups.activeTabGroup.activeTab);
  if (now === shown) return;
  shown = now;
  void vscode.commands.executeCommand('setContext', REVIEWING_TASK_KEY, now);
}

/** The value last given to the context key (tests read it: no API reads a context key). */
export function taskMultiDiffContext(): boolean {
  return shown ?? false;
}

export function trackTaskMultiDiff(): vscode.Disposable {
  refreshTaskMultiDiffContext();
  return vscode.Disposable.from(
    vscode.window.tabGroups.onDidChangeTabs(refreshTaskMultiDiffContext),
    vscode.window.tabGroups.onDidChangeTabGroups(refreshTaskMultiDiffContext),
  );
}

import * as vscode from 'vscode';
import { BASE_SCHEME } from './baseContent';

/**
 * The context key the multi-file diff editor's title menu reads (package.json: `activeEditor == multiDiffEditor &&
 * caesar.reviewingTaskChanges`): true while the active editor is a multi-file diff of a task's changes (its left sides
 * are `caesar-base:` URIs). VS Code gives a multi-file diff editor no resource of ours (its source URI is one
 * `vscode.changes` makes up), so the menu cannot tell ours from Source Control's by `resourceScheme`.
 */
export const REVIEWING_TASK_KEY = 'caesar.reviewingTaskChanges';

/**
 * The file diffs of a multi-file diff editor's tab (VS Code's TabInputTextMultiDiff, which @types/vscode 1.101 does not
 * declare: read by shape), or undefined for any other tab.
 */
export function multiDiffSides(input: unknown): vscode.TabInputTextDiff[] | undefined {
  const diffs = (input as { textDiffs?: unknown } | undefined)?.textDiffs;
  return Array.isArray(diffs) ? diffs.filter((d): d is vscode.TabInputTextDiff => d instanceof vscode.TabInputTextDiff) : undefined;
}

/** True when the tab is a multi-file diff of a task's changes. */
export function isTaskMultiDiff(input: unknown): boolean {
  return !!multiDiffSides(input)?.some((d) => d.original.scheme === BASE_SCHEME);
}

export function trackTaskMultiDiff(): vscode.Disposable {
  let last: boolean | undefined;
  const update = () => {
    const now = isTaskMultiDiff(vscode.window.tabGroups.activeTabGroup.activeTab?.input);
    if (now === last) return;
    last = now;
    void vscode.commands.executeCommand('setContext', REVIEWING_TASK_KEY, now);
  };
  update();
  return vscode.Disposable.from(vscode.window.tabGroups.onDidChangeTabs(update), vscode.window.tabGroups.onDidChangeTabGroups(update));
}

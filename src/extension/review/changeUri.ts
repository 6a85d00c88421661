import * as vscode from 'vscode';

/** The scheme of the Tasks tree's changed-file items (`caesar-change:/<taskId>/<path>`): decorated, never opened. */
export const CHANGE_SCHEME = 'caesar-change';

/** The tree-item URI of one of a task's changed files. */
export function changeUri(taskId: string, file: string): vscode.Uri {
  return vscode.Uri.from({ scheme: CHANGE_SCHEME, path: `/${taskId}/${file}` });
}

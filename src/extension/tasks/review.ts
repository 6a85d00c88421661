import * as vscode from 'vscode';
import { RecordRefused, readBaseVersion, taskVersionPath } from '../../engine/record-checks';
import type { LiveTasks } from './liveTasks';

export const BASE_SCHEME = 'caesar-base';

/** Shown instead of running git when the workspace is not trusted: a cloned repository's records name its fields. */
export const UNTRUSTED_REVIEW =
  'This workspace is not trusted. Task records in it may come from a cloned repository, so Caesar runs no git and ' +
  "opens no file on a record's say-so here. Trust the workspace (Workspaces: Manage Workspace Trust) to review this task's changes.";

/**
 * Serves a file as it was at the task's base commit: `caesar-base:/<taskId>/<path>`, read with
 * `git cat-file blob <base_ref>:<path>` in this root's repository, after the record's fields are checked
 * (engine/record-checks). A file the task created has no base: it is served empty.
 */
export class BaseRefContentProvider implements vscode.TextDocumentContentProvider {
  constructor(private readonly tasks: LiveTasks) {}

  static uriFor(taskId: string, file: string): vscode.Uri {
    return vscode.Uri.from({ scheme: BASE_SCHEME, path: `/${taskId}/${file}` });
  }

  async provideTextDocumentContent(uri: vscode.Uri): Promise<string> {
    const [, taskId, ...rest] = uri.path.split('/');
    const file = rest.join('/');
    const summary = taskId ? this.tasks.get(taskId) : undefined;
    if (!summary) throw new Error(`Unknown task ${taskId}`);
    if (!vscode.workspace.isTrusted) return UNTRUSTED_REVIEW;
    if (summary.state.base_ref === undefined) return '';
    try {
      // undefined: not in the base, the task created it.
      return (await readBaseVersion(this.tasks.store.root, summary.state, file))?.toString('utf8') ?? '';
    } catch (err) {
      if (err instanceof RecordRefused) return `Caesar refused this task record: ${err.message}`;
      return '';
    }
  }
}

/** Opens the native diff editor: the base version on the left, the task's version (its worktree) on the right. */
export async function openChange(tasks: LiveTasks, taskId: string, file: string): Promise<void> {
  const summary = tasks.get(taskId);
  if (!summary) throw new Error(`Unknown task ${taskId}`);
  if (!vscode.workspace.isTrusted) {
    void vscode.window.showWarningMessage(`Caesar: ${UNTRUSTED_REVIEW}`);
    return;
  }
  // Throws RecordRefused (shown by the caller) for a worktree that is not this repository's, or a path with "..".
  const right = vscode.Uri.file(await taskVersionPath(tasks.store.root, summary.state, file));
  if (!summary.state.base_ref) {
    await vscode.commands.executeCommand('vscode.open', right);
    return;
  }
  const left = BaseRefContentProvider.uriFor(taskId, file);
  await vscode.commands.executeCommand('vscode.diff', left, right, `${file} (${taskId.slice(0, 10)}: base ↔ task)`);
}

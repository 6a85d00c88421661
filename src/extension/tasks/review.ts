import { execFile } from 'node:child_process';
import * as path from 'node:path';
import { promisify } from 'node:util';
import * as vscode from 'vscode';
import type { LiveTasks } from './liveTasks';

const exec = promisify(execFile);
export const BASE_SCHEME = 'caesar-base';

/**
 * Serves a file as it was at the task's base commit: `caesar-base:/<taskId>/<path>`, read with
 * `git show <base_ref>:<path>` in the task's repository. A file the task created has no base: it is served empty.
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
    const { base_ref: baseRef, worktree, root } = summary.state;
    if (!baseRef) return '';
    try {
      const { stdout } = await exec('git', ['show', `${baseRef}:${file}`], { cwd: worktree ?? root, maxBuffer: 64 * 1024 * 1024 });
      return stdout;
    } catch {
      return ''; // not in the base: the task created it
    }
  }
}

/** Opens the native diff editor: the base version on the left, the task's version (its worktree) on the right. */
export async function openChange(tasks: LiveTasks, taskId: string, file: string): Promise<void> {
  const summary = tasks.get(taskId);
  if (!summary) throw new Error(`Unknown task ${taskId}`);
  const where = summary.state.worktree ?? summary.state.workspace;
  const right = vscode.Uri.file(path.join(where, file));
  if (!summary.state.base_ref) {
    await vscode.commands.executeCommand('vscode.open', right);
    return;
  }
  const left = BaseRefContentProvider.uriFor(taskId, file);
  await vscode.commands.executeCommand('vscode.diff', left, right, `${file} (${taskId.slice(0, 10)}: base ↔ task)`);
}

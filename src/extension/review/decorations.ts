import * as vscode from 'vscode';
import { Disposable } from '../../base/disposable';
import { Emitter } from '../../base/event';
import type { TaskSummary } from '../../engine/tasks';
import type { LiveTasks } from '../tasks/liveTasks';
import { CHANGE_SCHEME, changeUri } from './changeUri';
import { taskOfWorktreeFile } from './target';

const BADGES: Record<string, string> = { created: 'A', modified: 'M', deleted: 'D', renamed: 'R' };
const COLORS: Record<string, string> = {
  created: 'gitDecoration.addedResourceForeground',
  modified: 'gitDecoration.modifiedResourceForeground',
  deleted: 'gitDecoration.deletedResourceForeground',
  renamed: 'gitDecoration.renamedResourceForeground',
};

/**
 * Colours a task's changed files as git colours its own (A/M/D/R badges): the Tasks tree's file items
 * (`caesar-change:/<taskId>/<path>`) and the files in the task's worktree (the right side of its diffs, the
 * explorer). Reads the task's result (git-verified diff) from LiveTasks: no file, no git.
 */
export class TaskFileDecorations extends Disposable implements vscode.FileDecorationProvider {
  private readonly changed = this._register(new Emitter<vscode.Uri[]>());
  readonly onDidChangeFileDecorations = this.changed.event;

  constructor(private readonly tasks: LiveTasks) {
    super();
    this._register(
      tasks.onDidChange((ids) => {
        const uris = ids.flatMap((id) => {
          const summary = tasks.get(id);
          return summary ? decoratedUris(summary) : [];
        });
        if (uris.length) this.changed.fire(uris);
      }),
    );
  }

  provideFileDecoration(uri: vscode.Uri): vscode.FileDecoration | undefined {
    let summary: TaskSummary | undefined;
    let file: string | undefined;
    if (uri.scheme === CHANGE_SCHEME) {
      const [, taskId, ...rest] = uri.path.split('/');
      summary = taskId ? this.tasks.get(taskId) : undefined;
      file = rest.join('/');
    } else if (uri.scheme === 'file') {
      const found = taskOfWorktreeFile(this.tasks.list(), uri.fsPath);
      summary = found?.summary;
      file = found?.file;
    }
    const change = summary?.result?.diff?.files.find((f) => f.path === file);
    if (!summary || !change) return undefined;
    const action = change.action as string;
    const decoration = new vscode.FileDecoration(
      BADGES[action] ?? 'M',
      `${action[0]?.toUpperCase()}${action.slice(1)} by task ${summary.id} (${summary.state.agent})`,
      new vscode.ThemeColor(COLORS[action] ?? COLORS.modified!),
    );
    return decoration;
  }
}

function decoratedUris(summary: TaskSummary): vscode.Uri[] {
  const files = summary.result?.diff?.files ?? [];
  const worktree = summary.state.worktree;
  return files.flatMap((f) => [changeUri(summary.id, f.path), ...(worktree ? [vscode.Uri.joinPath(vscode.Uri.file(worktree), f.path)] : [])]);
}

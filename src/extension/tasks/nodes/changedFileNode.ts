import * as path from 'node:path';
import * as vscode from 'vscode';
import { changeUri } from '../../review/changeUri';
import { DetailNode } from './detailNode';

const FILE_ICONS: Record<string, string> = { created: 'diff-added', modified: 'diff-modified', deleted: 'diff-removed', renamed: 'diff-renamed' };
const FILE_COLORS: Record<string, string> = {
  created: 'gitDecoration.addedResourceForeground',
  modified: 'gitDecoration.modifiedResourceForeground',
  deleted: 'gitDecoration.deletedResourceForeground',
  renamed: 'gitDecoration.renamedResourceForeground',
};

export interface ChangedFile {
  path: string;
  action: string;
  /** "+3 −1", "binary", or '' when only the agent's events name the file. */
  counts: string;
  /** The task's worktree was removed (discarded): the task's version of the file is gone, nothing to open. */
  gone?: boolean;
  /** Apply Selected Files may take it: the task's lifecycle offers it and this file was not applied yet. */
  applicable?: boolean;
}

/** A file the task changed; a click opens its diff (base ↔ task). */
export class ChangedFileNode extends DetailNode {
  readonly kind = 'file';

  constructor(taskId: string, f: ChangedFile) {
    const item = new vscode.TreeItem(path.basename(f.path));
    item.id = `${taskId}/file/${f.path}`;
    item.description = [path.dirname(f.path) === '.' ? '' : path.dirname(f.path), f.counts, f.action].filter(Boolean).join(' · ');
    item.iconPath = new vscode.ThemeIcon(FILE_ICONS[f.action] ?? 'diff', new vscode.ThemeColor(FILE_COLORS[f.action] ?? 'foreground'));
    item.tooltip = `${f.action} ${f.path}${f.counts ? ` (${f.counts})` : ''}`;
    // `file` while Apply Selected Files can still take it (the task's lifecycle allows it, the file is not applied yet),
    // `file.done` once not (package.json menus); `file.gone` with the worktree.
    item.contextValue = f.gone ? 'file.gone' : f.applicable ? 'file' : 'file.done';
    // Carries the added/modified/deleted colour of review/decorations.ts; never opened (the command opens the diff).
    item.resourceUri = changeUri(taskId, f.path);
    if (f.gone) {
      item.description = [item.description, 'discarded'].filter(Boolean).join(' · ');
      item.tooltip = `${f.action} ${f.path}: discarded with the task's worktree, there is nothing left to open`;
      item.iconPath = new vscode.ThemeIcon(FILE_ICONS[f.action] ?? 'diff', new vscode.ThemeColor('disabledForeground'));
    } else {
      item.command = { command: 'caesar.openChange', title: 'Open Changes', arguments: [taskId, f.path] };
    }
    super(taskId, f.path, item);
  }

  /** The repository-relative path of the file. */
  get file(): string {
    return this.key;
  }
}

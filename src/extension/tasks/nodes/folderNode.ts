import * as vscode from 'vscode';

/** One workspace folder's tasks, when the window has several folders with tasks (multi-root workspaces). */
export class FolderNode {
  readonly kind = 'folder';

  constructor(
    /** The caesar root the folder's tasks live in. */
    readonly root: string,
    readonly name: string,
  ) {}

  treeItem(taskCount: number, active: number): vscode.TreeItem {
    const item = new vscode.TreeItem(this.name, vscode.TreeItemCollapsibleState.Expanded);
    item.id = `folder:${this.root}`;
    item.iconPath = vscode.ThemeIcon.Folder;
    item.description = [`${taskCount} task${taskCount === 1 ? '' : 's'}`, active ? `${active} active` : ''].filter(Boolean).join(' · ');
    item.tooltip = this.root;
    item.contextValue = 'folder';
    return item;
  }
}

import * as vscode from 'vscode';
import { DetailNode } from './detailNode';

/**
 * "N tool calls", collapsed: the task's tool calls under one row, after its files, so a task's result reads first
 * (as Source Control lists changes, not commands). Its children are the tree's to compute (the latest calls).
 */
export class ToolCallsNode extends DetailNode {
  readonly kind = 'tools';

  /** `live`: the task is active, so the row starts expanded (its calls are watched as they run); another id then, so
   * the finished task's row starts collapsed whatever the live one was. */
  constructor(taskId: string, count: number, running: number, live: boolean) {
    const item = new vscode.TreeItem(`${count} tool call${count === 1 ? '' : 's'}`, live ? vscode.TreeItemCollapsibleState.Expanded : vscode.TreeItemCollapsibleState.Collapsed);
    item.id = `${taskId}/tools${live ? '/live' : ''}`;
    item.description = running ? `${running} running` : '';
    item.iconPath = new vscode.ThemeIcon(running ? 'loading~spin' : 'tools');
    item.contextValue = 'tools';
    super(taskId, 'tools', item);
  }
}

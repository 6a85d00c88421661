import * as vscode from 'vscode';
import { DetailNode } from './detailNode';

/** Tokens and cost the agent reported. */
export class UsageNode extends DetailNode {
  readonly kind = 'usage';

  constructor(taskId: string, usage: string) {
    const item = new vscode.TreeItem(usage);
    item.id = `${taskId}/usage`;
    item.iconPath = new vscode.ThemeIcon('dashboard');
    item.contextValue = 'usage';
    super(taskId, 'usage', item);
  }
}

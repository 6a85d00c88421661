import * as vscode from 'vscode';
import { oneLine } from '../format';
import { DetailNode } from './detailNode';

/** An error the task reported (fatal in red, a warning otherwise). */
export class ErrorNode extends DetailNode {
  readonly kind = 'error';

  constructor(taskId: string, key: string, message: string, fatal: boolean) {
    const item = new vscode.TreeItem(oneLine(message));
    item.id = `${taskId}/error/${key}`;
    item.iconPath = new vscode.ThemeIcon(fatal ? 'error' : 'warning', new vscode.ThemeColor(fatal ? 'errorForeground' : 'editorWarning.foreground'));
    item.tooltip = message;
    item.contextValue = 'error';
    super(taskId, key, item);
  }
}

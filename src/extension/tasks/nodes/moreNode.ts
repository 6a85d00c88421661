import * as vscode from 'vscode';
import { DetailNode } from './detailNode';

/** Stands for the tool calls the tree leaves out (it keeps the latest only); a click opens the timeline. */
export class MoreNode extends DetailNode {
  readonly kind = 'more';

  constructor(taskId: string, hidden: number) {
    const item = new vscode.TreeItem(`${hidden} earlier tool calls`);
    item.id = `${taskId}/more`;
    item.description = 'open the timeline to see them';
    item.iconPath = new vscode.ThemeIcon('ellipsis');
    item.command = { command: 'caesar.openTimeline', title: 'Open Timeline', arguments: [taskId] };
    super(taskId, 'more', item);
  }
}

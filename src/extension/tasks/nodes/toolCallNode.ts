import * as vscode from 'vscode';
import type { ToolCall } from '../activity';
import { formatDuration, oneLine } from '../format';
import { DetailNode } from './detailNode';

/** One tool call of the agent: spinner while it runs, its duration when done, red when it failed. */
export class ToolCallNode extends DetailNode {
  readonly kind = 'tool';

  constructor(taskId: string, call: ToolCall) {
    const item = new vscode.TreeItem(call.tool || 'tool');
    item.id = `${taskId}/tool/${call.index}`;
    const duration = call.endedAt !== undefined ? formatDuration(call.endedAt - call.startedAt) : 'running';
    item.description = [oneLine(call.input, 80), call.status === 'failed' ? `failed · ${duration}` : duration].filter(Boolean).join(' · ');
    item.iconPath =
      call.status === 'running'
        ? new vscode.ThemeIcon('loading~spin')
        : call.status === 'failed'
          ? new vscode.ThemeIcon('error', new vscode.ThemeColor('testing.iconFailed'))
          : new vscode.ThemeIcon('tools');
    item.tooltip = `${call.tool} ${call.input}`.trim();
    item.contextValue = `tool.${call.status}`;
    super(taskId, String(call.index), item);
  }
}

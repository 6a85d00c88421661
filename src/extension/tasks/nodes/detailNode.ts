import type * as vscode from 'vscode';

/** A row under a task (tool call, changed file, question, error, usage, "earlier calls"): built once, shown as is. */
export abstract class DetailNode {
  abstract readonly kind: 'tool' | 'tools' | 'file' | 'question' | 'error' | 'usage' | 'more';

  constructor(
    readonly taskId: string,
    /** What identifies the row within its task: a question id, a file path, a tool call's index. */
    readonly key: string,
    readonly item: vscode.TreeItem,
  ) {}
}

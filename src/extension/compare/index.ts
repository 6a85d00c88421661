import type * as vscode from 'vscode';
import type { WorkspaceServices } from '../services';
import { createCompare } from './compareCommands';

export { COMPARE_SCHEME, createCompare, type Compare, type CompareShown } from './compareCommands';
export { compareMarkdown, figuresOf } from './compareTable';

/** Compare Tasks and Compare File Across Tasks (see compareCommands.ts), wired to the window's services. */
export function registerCompareCommands(services: WorkspaceServices): vscode.Disposable[] {
  return [createCompare({ tasks: services.tasks, log: services.log })];
}

import type * as vscode from 'vscode';
import type { WorkspaceServices } from '../services';
import { createLand } from './landCommands';

export { SEND_TO_AGENT, createLand, type LandChoice, type LandDeps, type LandShown } from './landCommands';

/** Land and Land Selected Tasks (see landCommands.ts), wired to the window's services. */
export function registerLandCommands(services: WorkspaceServices): vscode.Disposable[] {
  const { tasks, cliScript, log } = services;
  return [createLand({ tasks, cliScript, log })];
}

import * as vscode from 'vscode';
import type { WindowServices } from '../services';

/** The walkthrough's id in package.json `contributes.walkthroughs`. */
export const WALKTHROUGH_ID = 'caesar.getStarted';

/**
 * "Caesar: Get Started with Caesar" opens the walkthrough (delegate the demo agent → watch → answer → review → apply).
 * Its steps' buttons are the real commands (links in package.json), so the walkthrough needs no code of its own.
 */
export function registerWalkthroughCommands(services: Pick<WindowServices, 'context'>): vscode.Disposable[] {
  const extensionId = services.context.extension.id;
  return [
    vscode.commands.registerCommand('caesar.openWalkthrough', () =>
      vscode.commands.executeCommand('workbench.action.openWalkthrough', `${extensionId}#${WALKTHROUGH_ID}`, false),
    ),
  ];
}

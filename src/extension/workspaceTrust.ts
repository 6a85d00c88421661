import * as vscode from 'vscode';
import { homeDir, trustRepositoryConfig, trustStorePath } from '../config';

/*
 * Workspace Trust and `caesar trust` agree: when VS Code trusts the folder (at activation, or when the user grants it
 * later), the extension records the digest of each repository config file naming programs in the same trust store
 * `caesar trust` writes, so the CLI and the MCP server in that folder use what the editor uses. It says what it
 * recorded: always in the log, and in a notification the first time a given content is recorded (a later change to
 * the file is new content, recorded when the folder is next trusted or the window reloads, and said again).
 */
export function recordTrustWithWorkspace(roots: readonly string[], log: vscode.LogOutputChannel): vscode.Disposable {
  const record = () => {
    if (!vscode.workspace.isTrusted) return;
    for (const root of roots) void recordRoot(root, log);
  };
  record();
  return vscode.workspace.onDidGrantWorkspaceTrust(record);
}

async function recordRoot(root: string, log: vscode.LogOutputChannel): Promise<void> {
  const home = homeDir();
  try {
    const recorded = await trustRepositoryConfig(root, home, 'VS Code Workspace Trust');
    for (const entry of recorded) {
      log.info(`the folder is trusted, so Caesar recorded ${entry.file} (sha256 ${entry.sha256}) as trusted in ${trustStorePath(home)}; it allows: ${entry.allows.join('; ')}`);
    }
    if (recorded.length) {
      const files = recorded.map((r) => r.file).join(', ');
      void vscode.window.showInformationMessage(
        `Caesar: this folder is trusted, so its configuration (${files}) is now trusted for the caesar CLI and MCP server too: ${recorded.flatMap((r) => r.allows).join('; ')}. \`caesar trust --revoke\` undoes it.`,
      );
    }
  } catch (err) {
    log.warn(`recording the folder's trust for the caesar CLI: ${(err as Error).message}`);
  }
}

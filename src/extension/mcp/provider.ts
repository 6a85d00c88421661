import * as vscode from 'vscode';
import { Disposable } from '../../base/disposable';
import { Emitter } from '../../base/event';

export const MCP_PROVIDER_ID = 'caesar';
export const MCP_SERVER_LABEL = 'Caesar';

/** What the editor runs for the `caesar` MCP server: the bundled CLI under the editor's own Node.js. */
export interface CaesarMcpLaunch {
  command: string;
  args: string[];
  env: Record<string, string>;
}

export function caesarMcpLaunch(cliScript: string, root: string): CaesarMcpLaunch {
  return {
    command: process.execPath,
    args: [cliScript, 'mcp', 'serve', '--root', root],
    // The extension host's executable is Electron (or code-server's Node): this makes it behave as plain Node.js.
    env: { ELECTRON_RUN_AS_NODE: '1' },
  };
}

/**
 * Offers the `caesar` stdio MCP server (`dist/caesar.js mcp serve --root <root>`) to the editor's chat, so its agent
 * can delegate; tasks it starts appear in the Tasks view like any other. Offers nothing in an untrusted workspace
 * (the server would run agents on the repository's say-so) and re-announces itself when trust is granted.
 */
export class CaesarMcpProvider extends Disposable implements vscode.McpServerDefinitionProvider<vscode.McpStdioServerDefinition> {
  private readonly changed = this._register(new Emitter<void>());
  readonly onDidChangeMcpServerDefinitions = this.changed.event;

  constructor(
    private readonly cliScript: string,
    private readonly root: string,
  ) {
    super();
    this._register(vscode.workspace.onDidGrantWorkspaceTrust(() => this.changed.fire()));
  }

  provideMcpServerDefinitions(): vscode.McpStdioServerDefinition[] {
    if (!vscode.workspace.isTrusted) return [];
    const launch = caesarMcpLaunch(this.cliScript, this.root);
    const server = new vscode.McpStdioServerDefinition(MCP_SERVER_LABEL, launch.command, launch.args, launch.env);
    server.cwd = vscode.Uri.file(this.root);
    return [server];
  }

  resolveMcpServerDefinition(server: vscode.McpStdioServerDefinition): vscode.McpStdioServerDefinition | undefined {
    return vscode.workspace.isTrusted ? server : undefined;
  }
}

/**
 * Registers the provider where the host has the API (VS Code >= 1.101; other hosts of the extension may lack it).
 * Returns the provider (also for the tests), or undefined when the API is absent.
 */
export function registerCaesarMcp(cliScript: string, root: string, log: vscode.LogOutputChannel): { provider: CaesarMcpProvider; disposables: vscode.Disposable[] } | undefined {
  const lm = (vscode as { lm?: Partial<typeof vscode.lm> }).lm;
  if (typeof lm?.registerMcpServerDefinitionProvider !== 'function' || typeof vscode.McpStdioServerDefinition !== 'function') {
    log.info('this editor has no MCP server definition API: the caesar MCP server is not offered to its chat');
    return undefined;
  }
  const provider = new CaesarMcpProvider(cliScript, root);
  return { provider, disposables: [provider, lm.registerMcpServerDefinitionProvider(MCP_PROVIDER_ID, provider)] };
}

import * as assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import * as vscode from 'vscode';
import { EXTENSION_ID, caesar } from './helpers';

describe('MCP for the editor chat', () => {
  it('declares the caesar provider and offers the stdio server: the editor runtime as Node on dist/caesar.js mcp serve --root <root>', async () => {
    const api = await caesar();
    const contributes = (vscode.extensions.getExtension(EXTENSION_ID)!.packageJSON as { contributes: { mcpServerDefinitionProviders?: { id: string; label: string }[] } }).contributes;
    assert.deepEqual(contributes.mcpServerDefinitionProviders, [{ id: 'caesar', label: 'Caesar' }]);
    assert.ok(api.mcp, 'this editor has the MCP API (VS Code >= 1.101), so the provider is registered');

    const servers = (await api.mcp.provideMcpServerDefinitions(new vscode.CancellationTokenSource().token)) ?? [];
    assert.equal(servers.length, 1, 'one server in a trusted workspace');
    const server = servers[0]!;
    assert.ok(server instanceof vscode.McpStdioServerDefinition);
    assert.equal(server.label, 'Caesar');
    assert.equal(server.command, process.execPath);
    assert.deepEqual(server.args, [api.cliPath, 'mcp', 'serve', '--root', api.root]);
    assert.equal(server.env.ELECTRON_RUN_AS_NODE, '1');
    assert.equal(server.cwd?.fsPath, api.root);
    assert.equal(await api.mcp.resolveMcpServerDefinition?.(server, new vscode.CancellationTokenSource().token), server);
  });

  it('that command starts a working server: an MCP client lists its eleven tools', async function () {
    this.timeout(60_000);
    const api = await caesar();
    const [server] = ((await api.mcp!.provideMcpServerDefinitions(new vscode.CancellationTokenSource().token)) ?? []) as vscode.McpStdioServerDefinition[];
    const env: Record<string, string> = {};
    for (const [key, value] of Object.entries({ ...process.env, ...server!.env })) if (typeof value === 'string') env[key] = value;
    const transport = new StdioClientTransport({ command: server!.command, args: server!.args, env, cwd: server!.cwd?.fsPath, stderr: 'pipe' });
    const client = new Client({ name: 'caesar-editor-test', version: '0.0.0' });
    try {
      await client.connect(transport);
      const { tools } = await client.listTools();
      assert.equal(tools.length, 11, tools.map((t) => t.name).join(', '));
      assert.ok(tools.some((t) => t.name === 'caesar_delegate'));
    } finally {
      await client.close();
    }
  });
});

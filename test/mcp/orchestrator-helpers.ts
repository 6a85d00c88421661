import { mkdirSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult, ClientCapabilities } from '@modelcontextprotocol/sdk/types.js';
import { FIXTURE_AGENT, buildCli, makeRepo } from '../engine/runtime/helpers';

/** A temp git repository whose .caesar/config.toml declares the test fixture agent as `[[agent]] fixture`. */
export function makeFixtureRepo(extraToml = ''): string {
  const repo = makeRepo();
  mkdirSync(path.join(repo, '.caesar'), { recursive: true });
  writeFileSync(
    path.join(repo, '.caesar/config.toml'),
    `[[agent]]\nid = "fixture"\nbin = ${JSON.stringify(process.execPath)}\nargs = [${JSON.stringify(FIXTURE_AGENT)}, "--objective={{prompt}}"]\n${extraToml}`,
  );
  return repo;
}

export interface Served {
  client: Client;
  transport: StdioClientTransport;
  stderr: () => string;
  close(): Promise<void>;
}

/**
 * The real thing: the SDK's Client over StdioClientTransport, spawning the built caesar.js as `mcp serve --root`.
 * Tasks the server delegates run under their own detached supervisors, exactly as in production.
 */
export async function serve(root: string, options: { env?: NodeJS.ProcessEnv; capabilities?: ClientCapabilities; setup?: (client: Client) => void } = {}): Promise<Served> {
  const cli = await buildCli();
  const env = { ...process.env, CAESAR_KILL_GRACE_MS: '500', ...options.env } as Record<string, string>;
  const transport = new StdioClientTransport({ command: process.execPath, args: [cli, 'mcp', 'serve', '--root', root], env, stderr: 'pipe', cwd: root });
  let stderr = '';
  transport.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  const client = new Client({ name: 'caesar-test', version: '1.0.0' }, { capabilities: options.capabilities ?? {} });
  options.setup?.(client);
  await client.connect(transport);
  return { client, transport, stderr: () => stderr, close: () => client.close() };
}

export async function call(client: Client, name: string, args: Record<string, unknown> = {}, options: Parameters<Client['callTool']>[2] = {}): Promise<CallToolResult> {
  return (await client.callTool({ name, arguments: args }, undefined, options)) as CallToolResult;
}

/** The structured content of a successful call; fails loudly with the tool's message otherwise. */
export function structured<T = Record<string, any>>(result: CallToolResult): T {
  if (result.isError) throw new Error(`tool error: ${textOf(result)}`);
  if (!result.structuredContent) throw new Error('no structuredContent');
  return result.structuredContent as T;
}

export function textOf(result: CallToolResult): string {
  return result.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n');
}

export const fixtureContext = (fixture: Record<string, unknown>) => JSON.stringify(fixture);

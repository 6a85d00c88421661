import { mkdirSync, mkdtempSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult, ClientCapabilities } from '@modelcontextprotocol/sdk/types.js';
import { recordTrust } from '../../src/config/trust';
import { FIXTURE_AGENT, buildCli, makeRepo } from '../engine/runtime/helpers';

/** The private HOME of each fixture repository, whose trust store trusts the repository's config (see serve()). */
const trustingHomes = new Map<string, string>();

/**
 * A temp git repository whose .caesar/config.toml declares the test fixture agent as `[[agent]] fixture`. A config
 * naming a program is used only once trusted (src/config/trust.ts): the repository gets a private HOME, and serve()
 * records the config there as trusted (as `caesar trust` would) before starting the server with that HOME.
 */
export function makeFixtureRepo(extraToml = ''): string {
  const repo = makeRepo();
  mkdirSync(path.join(repo, '.caesar'), { recursive: true });
  writeFileSync(
    path.join(repo, '.caesar/config.toml'),
    `[[agent]]\nid = "fixture"\nbin = ${JSON.stringify(process.execPath)}\nargs = [${JSON.stringify(FIXTURE_AGENT)}, "--objective={{prompt}}"]\n${extraToml}`,
  );
  trustingHomes.set(repo, realpathSync(mkdtempSync(path.join(tmpdir(), 'caesar-mcp-home-'))));
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
  const home = trustingHomes.get(root);
  if (home) {
    const file = path.join(root, '.caesar/config.toml');
    await recordTrust(home, file, readFileSync(file, 'utf8'), 'test');
  }
  const env = { ...process.env, CAESAR_KILL_GRACE_MS: '500', ...(home ? { HOME: home } : {}), ...options.env } as Record<string, string>;
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

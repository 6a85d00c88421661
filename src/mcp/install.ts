import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { parse as parseToml } from 'smol-toml';
import { readTextOrEmpty, writeFileAtomic } from '../base/atomic';

/**
 * `caesar mcp install|uninstall <client>`: registers the orchestrator server in an MCP client's own configuration
 * file. Every edit is a merge: other servers and settings are kept, a file that does not parse is refused rather than
 * overwritten, and writes are atomic. TOML (codex) is edited as text so the user's comments survive.
 */

export const MCP_CLIENTS = ['claude', 'codex', 'copilot', 'opencode', 'gemini', 'vscode'] as const;
export type McpClient = (typeof MCP_CLIENTS)[number];
export type InstallScope = 'user' | 'project';

export const SERVER_KEY = 'caesar';

export interface ServerCommand {
  command: string;
  args: string[];
}

export interface InstallTarget {
  client: McpClient;
  scope: InstallScope;
  file: string;
  format: 'json' | 'toml';
  /** Where the entry lives in a JSON file, e.g. ["mcpServers"]; the entry's key is SERVER_KEY. */
  container: string[];
}

export interface InstallPlan {
  target: InstallTarget;
  /** The file's text before and after; equal when there is nothing to change. */
  before: string;
  after: string;
  changed: boolean;
}

export class McpInstallError extends Error {
  override readonly name = 'McpInstallError';
  readonly exitCode = 2;
}

/** Where each client reads its MCP servers from (user = the person's own config, project = the repository's). */
export function installTarget(client: McpClient, scope: InstallScope, root: string, home: string, env: NodeJS.ProcessEnv = process.env): InstallTarget {
  const xdgConfig = env.XDG_CONFIG_HOME || path.join(home, '.config');
  const json = (file: string, container: string[]): InstallTarget => ({ client, scope, file, format: 'json', container });
  switch (client) {
    case 'claude':
      return scope === 'user' ? json(path.join(home, '.claude.json'), ['mcpServers']) : json(path.join(root, '.mcp.json'), ['mcpServers']);
    case 'codex':
      return { client, scope, file: scope === 'user' ? path.join(env.CODEX_HOME || path.join(home, '.codex'), 'config.toml') : path.join(root, '.codex', 'config.toml'), format: 'toml', container: ['mcp_servers'] };
    case 'copilot':
      if (scope === 'project') throw new McpInstallError('Copilot CLI reads MCP servers from your user configuration only: use --scope user.');
      return json(path.join(env.COPILOT_HOME || path.join(home, '.copilot'), 'mcp-config.json'), ['mcpServers']);
    case 'opencode':
      return scope === 'user' ? json(path.join(xdgConfig, 'opencode', 'opencode.json'), ['mcp']) : json(path.join(root, 'opencode.json'), ['mcp']);
    case 'gemini':
      return scope === 'user' ? json(path.join(home, '.gemini', 'settings.json'), ['mcpServers']) : json(path.join(root, '.gemini', 'settings.json'), ['mcpServers']);
    case 'vscode':
      return scope === 'user' ? json(path.join(xdgConfig, 'Code', 'User', 'mcp.json'), ['servers']) : json(path.join(root, '.vscode', 'mcp.json'), ['servers']);
  }
}

/** The entry each client expects for a stdio server. */
export function serverEntry(client: McpClient, server: ServerCommand): Record<string, unknown> {
  switch (client) {
    case 'opencode':
      return { type: 'local', command: [server.command, ...server.args], enabled: true };
    case 'copilot':
      return { type: 'local', command: server.command, args: server.args, tools: ['*'] };
    case 'vscode':
    case 'claude':
      return { type: 'stdio', command: server.command, args: server.args };
    default:
      return { command: server.command, args: server.args };
  }
}


/** What `install` (entry given) or `uninstall` (entry undefined) would do to the target's file. Writes nothing. */
export async function planChange(target: InstallTarget, entry: Record<string, unknown> | undefined): Promise<InstallPlan> {
  const before = await readTextOrEmpty(target.file);
  const after = target.format === 'json' ? editJson(target, before, entry) : editToml(target, before, entry);
  return { target, before, after, changed: after !== before };
}

export async function applyPlan(plan: InstallPlan): Promise<void> {
  if (!plan.changed) return;
  await fs.mkdir(path.dirname(plan.target.file), { recursive: true });
  await writeFileAtomic(plan.target.file, plan.after);
}

function editJson(target: InstallTarget, text: string, entry: Record<string, unknown> | undefined): string {
  let doc: Record<string, unknown> = {};
  if (text.trim() !== '') {
    try {
      doc = JSON.parse(text) as Record<string, unknown>;
    } catch (err) {
      throw new McpInstallError(`${target.file} is not valid JSON (${(err as Error).message}); fix it first, caesar does not overwrite it.`);
    }
    if (!doc || typeof doc !== 'object' || Array.isArray(doc)) throw new McpInstallError(`${target.file} does not hold a JSON object; caesar does not overwrite it.`);
  }
  let container: Record<string, unknown> = doc;
  for (const key of target.container) {
    const next = container[key];
    if (next === undefined) {
      if (!entry) return text;
      container[key] = {};
    } else if (!next || typeof next !== 'object' || Array.isArray(next)) {
      throw new McpInstallError(`${target.file}: "${target.container.join('.')}" is not an object; caesar does not overwrite it.`);
    }
    container = container[key] as Record<string, unknown>;
  }
  if (entry) {
    if (JSON.stringify(container[SERVER_KEY]) === JSON.stringify(entry)) return text;
    container[SERVER_KEY] = entry;
  } else {
    if (!(SERVER_KEY in container)) return text;
    delete container[SERVER_KEY];
  }
  const indent = /^\{\s*\n(\s+)/.exec(text)?.[1] ?? '  ';
  return `${JSON.stringify(doc, null, indent.includes('\t') ? '\t' : indent.length)}\n`;
}

const TOML_HEADER = /^\s*\[\[?\s*([^\]]+?)\s*\]\]?\s*(#.*)?$/;

function editToml(target: InstallTarget, text: string, entry: Record<string, unknown> | undefined): string {
  let doc: Record<string, unknown> = {};
  try {
    doc = parseToml(text) as Record<string, unknown>;
  } catch (err) {
    throw new McpInstallError(`${target.file} is not valid TOML (${(err as Error).message}); fix it first, caesar does not overwrite it.`);
  }
  const table = `${target.container.join('.')}.${SERVER_KEY}`;
  const existing = (doc[target.container[0]!] as Record<string, unknown> | undefined)?.[SERVER_KEY];
  const lines = text === '' ? [] : text.replace(/\n$/, '').split('\n');
  // The entry's own table and its sub-tables ([mcp_servers.caesar.env]) are ours to replace; nothing else is touched.
  const ours = (name: string) => name === table || name.startsWith(`${table}.`);
  const kept: string[] = [];
  let inOurs = false;
  let found = false;
  for (const line of lines) {
    const header = TOML_HEADER.exec(line);
    if (header) inOurs = ours(header[1]!.replace(/["']/g, ''));
    if (inOurs) found = true;
    else kept.push(line);
  }
  if (existing !== undefined && !found) {
    throw new McpInstallError(`${target.file} declares ${table} in a form caesar does not edit (an inline table); change it by hand.`);
  }
  if (!entry) return found ? `${trimTrailingBlank(kept).join('\n')}\n` : text;
  const block = [`[${table}]`, `command = ${JSON.stringify(entry.command)}`, `args = [${(entry.args as string[]).map((a) => JSON.stringify(a)).join(', ')}]`];
  const body = trimTrailingBlank(kept);
  const next = `${[...body, ...(body.length ? [''] : []), ...block].join('\n')}\n`;
  return next === text ? text : next;
}

function trimTrailingBlank(lines: string[]): string[] {
  const out = [...lines];
  while (out.length && out[out.length - 1]!.trim() === '') out.pop();
  return out;
}

/** A short before/after of the file for --dry-run: the lines removed (-) and added (+). */
export function describePlan(plan: InstallPlan): string {
  if (!plan.changed) return `${plan.target.file}: already as wanted, nothing to change.`;
  const before = plan.before.split('\n');
  const after = plan.after.split('\n');
  const removed = before.filter((l) => !after.includes(l)).map((l) => `- ${l}`);
  const added = after.filter((l) => !before.includes(l)).map((l) => `+ ${l}`);
  return [`${plan.target.file}${plan.before === '' ? ' (new file)' : ''}:`, ...removed, ...added].join('\n');
}

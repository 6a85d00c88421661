import type { Command } from 'commander';
import {
  ConfigEditError,
  ConfigError,
  allowlistWarning,
  homeDir,
  loadConfig,
  setPolicyValue,
  targetLayer,
  type LayerName,
  type LoadedConfig,
  type Origin,
  type PolicyKey,
  type WriteResult,
} from '../../config';
import { agentCatalogue, DelegationRefusedError, type AgentCatalogue } from '../../engine/tasks';
import { termSafeBlock } from '../format';
import { UsageError, printJson, type CliIo } from '../io';
import { resolveRoot } from '../root';

/**
 * What the configuration commands (init, doctor, agents, policy, role) share: the common options, the context they
 * run in, the write report and the shadowing notice. Every rule lives in src/config (and src/engine for what
 * delegation would pick), shared with the MCP server and the extension; the commands only parse and print.
 */

export interface CommonOptions {
  root?: string;
  json?: boolean;
  global?: boolean;
  local?: boolean;
}

export interface Context {
  io: CliIo;
  root: string;
  home: string;
  env: NodeJS.ProcessEnv;
  json: boolean;
}

export function contextOf(io: CliIo, opts: CommonOptions): Context {
  const root = resolveRoot(io.cwd, opts.root);
  return { io: opts.json ? io : inertIo(io), root, home: homeDir(io.env), env: io.env, json: Boolean(opts.json) };
}

/**
 * The configuration commands print what a repository's config chose (agent names, role prompts, paths) and use no
 * styling of their own: everything they write is made terminal-safe at this boundary (termSafeBlock keeps lines).
 * `--json` output is left as JSON.stringify wrote it.
 */
function inertIo(io: CliIo): CliIo {
  return Object.assign(Object.create(io) as CliIo, { out: (text: string) => io.out(termSafeBlock(text)), err: (text: string) => io.err(termSafeBlock(text)) });
}

/** `--global` or `--local`, never both; neither means the project layer. */
export function scopeOf(opts: CommonOptions): LayerName {
  if (opts.global && opts.local) throw new UsageError('--global and --local are mutually exclusive: pick the one layer to write.');
  return opts.global ? 'global' : opts.local ? 'local' : 'project';
}

export function load(ctx: Context): Promise<LoadedConfig> {
  return loadConfig({ root: ctx.root, home: ctx.home, env: ctx.env });
}

export function catalogueOf(loaded: LoadedConfig, ctx: Context): AgentCatalogue {
  return agentCatalogue(loaded, { env: ctx.env, root: ctx.root });
}

/** Config and policy problems are the caller's to fix: exit 2, one clear message. */
export function configAction<A extends unknown[]>(fn: (...args: A) => Promise<void>): (...args: A) => Promise<void> {
  return async (...args: A) => {
    try {
      await fn(...args);
    } catch (err) {
      if (err instanceof ConfigError || err instanceof ConfigEditError || err instanceof DelegationRefusedError) throw new UsageError(err.message);
      throw err;
    }
  };
}

export function withCommon(command: Command, writes: boolean): Command {
  command.option('--root <dir>', 'the caesar root (default: first ancestor with .caesar/ or .git)').option('--json', 'print JSON only');
  if (writes) command.option('--global', 'write the global layer (~/.config/caesar/config.toml)').option('--local', 'write the local layer (.caesar/config.local.toml, not committed)');
  return command;
}

export function reportWrite(ctx: Context, result: WriteResult, what: string, notices: string[] = []): void {
  if (!result.preserved) notices.push(`${result.file} was rewritten whole (it uses a TOML form caesar does not edit in place): its comments are gone.`);
  if (ctx.json) {
    printJson(ctx.io, { file: result.file, changed: what, preserved_comments: result.preserved, notices });
    return;
  }
  ctx.io.out(`${what} (${result.file})`);
  for (const notice of notices) ctx.io.err(`note: ${notice}`);
}

export function flagOf(scope: Origin): string {
  return scope === 'global' ? ' --global' : scope === 'local' ? ' --local' : '';
}

export function assertKnownAgent(catalogue: AgentCatalogue, id: string): void {
  if (!catalogue.capabilities(id)) throw new UsageError(`Unknown agent "${id}". Known agents: ${catalogue.ids().join(', ')}.`);
}

/** After a write: if a more specific layer still decides the value, the write has no effect yet. Say so. */
export async function shadowNotices(
  ctx: Context,
  written: LayerName,
  originOf: (loaded: LoadedConfig) => Origin | undefined,
  what: string,
  commandFor?: (layerFlag: string) => string,
): Promise<string[]> {
  const after = await load(ctx);
  const origin = originOf(after);
  if (origin && origin !== 'default' && origin !== written) {
    const there = commandFor ? ` (or change it there: ${commandFor(flagOf(origin))})` : '';
    return [`${what} is also set in the ${origin} layer, ${after.files[origin] ?? origin}, which takes precedence: this change has no effect until that one is removed${there}.`];
  }
  return [];
}

/** `allowed`/`denied` edits write the EFFECTIVE list ± the id into the target layer (reference §4.1.8). */
export async function editList(io: CliIo, opts: CommonOptions, list: 'allowed' | 'denied', id: string, op: 'add' | 'remove'): Promise<void> {
  const ctx = contextOf(io, opts);
  const scope = scopeOf(opts);
  const loaded = await load(ctx);
  const catalogue = catalogueOf(loaded, ctx);
  const target = targetLayer(loaded.files, scope);
  const before = loaded.config.policy[list];
  const notices: string[] = [];
  // Unknown ids are accepted (an agent may be declared later, or elsewhere), but a typo deserves a word.
  if (op === 'add' && !catalogue.capabilities(id)) notices.push(`"${id}" is not a known agent (known: ${catalogue.ids().join(', ')}).`);
  if (op === 'add' && before.includes(id)) notices.push(`"${id}" was already in the ${list} list.`);
  if (op === 'remove' && !before.includes(id)) notices.push(`"${id}" was not in the ${list} list.`);
  const next = op === 'add' ? [...before.filter((x) => x !== id), id] : before.filter((x) => x !== id);
  const declared = loaded.layers.find((l) => l.scope === scope)?.data.policy?.[list] !== undefined;
  if (!declared) notices.push(`The ${scope} layer did not declare [policy] ${list}; it now holds the whole effective list (${JSON.stringify(next)}), which replaces the inherited one.`);
  if (list === 'allowed' && op === 'add') {
    const warning = allowlistWarning(before, id);
    if (warning) notices.push(warning);
    if (loaded.config.policy.denied.includes(id)) notices.push(`"${id}" is also denied, and denied wins: caesar agents enable ${id}${flagOf(loaded.provenance.policy.denied)}`);
  }
  const result = await setPolicyValue(target.file, list, next);
  notices.push(...(await shadowNotices(ctx, scope, (l) => l.provenance.policy[list], `[policy] ${list}`)));
  const globalCommand = list === 'denied' ? `caesar agents ${op === 'add' ? 'disable' : 'enable'} ${id} --global` : `caesar policy allow ${id} --global`;
  notices.push(...(await loosenedNotices(ctx, scope, list, globalCommand)));
  const verb = list === 'denied' ? (op === 'add' ? `Disabled ${id}` : `Enabled ${id}`) : op === 'add' ? `Allowed ${id}` : `Removed ${id} from the allowed list`;
  reportWrite(ctx, result, `${verb} in the ${scope} layer`, notices);
}

/** A loosening written to a repository layer is ignored there (src/config/tighten.ts): say so, and where it counts. */
export async function loosenedNotices(ctx: Context, scope: LayerName, key: PolicyKey, globalCommand: string): Promise<string[]> {
  if (scope === 'global') return [];
  const after = await load(ctx);
  if (!after.notes.some((n) => n.key === key && n.scope === scope)) return [];
  return [`This has no effect in the ${scope} layer: a repository's config can only tighten your policy, never loosen it. To loosen it for yourself: ${globalCommand}.`];
}

import { existsSync, promises as fs, statSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parse, TomlError } from 'smol-toml';
import type { z } from 'zod';
import { ConfigError, type ConfigProblem } from './errors';
import { DEFAULT_ROLES } from './roles';
import {
  AgentEntrySchema,
  DEFAULT_POLICY,
  LayerSchema,
  POLICY_TOML_KEY,
  PolicyLayerSchema,
  RoleSchema,
  WorktreeLayerSchema,
  toRoleConfig,
  type AgentEntry,
  type CaesarConfig,
  type Layer,
  type LayerName,
  type Origin,
  type PolicyConfig,
  type PolicyKey,
  type RoleConfig,
  type SandboxConfig,
  type WorktreeConfig,
} from './schema';
import { locateKey, type KeyPath } from './toml-source';

/** The caesar directory name inside a root; kept here (not imported) so config stays independent of the task layout. */
const CAESAR_DIR = '.caesar';

export interface LayerFiles {
  global: string;
  /** Absent when no root is known (e.g. `caesar init --global` outside any project). */
  project?: string;
  local?: string;
}

/** $HOME wins over os.homedir(), so tests and sandboxes can move the global layer. */
export function homeDir(env: NodeJS.ProcessEnv = process.env): string {
  return env.HOME && env.HOME.trim() !== '' ? env.HOME : os.homedir();
}

export function layerFiles(root: string | undefined, home: string): LayerFiles {
  const files: LayerFiles = { global: path.join(home, '.config', 'caesar', 'config.toml') };
  if (root) {
    files.project = path.join(root, CAESAR_DIR, 'config.toml');
    files.local = path.join(root, CAESAR_DIR, 'config.local.toml');
  }
  return files;
}

/** The caesar root of a directory: the first ancestor holding `.caesar/` or `.git`, else the directory itself. */
export function findRoot(start: string): string {
  const absolute = path.resolve(start);
  for (let dir = absolute; ; dir = path.dirname(dir)) {
    if (isDirectory(path.join(dir, CAESAR_DIR)) || existsSync(path.join(dir, '.git'))) return dir;
    if (path.dirname(dir) === dir) return absolute;
  }
}

function isDirectory(p: string): boolean {
  try {
    return statSync(p).isDirectory();
  } catch {
    return false;
  }
}

/** One config file as read from disk: its text (for locating and editing), its raw TOML and its validated form. */
export interface LoadedLayer {
  scope: LayerName;
  file: string;
  text: string;
  raw: Record<string, unknown>;
  data: Layer;
}

/** Reads and validates one layer; a missing file is `undefined`, never an error. */
export async function readLayer(scope: LayerName, file: string): Promise<LoadedLayer | undefined> {
  let text: string;
  try {
    text = await fs.readFile(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return undefined;
    throw new ConfigError(file, [{ key: '', message: (err as Error).message }], `Cannot read config file ${file}: ${(err as Error).message}`);
  }
  const raw = parseToml(file, text);
  return { scope, file, text, raw, data: validateLayer(file, text, raw) };
}

export function parseToml(file: string, text: string): Record<string, unknown> {
  try {
    return parse(text) as Record<string, unknown>;
  } catch (err) {
    if (err instanceof TomlError) {
      const firstLine = err.message.split('\n')[0] ?? err.message;
      throw new ConfigError(
        file,
        [{ key: '', message: firstLine, line: err.line, column: err.column }],
        `Invalid TOML file: ${file} (line ${err.line}, column ${err.column}) — ${firstLine}`,
      );
    }
    throw err;
  }
}

/** Known fields per table, for "unknown field" messages that suggest the right spelling. */
const KNOWN_FIELDS: Record<string, readonly string[]> = {
  '': Object.keys(LayerSchema.shape),
  policy: Object.keys(PolicyLayerSchema.shape),
  worktree: Object.keys(WorktreeLayerSchema.shape),
  role: Object.keys(RoleSchema.shape),
  agent: Object.keys(AgentEntrySchema.shape),
};

export function validateLayer(file: string, text: string, raw: unknown): Layer {
  const result = LayerSchema.safeParse(raw);
  if (result.success) return result.data;
  const problems = result.error.issues.flatMap((issue) => describeIssue(text, issue));
  // In file order, so the first problem named is the first one a reader meets.
  problems.sort((a, b) => (a.line ?? Number.MAX_SAFE_INTEGER) - (b.line ?? Number.MAX_SAFE_INTEGER));
  throw new ConfigError(file, problems);
}

function describeIssue(text: string, issue: z.core.$ZodIssue): ConfigProblem[] {
  const base = issue.path.filter((p): p is string | number => typeof p !== 'symbol');
  if (issue.code === 'unrecognized_keys') {
    const table = typeof base[0] === 'string' ? base[0] : '';
    const known = KNOWN_FIELDS[base.length === 0 ? '' : table] ?? [];
    return issue.keys.map((key) => {
      const at = [...base, key];
      return {
        key: formatPath(at),
        message: `unknown field (check for a typo${known.length ? `; known fields: ${known.join(', ')}` : ''})`,
        line: locateKey(text, at),
      };
    });
  }
  return [{ key: formatPath(base), message: issue.message, line: locateKey(text, base) }];
}

/** `['role', 1, 'mode']` → `role[1].mode`. */
export function formatPath(at: KeyPath): string {
  return at.reduce<string>((out, part) => (typeof part === 'number' ? `${out}[${part}]` : out ? `${out}.${part}` : part), '');
}

export interface Provenance {
  policy: Record<PolicyKey, Origin>;
  worktree: Record<keyof WorktreeConfig, Origin>;
  sandbox: Record<keyof SandboxConfig, Origin>;
  roles: Record<string, Origin>;
  agents: Record<string, Origin>;
  models: Record<string, Origin>;
  transports: Record<string, Origin>;
}

export interface LoadOptions {
  /** The caesar root; without it only the global layer is read. */
  root?: string;
  /** Defaults to $HOME, then os.homedir(). */
  home?: string;
  env?: NodeJS.ProcessEnv;
  /**
   * false = the workspace is untrusted (VS Code Workspace Trust): the project and local layers may not name
   * programs, so their `[[agent]]` entries, `[worktree] setup` and role prompt files escaping `.caesar/` are ignored.
   * The global layer is the user's own and stays trusted. Default true (a terminal user chose to run caesar here).
   */
  trusted?: boolean;
}

export interface LoadedConfig {
  config: CaesarConfig;
  provenance: Provenance;
  root?: string;
  home: string;
  files: LayerFiles;
  /** The layers present on disk, least specific first. */
  layers: LoadedLayer[];
  trusted: boolean;
  /** What an untrusted load ignored, one sentence each, for the UI to show. */
  ignored: string[];
}

export async function loadConfig(options: LoadOptions = {}): Promise<LoadedConfig> {
  const home = options.home ?? homeDir(options.env);
  const root = options.root ? path.resolve(options.root) : undefined;
  const files = layerFiles(root, home);
  const trusted = options.trusted ?? true;
  const layers: LoadedLayer[] = [];
  for (const scope of ['global', 'project', 'local'] as const) {
    const file = files[scope];
    if (!file) continue;
    const layer = await readLayer(scope, file);
    if (layer) layers.push(layer);
  }
  const ignored: string[] = [];
  const effective = layers.map((layer) => (trusted || layer.scope === 'global' ? layer.data : withoutPrograms(layer, root, ignored)));
  const { config, provenance } = mergeLayers(layers.map((layer, i) => ({ scope: layer.scope, data: effective[i]! })));
  return { config, provenance, root, home, files, layers, trusted, ignored };
}

/** The untrusted view of a workspace layer: nothing that would start a program or read outside `.caesar/`. */
function withoutPrograms(layer: LoadedLayer, root: string | undefined, ignored: string[]): Layer {
  const data: Layer = { ...layer.data };
  if (data.agent?.length) {
    ignored.push(`${layer.file}: [[agent]] ${data.agent.map((a) => a.id).join(', ')} ignored: the workspace is not trusted, and an agent entry names a program to run.`);
    delete data.agent;
  }
  if (data.worktree?.setup?.length) {
    ignored.push(`${layer.file}: [worktree] setup ignored: the workspace is not trusted, and setup commands run in a shell.`);
    const { setup: _setup, ...rest } = data.worktree;
    data.worktree = rest;
  }
  // A cloned repository may tighten the sandbox (hide more, require it), never loosen it for its own agents.
  if (data.sandbox && (data.sandbox.mode === 'off' || data.sandbox.mode === 'auto' || data.sandbox.read_write?.length)) {
    ignored.push(`${layer.file}: [sandbox] mode "off"/"auto" and read_write ignored: the workspace is not trusted, and they loosen the sandbox.`);
    const { mode, read_write: _rw, ...rest } = data.sandbox;
    data.sandbox = mode === 'required' ? { ...rest, mode } : rest;
  }
  if (data.role?.length) {
    data.role = data.role.map((role) => {
      if (!role.system_prompt_file || (root && promptFileInsideCaesar(root, role.system_prompt_file))) return role;
      ignored.push(`${layer.file}: role "${role.name}" system_prompt_file ignored: it points outside .caesar/ and the workspace is not trusted.`);
      const { system_prompt_file: _file, ...rest } = role;
      return rest;
    });
  }
  return data;
}

export function rolePromptPath(root: string, file: string): string {
  return path.resolve(root, CAESAR_DIR, file);
}

export function promptFileInsideCaesar(root: string, file: string): boolean {
  const relative = path.relative(path.resolve(root, CAESAR_DIR), rolePromptPath(root, file));
  return relative !== '' && !relative.startsWith('..') && !path.isAbsolute(relative);
}

/**
 * Defaults, then each layer in order: [policy]/[worktree] field by field (a declared list replaces the inherited one),
 * [[role]] by name and [[agent]] by id replaced whole, [models] key by key. Provenance is the last layer declaring.
 */
export function mergeLayers(layers: Array<{ scope: LayerName; data: Layer }>): { config: CaesarConfig; provenance: Provenance } {
  const policy: PolicyConfig = { ...DEFAULT_POLICY, allowed: [], denied: [] };
  const worktree: WorktreeConfig = { copy: [], link: [], setup: [] };
  const sandbox: SandboxConfig = { hide: [], read_write: [] };
  const roles = new Map<string, RoleConfig>(DEFAULT_ROLES.map((r) => [r.name, { ...r, agents: [...r.agents] }]));
  const agents = new Map<string, AgentEntry>();
  const models: Record<string, string> = {};
  const transports: CaesarConfig['transports'] = {};
  const provenance: Provenance = {
    policy: Object.fromEntries(Object.keys(DEFAULT_POLICY).map((k) => [k, 'default'])) as Record<PolicyKey, Origin>,
    worktree: { copy: 'default', link: 'default', setup: 'default', pool: 'default' },
    sandbox: { mode: 'default', hide: 'default', read_write: 'default' },
    roles: Object.fromEntries(DEFAULT_ROLES.map((r) => [r.name, 'default' as Origin])),
    agents: {},
    models: {},
    transports: {},
  };
  for (const { scope, data } of layers) {
    for (const [tomlKey, value] of Object.entries(data.policy ?? {})) {
      if (value === undefined) continue;
      const key = policyKeyOf(tomlKey);
      (policy as unknown as Record<string, unknown>)[key] = Array.isArray(value) ? [...value] : value;
      provenance.policy[key] = scope;
    }
    for (const key of ['copy', 'link', 'setup'] as const) {
      const value = data.worktree?.[key];
      if (value === undefined) continue;
      worktree[key] = [...value];
      provenance.worktree[key] = scope;
    }
    if (data.worktree?.pool !== undefined) {
      worktree.pool = data.worktree.pool;
      provenance.worktree.pool = scope;
    }
    if (data.sandbox?.mode !== undefined) {
      sandbox.mode = data.sandbox.mode;
      provenance.sandbox.mode = scope;
    }
    for (const key of ['hide', 'read_write'] as const) {
      const value = data.sandbox?.[key];
      if (value === undefined) continue;
      sandbox[key] = [...value];
      provenance.sandbox[key] = scope;
    }
    for (const role of data.role ?? []) {
      roles.set(role.name, toRoleConfig(role));
      provenance.roles[role.name] = scope;
    }
    for (const agent of data.agent ?? []) {
      agents.set(agent.id, agent);
      provenance.agents[agent.id] = scope;
    }
    for (const [agent, model] of Object.entries(data.models ?? {})) {
      models[agent] = model;
      provenance.models[agent] = scope;
    }
    for (const [agent, transport] of Object.entries(data.transport ?? {})) {
      transports[agent] = transport;
      provenance.transports[agent] = scope;
    }
  }
  return {
    config: { policy, worktree, sandbox, models, transports, roles: [...roles.values()], agents: [...agents.values()] },
    provenance,
  };
}

function policyKeyOf(tomlKey: string): PolicyKey {
  const found = (Object.keys(POLICY_TOML_KEY) as PolicyKey[]).find((k) => POLICY_TOML_KEY[k] === tomlKey);
  if (!found) throw new Error(`unknown policy key ${tomlKey}`);
  return found;
}

/**
 * The layers (least specific first) whose own data satisfies `pick`, e.g. those declaring a role: removal is only
 * possible from one of them, and the CLI names them when asked to remove from another.
 */
export function declaringLayers(loaded: LoadedConfig, pick: (data: Layer) => boolean): LayerName[] {
  return loaded.layers.filter((layer) => pick(layer.data)).map((layer) => layer.scope);
}

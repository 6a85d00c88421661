import * as path from 'node:path';
import { DEFAULT_ROLES } from './roles';
import {
  DEFAULT_POLICY,
  DEFAULT_CHECK_TIMEOUT_MS,
  POLICY_TOML_KEY,
  toRoleConfig,
  type AgentEntry,
  type CheckConfig,
  type CaesarConfig,
  type LauncherConfig,
  type Layer,
  type LayerName,
  type Origin,
  type PolicyConfig,
  type PolicyKey,
  type RoleConfig,
  type SandboxConfig,
  type WorktreeConfig,
} from './schema';
import { homeDir, layerFiles, readLayer, type LayerFiles, type LoadedLayer } from './layer-files';
import { describePrograms, namesPrograms, programsOf, type LayerPrograms } from './programs';
import { applyRepositoryPolicy, mergeSandbox, type PolicyNote, type TightenedOrigins } from './tighten';
import { configDigest, isTrusted } from './trust';

/*
 * The config layers merged into one: defaults, then global, project and local, each repository layer used whole only
 * once trusted, and allowed only to tighten the user's policy and sandbox (src/config/tighten.ts). Where the files
 * live and how one is read is src/config/layer-files.ts.
 */

export interface Provenance extends TightenedOrigins {
  worktree: Record<keyof WorktreeConfig, Origin>;
  launcher: Record<keyof LauncherConfig, Origin>;
  roles: Record<string, Origin>;
  agents: Record<string, Origin>;
  checks: Record<string, Origin>;
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
   * Who vouches for the repository's layers (project, local), which may name programs (src/config/programs.ts):
   *  - unset (the CLI, the MCP server): the user's trust store decides, file by file (src/config/trust.ts); a layer
   *    naming programs whose exact content is not trusted is loaded without them and listed in `untrusted`;
   *  - false (VS Code: an untrusted workspace): every repository layer is loaded without its programs;
   *  - true (VS Code: a trusted workspace, which records the same trust): the layers are used as they are.
   * The global layer is the user's own and always used whole.
   */
  trusted?: boolean;
}

/** A repository layer naming programs that the user has not trusted in this exact content. */
export interface UntrustedLayer {
  scope: LayerName;
  file: string;
  sha256: string;
  programs: LayerPrograms;
}

export interface LoadedConfig {
  config: CaesarConfig;
  provenance: Provenance;
  root?: string;
  home: string;
  files: LayerFiles;
  /** The layers present on disk, least specific first. */
  layers: LoadedLayer[];
  /** Every layer naming programs is used: vouched for by the caller, or trusted in the trust store. */
  trusted: boolean;
  /** What an untrusted load ignored, one sentence each, for the UI to show. */
  ignored: string[];
  /** The repository layers whose programs were left out because the user has not trusted them (run `caesar trust`). */
  untrusted: UntrustedLayer[];
  /** Loosenings of the user's policy a repository layer asked for and did not get. */
  notes: PolicyNote[];
}

export async function loadConfig(options: LoadOptions = {}): Promise<LoadedConfig> {
  const home = options.home ?? homeDir(options.env);
  const root = options.root ? path.resolve(options.root) : undefined;
  const files = layerFiles(root, home);
  const layers: LoadedLayer[] = [];
  for (const scope of ['global', 'project', 'local'] as const) {
    const file = files[scope];
    if (!file) continue;
    const layer = await readLayer(scope, file);
    if (layer) layers.push(layer);
  }
  const ignored: string[] = [];
  const untrusted: UntrustedLayer[] = [];
  const effective: Layer[] = [];
  for (const layer of layers) {
    if (layer.scope === 'global' || options.trusted === true) {
      effective.push(layer.data);
      continue;
    }
    const programs = await programsOf(layer.data, root);
    if (!namesPrograms(programs)) {
      effective.push(layer.data);
      continue;
    }
    if (options.trusted === undefined && (await isTrusted(home, layer.file, layer.text))) {
      effective.push(layer.data);
      continue;
    }
    if (options.trusted === undefined) untrusted.push({ scope: layer.scope, file: layer.file, sha256: configDigest(layer.text), programs });
    const why = options.trusted === false ? 'the workspace is not trusted' : `${layer.file} is not trusted (run caesar trust)`;
    effective.push(withoutPrograms(layer, programs, why, ignored));
  }
  const { config, provenance, notes } = mergeLayers(layers.map((layer, i) => ({ scope: layer.scope, data: effective[i]! })));
  const trusted = options.trusted ?? untrusted.length === 0;
  return { config, provenance, root, home, files, layers, trusted, ignored, untrusted, notes };
}

/**
 * Why a command will not run here yet, and the command that would change it. Said to a person (the CLI) and to a
 * model (the MCP server), so it also says that trusting is the user's decision, after reading the file.
 */
export function untrustedMessage(untrusted: readonly UntrustedLayer[], root: string): string {
  const lines = [`This repository's caesar configuration names programs you have not trusted, so nothing was run:`];
  for (const layer of untrusted) {
    lines.push(`  ${layer.file} (sha256 ${layer.sha256.slice(0, 12)}…) would allow:`);
    for (const line of describePrograms(layer.programs)) lines.push(`    - ${line}`);
  }
  lines.push(
    `Read the file${untrusted.length > 1 ? 's' : ''}; if you accept what ${untrusted.length > 1 ? 'they allow' : 'it allows'}, trust ${untrusted.length > 1 ? 'them' : 'it'} with: ${trustCommand(root)}`,
    'Only the user should decide this; any later change to the file asks again.',
  );
  return lines.join('\n');
}

/** `caesar trust --root '<root>'`, quoted for a POSIX shell. */
export function trustCommand(root: string): string {
  return `caesar trust --root '${root.replace(/'/g, `'\\''`)}'`;
}

/** The untrusted view of a repository layer: nothing that would start a program or read outside the repository. */
function withoutPrograms(layer: LoadedLayer, programs: LayerPrograms, why: string, ignored: string[]): Layer {
  const data: Layer = { ...layer.data };
  if (data.agent?.length) {
    ignored.push(`${layer.file}: [[agent]] ${data.agent.map((a) => a.id).join(', ')} ignored: ${why}, and an agent entry names a program to run.`);
    delete data.agent;
  }
  if (data.check?.length) {
    ignored.push(`${layer.file}: [[check]] ${data.check.map((c) => c.name).join(', ')} ignored: ${why}, and checks run in a shell.`);
    delete data.check;
  }
  if (data.worktree) {
    const worktree = { ...data.worktree };
    if (worktree.setup?.length) {
      ignored.push(`${layer.file}: [worktree] setup ignored: ${why}, and setup commands run in a shell.`);
      delete worktree.setup;
    }
    for (const kind of ['copy', 'link'] as const) {
      const out = programs.outside.filter((o) => o.kind === kind).map((o) => o.path);
      if (!out.length || !worktree[kind]) continue;
      ignored.push(`${layer.file}: [worktree] ${kind} ${out.join(', ')} ignored: ${why}, and ${out.length === 1 ? 'it leads' : 'they lead'} outside the repository.`);
      worktree[kind] = worktree[kind]!.filter((entry) => !out.includes(entry));
    }
    data.worktree = worktree;
  }
  if (data.launcher?.extra_args?.length) {
    ignored.push(`${layer.file}: [launcher] extra_args ignored: the workspace is not trusted, and they are handed to sbatch.`);
    const { extra_args: _args, ...rest } = data.launcher;
    data.launcher = rest;
  }
  // A cloned repository may tighten the sandbox (hide more, require it), never loosen it for its own agents.
  if (data.sandbox && (data.sandbox.mode === 'off' || data.sandbox.mode === 'auto' || data.sandbox.read_write?.length || data.sandbox.allow_hosts?.length)) {
    ignored.push(`${layer.file}: [sandbox] mode "off"/"auto", read_write and allow_hosts ignored: the workspace is not trusted, and they loosen the sandbox.`);
    const { mode, read_write: _rw, allow_hosts: _hosts, ...rest } = data.sandbox;
    data.sandbox = mode === 'required' ? { ...rest, mode } : rest;
  }
  if (data.role?.length) {
    const outside = new Set(programs.promptFiles.map((p) => p.role));
    data.role = data.role.map((role) => {
      if (role.checks?.length) {
        ignored.push(`${layer.file}: role "${role.name}" checks ignored: ${why}, and checks run in a shell.`);
        const { checks: _checks, ...rest } = role;
        role = rest;
      }
      if (!outside.has(role.name)) return role;
      ignored.push(`${layer.file}: role "${role.name}" system_prompt_file ignored: it points outside .caesar/ and ${why}.`);
      const { system_prompt_file: _file, ...rest } = role;
      return rest;
    });
  }
  return data;
}

/**
 * Defaults, then each layer in order: [policy]/[worktree] field by field (a declared list replaces the inherited one),
 * [[role]] by name and [[agent]] by id replaced whole, [models] key by key. Provenance is the last layer declaring.
 */
export function mergeLayers(layers: Array<{ scope: LayerName; data: Layer }>): { config: CaesarConfig; provenance: Provenance; notes: PolicyNote[] } {
  const policy: PolicyConfig = { ...DEFAULT_POLICY, allowed: [], denied: [] };
  const worktree: WorktreeConfig = { copy: [], link: [], setup: [] };
  const launcher: LauncherConfig = { kind: 'local', extra_args: [] };
  const sandbox: SandboxConfig = { hide: [], read_write: [], allow_hosts: [] };
  const sandboxNotes: string[] = [];
  const roles = new Map<string, RoleConfig>(DEFAULT_ROLES.map((r) => [r.name, { ...r, agents: [...r.agents] }]));
  const agents = new Map<string, AgentEntry>();
  const checks = new Map<string, CheckConfig>();
  const models: Record<string, string> = {};
  const transports: CaesarConfig['transports'] = {};
  const provenance: Provenance = {
    policy: Object.fromEntries(Object.keys(DEFAULT_POLICY).map((k) => [k, 'default'])) as Record<PolicyKey, Origin>,
    worktree: { copy: 'default', link: 'default', setup: 'default', pool: 'default' },
    launcher: { kind: 'default', partition: 'default', time: 'default', cpus: 'default', mem: 'default', extra_args: 'default' },
    sandbox: { mode: 'default', hide: 'default', read_write: 'default', allow_hosts: 'default' },
    roles: Object.fromEntries(DEFAULT_ROLES.map((r) => [r.name, 'default' as Origin])),
    agents: {},
    checks: {},
    models: {},
    transports: {},
  };
  // The repository's layers ask (local over project, field by field); the user's ceiling is decided once the
  // defaults and the global layer are in (src/config/tighten.ts).
  const asked = new Map<PolicyKey, { value: unknown; scope: LayerName }>();
  for (const { scope, data } of layers) {
    for (const [tomlKey, value] of Object.entries(data.policy ?? {})) {
      if (value === undefined) continue;
      const key = policyKeyOf(tomlKey);
      const copy = Array.isArray(value) ? [...value] : value;
      if (scope !== 'global') {
        asked.set(key, { value: copy, scope });
        continue;
      }
      (policy as unknown as Record<string, unknown>)[key] = copy;
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
    for (const [key, value] of Object.entries(data.launcher ?? {}) as [keyof LauncherConfig, unknown][]) {
      if (value === undefined) continue;
      (launcher as unknown as Record<string, unknown>)[key] = Array.isArray(value) ? [...value] : value;
      provenance.launcher[key] = scope;
    }
    mergeSandbox(sandbox, provenance, scope, data.sandbox, sandboxNotes);
    for (const role of data.role ?? []) {
      roles.set(role.name, toRoleConfig(role));
      provenance.roles[role.name] = scope;
    }
    for (const agent of data.agent ?? []) {
      agents.set(agent.id, agent);
      provenance.agents[agent.id] = scope;
    }
    for (const check of data.check ?? []) {
      checks.set(check.name, { name: check.name, command: check.command, timeout_ms: check.timeout ?? DEFAULT_CHECK_TIMEOUT_MS });
      provenance.checks[check.name] = scope;
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
  const notes = applyRepositoryPolicy(policy, provenance, asked);
  // Shown with the policy's notes; the key names the table the repository asked about.
  for (const message of sandboxNotes) notes.push({ key: 'permissions', scope: 'project', message });
  return {
    config: { policy, worktree, launcher, sandbox, models, transports, roles: [...roles.values()], agents: [...agents.values()], checks: [...checks.values()] },
    provenance,
    notes,
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

import { z } from '../protocol/zod';
import { parseDuration } from './durations';

/**
 * The shape of one config file (a "layer") and of the merged configuration. Every table is strict: an unknown key is
 * an error at load, because a typo such as `max_paralel` would otherwise be silently ignored.
 */

export const LAYER_NAMES = ['global', 'project', 'local'] as const;
export type LayerName = (typeof LAYER_NAMES)[number];
/** Where a value comes from: the built-in default or the most specific layer declaring it. */
export type Origin = 'default' | LayerName;

export const MODES = ['read-only', 'write'] as const;
export const ISOLATIONS = ['auto', 'inplace', 'worktree'] as const;
export const NETWORK_REQUESTS = ['auto', 'on', 'off'] as const;
/**
 * What an agent's environment holds: `inherit` passes the caller's whole environment on; `minimal` only the base set
 * (PATH, HOME, locale…), caesar's own variables, the agent's documented keys and `env_allow`.
 */
export const ENV_POLICIES = ['inherit', 'minimal'] as const;
export type EnvPolicyName = (typeof ENV_POLICIES)[number];
/**
 * How caesar talks to an agent: `stream` runs it headless and reads its own JSON stream; `acp` drives it over the
 * Agent Client Protocol, which lets it ask before it runs a command (docs/agents.md says which agents speak it).
 */
export const TRANSPORTS = ['stream', 'acp'] as const;
export type TransportName = (typeof TRANSPORTS)[number];
export const DEFAULT_TRANSPORT: TransportName = 'stream';
/**
 * Who answers an ACP agent's permission requests: `ask` puts each to the user as a question; `allow-in-worktree`
 * allows them when the task runs in a worktree of its own (asks otherwise); `deny` rejects them all. A read-only task
 * never has a write allowed, whatever this says.
 */
export const PERMISSION_POLICIES = ['ask', 'allow-in-worktree', 'deny'] as const;
export type PermissionPolicy = (typeof PERMISSION_POLICIES)[number];
/** An environment variable name, or a prefix ending in `*` (`AWS_*`). */
const envName = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*\*?$/, 'must be an environment variable name (letters, digits, "_"), optionally ending in * for a prefix');
export type ModeName = (typeof MODES)[number];
export type IsolationRequest = (typeof ISOLATIONS)[number];
export type NetworkRequest = (typeof NETWORK_REQUESTS)[number];

export const AGENT_ID_PATTERN = /^[a-zA-Z0-9][a-zA-Z0-9._-]*$/;
/** Tokens a template agent's arguments may use; anything else is a typo caught at load. */
export const TEMPLATE_TOKENS = ['prompt', 'workspace', 'taskDir', 'reportPath', 'model'] as const;

const nonEmpty = z.string().min(1, 'must be a non-empty string');

// Any value goes to parseDuration, so a wrong type also gets the message listing the accepted forms.
const duration = z.unknown().transform((value, ctx) => {
  try {
    return parseDuration(value);
  } catch (err) {
    ctx.addIssue({ code: 'custom', message: (err as Error).message });
    return z.NEVER;
  }
});

/**
 * A path laid down in a worktree: relative, no `..`, not inside `.git` or `.caesar`. Trailing slashes are dropped so
 * prefix exclusion (`node_modules/` vs `node_modules`) behaves.
 */
export function worktreePathProblem(raw: string): string | undefined {
  if (raw.trim() === '') return 'must be a non-empty path';
  if (raw.startsWith('/') || raw.startsWith('\\') || /^[a-zA-Z]:/.test(raw)) return `"${raw}" must be relative to the workspace`;
  const segments = raw.split(/[\\/]+/).filter((s) => s !== '' && s !== '.');
  if (segments.length === 0) return `"${raw}" names the workspace itself`;
  if (segments.includes('..')) return `"${raw}" must not contain ".."`;
  if (segments[0] === '.git' || segments[0] === '.caesar') return `"${raw}" must not be inside ${segments[0]}`;
  return undefined;
}

export function normalizeWorktreePath(raw: string): string {
  return raw.split(/[\\/]+/).filter((s) => s !== '' && s !== '.').join('/');
}

const worktreePath = z.string().transform((value, ctx) => {
  const problem = worktreePathProblem(value);
  if (problem) {
    ctx.addIssue({ code: 'custom', message: problem });
    return z.NEVER;
  }
  return normalizeWorktreePath(value);
});

/** Unknown `{{token}}`s in template arguments, in order of appearance. */
export function unknownTokens(args: readonly string[]): string[] {
  const known = new Set<string>(TEMPLATE_TOKENS);
  const found: string[] = [];
  for (const arg of args) {
    // Same token grammar as the adapter (src/agents/generic.ts): blanks inside the braces are allowed.
    for (const match of arg.matchAll(/\{\{([^{}]*)\}\}/g)) {
      if (!known.has(match[1]!.trim())) found.push(match[0]);
    }
  }
  return found;
}

const templateArgs = z.array(z.string()).superRefine((args, ctx) => {
  const unknown = unknownTokens(args);
  if (unknown.length) {
    ctx.addIssue({ code: 'custom', message: `unknown token ${unknown.join(', ')} (known: ${TEMPLATE_TOKENS.map((t) => `{{${t}}}`).join(', ')})` });
  }
});

export const PolicyLayerSchema = z.strictObject({
  allowed: z.array(nonEmpty).optional(),
  denied: z.array(nonEmpty).optional(),
  max_parallel: z.number().int().positive().optional(),
  default_isolation: z.enum(ISOLATIONS).optional(),
  default_mode: z.enum(MODES).optional(),
  default_network: z.enum(NETWORK_REQUESTS).optional(),
  default_timeout: duration.optional(),
  allow_recursion: z.boolean().optional(),
  allow_inplace_write: z.boolean().optional(),
  max_depth: z.number().int().nonnegative().optional(),
  default_channel: z.boolean().optional(),
  env: z.enum(ENV_POLICIES).optional(),
  env_allow: z.array(envName).optional(),
  permissions: z.enum(PERMISSION_POLICIES).optional(),
});

export const WorktreeLayerSchema = z.strictObject({
  copy: z.array(worktreePath).optional(),
  link: z.array(worktreePath).optional(),
  setup: z.array(nonEmpty).optional(),
  /** Idle pre-checked-out worktrees kept per repository so a task starts without a checkout (0 = off, the default). */
  pool: z.number().int().min(0).max(16).optional(),
});

export const LAUNCHER_KINDS = ['local', 'slurm'] as const;
export type LauncherKind = (typeof LAUNCHER_KINDS)[number];

/** `[launcher]`: where tasks' supervisors run — locally (the default) or as Slurm jobs, with sbatch's resources. */
export const LauncherLayerSchema = z.strictObject({
  kind: z.enum(LAUNCHER_KINDS).optional(),
  partition: nonEmpty.optional(),
  time: nonEmpty.optional(),
  cpus: z.number().int().positive().optional(),
  mem: nonEmpty.optional(),
  extra_args: z.array(nonEmpty).optional(),
});

/**
 * `[sandbox]`: how the agent's process tree is confined (src/engine/sandbox/, docs/sandbox.md). `hide` adds paths the
 * agent may not read (on top of ~/.ssh, ~/.aws… and the other agents' credentials); `read_write` paths it may write
 * besides its workspace. Paths are absolute or start with `~/`.
 */
export const SANDBOX_MODES = ['auto', 'required', 'off'] as const;
export type SandboxModeName = (typeof SANDBOX_MODES)[number];
const sandboxPath = z.string().refine((p) => p.startsWith('/') || p === '~' || p.startsWith('~/'), 'must be an absolute path or start with ~/');
export const SandboxLayerSchema = z.strictObject({
  mode: z.enum(SANDBOX_MODES).optional(),
  hide: z.array(sandboxPath).optional(),
  read_write: z.array(sandboxPath).optional(),
  /** More endpoints a task whose network is cut may reach (`127.0.0.1:8080`, `http://localhost:4000/v1`). */
  allow_hosts: z.array(z.string().trim().min(1)).optional(),
});

export const RoleSchema = z.strictObject({
  name: nonEmpty,
  agents: z.array(nonEmpty),
  mode: z.enum(MODES),
  purpose: z.string().default(''),
  /** Unset isolation/network/timeout inherit the policy defaults (the reference pinned them, hiding the policy). */
  isolation: z.enum(ISOLATIONS).optional(),
  network: z.enum(NETWORK_REQUESTS).optional(),
  timeout: duration.optional(),
  system_prompt_file: nonEmpty.optional(),
  model: nonEmpty.optional(),
  /** Where this role's tasks run (`[launcher]`'s resources apply); unset = the `[launcher]` kind. */
  launcher: z.enum(LAUNCHER_KINDS).optional(),
  /** Shell commands Caesar runs as checks after this role's agent ends, besides every `[[check]]`. */
  checks: z.array(nonEmpty).optional(),
});

/** `[[check]]`: a shell command Caesar runs itself in every task's workspace after the agent ends (run/checks.ts). */
export const CheckEntrySchema = z.strictObject({
  name: z.string().regex(AGENT_ID_PATTERN, 'must start with a letter or digit and use only letters, digits, ".", "_" and "-"'),
  command: nonEmpty,
  /** Killed after this long; unset = DEFAULT_CHECK_TIMEOUT_MS. */
  timeout: duration.optional(),
});

export const AgentEntrySchema = z
  .strictObject({
    id: z.string().regex(AGENT_ID_PATTERN, 'must start with a letter or digit and use only letters, digits, ".", "_" and "-"'),
    bin: z.string().refine((bin) => bin.trim() !== '', 'must name a program (it is empty)'),
    args: templateArgs.default([]),
    network_args: templateArgs.optional(),
    display_name: nonEmpty.optional(),
    cwd_mode: z.enum(['process', 'flag']).optional(),
    native_read_only: z.boolean().optional(),
  })
  .superRefine((entry, ctx) => {
    if (!entry.args.some((arg) => /\{\{\s*prompt\s*\}\}/.test(arg))) {
      ctx.addIssue({ code: 'custom', path: ['args'], message: 'must pass the prompt: add an argument containing {{prompt}}' });
    }
  });

export const LayerSchema = z.strictObject({
  policy: PolicyLayerSchema.optional(),
  worktree: WorktreeLayerSchema.optional(),
  sandbox: SandboxLayerSchema.optional(),
  models: z.record(z.string(), nonEmpty).optional(),
  /** Per agent id: `stream` or `acp` (`[transport] gemini = "acp"`). */
  transport: z.record(z.string(), z.enum(TRANSPORTS)).optional(),
  role: z.array(RoleSchema).optional(),
  agent: z.array(AgentEntrySchema).optional(),
  check: z.array(CheckEntrySchema).optional(),
  launcher: LauncherLayerSchema.optional(),
});

export type PolicyLayer = z.infer<typeof PolicyLayerSchema>;
export type WorktreeLayer = z.infer<typeof WorktreeLayerSchema>;
export type Layer = z.infer<typeof LayerSchema>;
export type AgentEntry = z.infer<typeof AgentEntrySchema>;

export const DEFAULT_CHECK_TIMEOUT_MS = 10 * 60_000;

export interface CheckConfig {
  name: string;
  command: string;
  timeout_ms: number;
}

export interface RoleConfig {
  name: string;
  agents: string[];
  mode: ModeName;
  purpose: string;
  isolation?: IsolationRequest;
  network?: NetworkRequest;
  timeout_ms?: number;
  system_prompt_file?: string;
  model?: string;
  launcher?: LauncherKind;
  checks?: string[];
}

export interface LauncherConfig {
  kind: LauncherKind;
  partition?: string;
  time?: string;
  cpus?: number;
  mem?: string;
  extra_args: string[];
}

export interface PolicyConfig {
  allowed: string[];
  denied: string[];
  max_parallel: number;
  default_isolation: IsolationRequest;
  default_mode: ModeName;
  default_network: NetworkRequest;
  default_timeout_ms: number;
  allow_recursion: boolean;
  allow_inplace_write: boolean;
  /**
   * The deepest delegation allowed, counting a top-level delegation as depth 1. The reference refused at
   * `depth >= max_depth`, so its default 2 allowed a single level (§8.31); here `depth > max_depth` is refused, so
   * the number means what it says: 2 lets a delegated agent delegate once more, 1 lets only the orchestrator delegate,
   * 0 forbids delegation.
   */
  max_depth: number;
  /** Offer the MCP return channel to every delegation that does not say otherwise (`--channel`, `channel: true`). */
  default_channel: boolean;
  /** The agent's environment: `inherit` (everything the caller has) or `minimal`; a request may ask for `minimal` too. */
  env: EnvPolicyName;
  /** Names (or `PREFIX_*`) the `minimal` policy passes on besides the base set and the agent's documented keys. */
  env_allow: string[];
  /** Who answers an ACP agent's permission requests (see PERMISSION_POLICIES). */
  permissions: PermissionPolicy;
}

export type PolicyKey = keyof PolicyConfig;
/** The key as spelled in TOML for each policy field (only the timeout differs: it is stored as a duration). */
export const POLICY_TOML_KEY: Record<PolicyKey, string> = {
  allowed: 'allowed',
  denied: 'denied',
  max_parallel: 'max_parallel',
  default_isolation: 'default_isolation',
  default_mode: 'default_mode',
  default_network: 'default_network',
  default_timeout_ms: 'default_timeout',
  default_channel: 'default_channel',
  allow_recursion: 'allow_recursion',
  allow_inplace_write: 'allow_inplace_write',
  max_depth: 'max_depth',
  env: 'env',
  env_allow: 'env_allow',
  permissions: 'permissions',
};

export interface WorktreeConfig {
  copy: string[];
  link: string[];
  setup: string[];
  /** `[worktree] pool`: warm worktrees kept per repository (worktree-pool.ts); unset = 0, no pool. */
  pool?: number;
}

export interface SandboxConfig {
  /** Unset: the engine's default (`auto`). */
  mode?: SandboxModeName;
  hide: string[];
  read_write: string[];
  allow_hosts: string[];
}

export interface CaesarConfig {
  policy: PolicyConfig;
  worktree: WorktreeConfig;
  launcher: LauncherConfig;
  sandbox: SandboxConfig;
  models: Record<string, string>;
  /** The transport configured per agent id; an agent not listed uses DEFAULT_TRANSPORT. */
  transports: Record<string, TransportName>;
  roles: RoleConfig[];
  agents: AgentEntry[];
  /** `[[check]]`, by name (a later layer's entry of the same name replaces it). */
  checks: CheckConfig[];
}

export const DEFAULT_TIMEOUT_MS = 600_000;

export const DEFAULT_POLICY: PolicyConfig = {
  allowed: [],
  denied: [],
  max_parallel: 4,
  default_isolation: 'auto',
  default_mode: 'write',
  default_network: 'auto',
  default_timeout_ms: DEFAULT_TIMEOUT_MS,
  allow_recursion: false,
  allow_inplace_write: false,
  max_depth: 2,
  default_channel: false,
  env: 'inherit',
  env_allow: [],
  permissions: 'ask',
};

export function toRoleConfig(role: z.infer<typeof RoleSchema>): RoleConfig {
  const { timeout, ...rest } = role;
  return timeout === undefined ? rest : { ...rest, timeout_ms: timeout };
}

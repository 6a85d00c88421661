import * as path from 'node:path';
import { ENV, briefTextTooLarge, isSafeId, type Finding } from '../../protocol';
import {
  DEFAULT_CHECK_TIMEOUT_MS,
  DurationError,
  ENV_POLICIES,
  ISOLATIONS,
  LAUNCHER_KINDS,
  DEFAULT_TRANSPORT,
  TRANSPORTS,
  MODES,
  NETWORK_REQUESTS,
  checkPolicy,
  layerFlag,
  layerLabel,
  delegatingAgent,
  nextDelegationDepth,
  parseDuration,
  pickRoleAgent,
  policyChange,
  readRolePrompt,
  resolveModel,
  resolveNetwork,
  sbatchArgProblem,
  type EnvPolicyName,
  type IsolationRequest,
  type LauncherKind,
  type LoadedConfig,
  type ModeName,
  type NetworkRequest,
  type PolicyRule,
  type RoleConfig,
  type SkippedAgent,
  type TransportName,
  type CaesarConfig,
} from '../../config';
import type { AgentCatalogue } from './agent-catalogue';
import { repoState } from '../git/git';
import type { CheckSpec, Launcher, LaunchSpec } from '../../protocol';

export type { AgentCatalogue } from './agent-catalogue';

/** What a caller asks for (the CLI's `run`, MCP `caesar_delegate`, the extension's Delegate flow). */
export interface DelegationRequest {
  objective: string;
  /** The user's directory the task is about (absolute). */
  workspace: string;
  agent?: string;
  role?: string;
  mode?: ModeName;
  isolation?: IsolationRequest;
  network?: NetworkRequest;
  model?: string;
  /** A duration as the config accepts it ("90s", "10m", 5000). */
  timeout?: string | number;
  context?: string;
  constraints?: string[];
  acceptance_criteria?: string[];
  channel?: boolean;
  extra_args?: string[];
  /**
   * The agent's environment as the caller wants it: `minimal` tightens whatever the policy says (the editor asks for
   * it); `inherit` never loosens a configured `minimal`.
   */
  env?: EnvPolicyName;
  /** Overrides the agent's configured transport (`[transport]`) for this one task. */
  transport?: TransportName;
  /** Where the supervisor runs, for this one task (`[launcher]`'s resources apply to `slurm`). */
  launcher?: LauncherKind;
  /** Shell commands Caesar runs as checks after the agent ends (`--check`), after the configured ones. */
  checks?: string[];
}

export interface ResolveOptions {
  loaded: LoadedConfig;
  catalogue: AgentCatalogue;
  /** The caesar root (holds .caesar/): role prompt files are read from here. */
  root: string;
  /** For $CAESAR_DEPTH; defaults to process.env. */
  env?: NodeJS.ProcessEnv;
}

/** The launch spec minus what delegate() adds when it creates the task directory. */
export type LaunchDraft = Omit<LaunchSpec, 'id' | 'root' | 'created_at'>;

export interface Resolution {
  launch: LaunchDraft;
  /** Agents of the role passed over before the pick, with why. */
  skipped: SkippedAgent[];
  /** Things to tell the user before launch (also present as info findings in launch.findings). */
  warnings: string[];
}

export type RefusalCode =
  | PolicyRule
  | 'usage'
  | 'unknown-role'
  | 'unknown-agent'
  | 'not-installed'
  | 'no-agent'
  | 'model'
  | 'network'
  | 'inplace-write'
  | 'no-worktree'
  | 'role-prompt'
  | 'transport'
  | 'config'
  | 'untrusted';

/**
 * The delegation cannot happen as asked. Raised before anything is written, so a refusal never leaves a task
 * directory behind. A command line maps it to exit 2.
 */
export class DelegationRefusedError extends Error {
  override readonly name = 'DelegationRefusedError';
  readonly exitCode = 2;
  constructor(
    readonly code: RefusalCode,
    message: string,
    readonly remedy?: string,
    readonly skipped: SkippedAgent[] = [],
  ) {
    super(remedy ? `${message}\n${remedy}` : message);
  }
}

/** Reference §4.5, in its order: the first problem found is the one reported. */
export async function resolveDelegation(request: DelegationRequest, options: ResolveOptions): Promise<Resolution> {
  const { config, provenance } = options.loaded;
  const { policy } = config;
  const { catalogue } = options;
  if (!request.objective || request.objective.trim() === '') throw new DelegationRefusedError('usage', 'An objective is required.');
  if (!request.agent && !request.role) throw new DelegationRefusedError('usage', 'Name an agent or a role (--agent <id> or --role <name>).');
  // Callers outside TypeScript (MCP clients) can send anything: check the shape before resolving.
  checkChoice('mode', request.mode, MODES);
  checkChoice('isolation', request.isolation, ISOLATIONS);
  checkChoice('network', request.network, NETWORK_REQUESTS);
  checkChoice('env', request.env, ENV_POLICIES);
  checkChoice('transport', request.transport, TRANSPORTS);
  checkChoice('launcher', request.launcher, LAUNCHER_KINDS);

  let role: RoleConfig | undefined;
  if (request.role) {
    role = config.roles.find((r) => r.name === request.role);
    if (!role) {
      throw new DelegationRefusedError('unknown-role', `Unknown role "${request.role}". Known roles: ${config.roles.map((r) => r.name).join(', ') || 'none'}.`, 'caesar role list');
    }
  }

  const depth = nextDelegationDepth(options.env ?? process.env);
  const parentTaskId = parentTaskOf(options.env ?? process.env);
  // Recursion is decided from the environment every task's agent gets ($CAESAR_DEPTH, $CAESAR_AGENT), never by name.
  const parentAgent = delegatingAgent(options.env ?? process.env);
  const policyCheck = { provenance: provenance.policy, ...(provenance.deniedBy ? { deniedBy: provenance.deniedBy } : {}), ...(parentAgent ? { parentAgent } : {}) };
  let agent: string;
  let skipped: SkippedAgent[] = [];
  if (request.agent) {
    agent = request.agent;
  } else {
    const pick = await pickRoleAgent(role!, {
      unusable: async (id) => {
        if (!catalogue.capabilities(id)) return 'unknown agent';
        if (!(await catalogue.isInstalled(id))) return 'not installed';
        return checkPolicy(policy, id, policyCheck)?.reason;
      },
    });
    if (pick.agent === undefined) throw new DelegationRefusedError('no-agent', pick.reason, 'caesar doctor', pick.skipped);
    agent = pick.agent;
    skipped = pick.skipped;
  }

  const capabilities = catalogue.capabilities(agent);
  if (!capabilities) {
    throw new DelegationRefusedError('unknown-agent', `Unknown agent "${agent}". Known agents: ${catalogue.ids().join(', ')}.`, 'caesar agents list');
  }
  const refusal = checkPolicy(policy, agent, { ...policyCheck, depth });
  if (refusal) throw new DelegationRefusedError(refusal.rule, refusal.reason, refusal.remedy, skipped);
  if (!(await catalogue.isInstalled(agent))) {
    throw new DelegationRefusedError('not-installed', `Agent "${agent}" (${catalogue.displayName(agent)}) is not installed: its program was not found on PATH.`, 'caesar doctor');
  }

  const transport = pickTransport(request.transport, agent, options.loaded, catalogue);
  const mode: ModeName = request.mode ?? role?.mode ?? policy.default_mode;
  const isolation = pickIsolation(request, role, policy.default_isolation);
  const repo = await repoState(request.workspace);
  const noWorktree = repo.kind === 'usable' ? undefined : repo;
  if (isolation.value === 'worktree' && noWorktree) {
    throw new DelegationRefusedError('no-worktree', `Worktree isolation is impossible: isolation "worktree" was ${isolation.source}, and ${noWorktree.message}`, noWorktree.remedy);
  }
  // The policy holds everywhere: where no worktree is possible, "auto" would leave a write task nowhere but in place.
  if (mode === 'write' && (isolation.value === 'inplace' || noWorktree) && !policy.allow_inplace_write) {
    const origin = provenance.policy.allow_inplace_write;
    const allow = `if you accept agents editing your files directly: ${policyChange('allow_inplace_write', 'true', origin)}`;
    const why =
      isolation.value === 'inplace' || !noWorktree ? `isolation "inplace" was ${isolation.source}` : `no worktree is possible here (${noWorktree.message.replace(/\.$/, '')})`;
    throw new DelegationRefusedError(
      'inplace-write',
      `Writing in place is refused: ${why}, and the policy does not allow in-place writes (allow_inplace_write = false, from ${layerLabel(origin)}).`,
      noWorktree ? `${noWorktree.remedy.replace(/\.$/, '')} so the task can run in a worktree, or, ${allow}.` : `Use isolation "worktree" (or "auto"), or, ${allow}.`,
    );
  }

  const findings: Finding[] = [];
  const warnings: string[] = [];
  const networkRequest: NetworkRequest = request.network ?? role?.network ?? policy.default_network;
  const network = resolveNetwork(networkRequest, capabilities.network, mode, agent);
  if ('refused' in network) throw new DelegationRefusedError('network', network.refused, network.remedy);
  if (network.warning) {
    warnings.push(network.warning);
    findings.push({ severity: 'info', title: 'Network not as requested', detail: network.warning });
  }

  const model = resolveModel({ agent, agentAcceptsModel: capabilities.model, explicit: request.model, role, models: config.models });
  if ('refused' in model) throw new DelegationRefusedError('model', model.refused);
  if (model.dropped) {
    warnings.push(model.dropped.detail);
    findings.push({ severity: 'info', title: 'Model not applied', detail: model.dropped.detail });
  }

  const timeout_ms = resolveTimeout(request.timeout, role, policy.default_timeout_ms);

  let rolePrompt = '';
  if (role) {
    try {
      rolePrompt = await readRolePrompt(options.root, role);
    } catch (err) {
      throw new DelegationRefusedError('role-prompt', (err as Error).message);
    }
  }
  const context = [rolePrompt, request.context ?? ''].filter((part) => part.trim() !== '').join('\n\n---\n\n');
  const tooLarge = briefTextTooLarge(request.objective, context);
  if (tooLarge) throw new DelegationRefusedError('usage', tooLarge);
  const generic = config.agents.find((entry) => entry.id === agent);

  const launch: LaunchDraft = {
    workspace: request.workspace,
    agent,
    ...(role ? { role: role.name } : {}),
    objective: request.objective,
    context,
    constraints: request.constraints ?? [],
    acceptance_criteria: request.acceptance_criteria ?? [],
    mode,
    isolation: isolation.value,
    network: network.available,
    // A read-only task's network is closed by default where the sandbox can close it (issue 21).
    network_cut: networkRequest === 'off' || (networkRequest === 'auto' && mode === 'read-only'),
    ...(model.model !== undefined ? { model: model.model } : {}),
    timeout_ms,
    depth,
    ...(parentTaskId ? { parent_task_id: parentTaskId } : {}),
    channel: request.channel ?? policy.default_channel,
    extra_args: request.extra_args ?? [],
    allow_inplace_write: policy.allow_inplace_write,
    worktree_setup: { copy: [...config.worktree.copy], link: [...config.worktree.link], setup: [...config.worktree.setup] },
    ...(generic ? { generic_agent: { ...generic, bin: programFromRoot(generic.bin, options.root), args: [...generic.args] } } : {}),
    findings,
    max_parallel: policy.max_parallel,
    env_policy: request.env === 'minimal' || policy.env === 'minimal' ? 'minimal' : 'inherit',
    env_allow: [...policy.env_allow],
    transport,
    permissions: policy.permissions,
    launcher: pickLauncher(request.launcher ?? role?.launcher ?? config.launcher.kind, options.loaded),
    checks: resolveChecks(config, role, request.checks ?? []),
    ...sandboxOf(config),
  };
  return { launch, skipped, warnings };
}

/**
 * The task's checks, in the order they run: every `[[check]]`, then the role's, then the request's (`--check`). The
 * unnamed ones are named after where they came from; all but `[[check]]` get the default timeout.
 */
function resolveChecks(config: LoadedConfig['config'], role: RoleConfig | undefined, requested: string[]): CheckSpec[] {
  const checks: CheckSpec[] = config.checks.map((check) => ({ name: check.name, command: check.command, timeout_ms: check.timeout_ms }));
  (role?.checks ?? []).forEach((command, index) => checks.push({ name: `${role!.name}-${index + 1}`, command, timeout_ms: DEFAULT_CHECK_TIMEOUT_MS }));
  for (const [index, command] of requested.entries()) {
    if (command.trim() === '') throw new DelegationRefusedError('usage', `Check ${index + 1} is empty: give --check a shell command.`);
    checks.push({ name: `check-${index + 1}`, command, timeout_ms: DEFAULT_CHECK_TIMEOUT_MS });
  }
  return checks;
}

/** The launcher of the chosen kind, with `[launcher]`'s sbatch resources for Slurm (extra arguments checked). */
function pickLauncher(kind: LauncherKind, loaded: LoadedConfig): Launcher {
  if (kind === 'local') return { kind: 'local' };
  const { partition, time, cpus, mem, extra_args } = loaded.config.launcher;
  const problem = sbatchArgProblem(extra_args);
  if (problem) {
    throw new DelegationRefusedError('config', `[launcher] extra_args (from ${layerLabel(loaded.provenance.launcher.extra_args)}): ${problem}.`, 'Remove it, or ask your cluster\'s administrators for a partition or QOS that does what it should.');
  }
  return {
    kind: 'slurm',
    ...(partition ? { partition } : {}),
    ...(time ? { time } : {}),
    ...(cpus ? { cpus } : {}),
    ...(mem ? { mem } : {}),
    extra_args: [...extra_args],
  };
}

/**
 * A relative program path (`./tools/agent`) names a file under the caesar root, where the catalogue found it: the
 * supervisor runs the agent from a worktree, so the launch carries the absolute path. Bare names stay PATH lookups.
 */
function programFromRoot(bin: string, root: string): string {
  return bin.includes('/') || bin.includes(path.sep) ? path.resolve(root, bin) : bin;
}

/** A delegation made by a task's agent carries that task's id in $CAESAR_TASK_ID; anything malformed is ignored. */
function parentTaskOf(env: NodeJS.ProcessEnv): string | undefined {
  const id = env[ENV.taskId];
  return id && isSafeId(id) ? id : undefined;
}

/**
 * The request's transport, else the agent's `[transport]` entry, else the default. ACP asked of an agent whose
 * adapter has no ACP command line is refused, naming where it was asked, rather than silently run as a stream.
 */
function pickTransport(requested: TransportName | undefined, agent: string, loaded: LoadedConfig, catalogue: AgentCatalogue): TransportName {
  const configured = loaded.config.transports[agent];
  const transport = requested ?? configured ?? DEFAULT_TRANSPORT;
  if (transport === 'acp' && !catalogue.speaksAcp?.(agent)) {
    const origin = loaded.provenance.transports[agent];
    const where = requested ? 'was requested for this task' : `is set for it in ${layerLabel(origin ?? 'default')}`;
    const remedy = requested || !origin || origin === 'default' ? 'Ask for the stream transport instead.' : `caesar agents unset-transport ${agent}${layerFlag(origin)}`;
    throw new DelegationRefusedError('transport', `Agent "${agent}" (${catalogue.displayName(agent)}) cannot run over ACP (the Agent Client Protocol): transport "acp" ${where}, and caesar has no ACP command line for it.`, remedy);
  }
  return transport;
}

function checkChoice(field: string, value: string | undefined, allowed: readonly string[]): void {
  if (value !== undefined && !allowed.includes(value)) {
    throw new DelegationRefusedError('usage', `Invalid ${field} "${value}": expected one of ${allowed.join(', ')}.`);
  }
}

function pickIsolation(request: DelegationRequest, role: RoleConfig | undefined, fallback: IsolationRequest): { value: IsolationRequest; source: string } {
  if (request.isolation) return { value: request.isolation, source: 'explicitly requested' };
  if (role?.isolation) return { value: role.isolation, source: `inherited from role "${role.name}"` };
  return { value: fallback, source: 'inherited from the policy default' };
}

function resolveTimeout(explicit: string | number | undefined, role: RoleConfig | undefined, fallback: number): number {
  let ms: number;
  if (explicit !== undefined) {
    try {
      ms = parseDuration(explicit);
    } catch (err) {
      if (err instanceof DurationError) throw new DelegationRefusedError('usage', `Timeout: ${err.message}`);
      throw err;
    }
  } else {
    ms = role?.timeout_ms ?? fallback;
  }
  if (ms <= 0) throw new DelegationRefusedError('usage', 'The timeout must be longer than zero.');
  return ms;
}

/** `[sandbox]` for launch.json, only when the configuration says anything (absent: the supervisor's default). */
function sandboxOf(config: CaesarConfig): Pick<LaunchDraft, 'sandbox'> {
  const { mode, hide, read_write, allow_hosts } = config.sandbox;
  if (!mode && !hide.length && !read_write.length && !allow_hosts.length) return {};
  return { sandbox: { ...(mode ? { mode } : {}), hide: [...hide], read_write: [...read_write], allow_hosts: [...allow_hosts] } };
}

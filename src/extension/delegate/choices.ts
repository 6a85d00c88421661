import { loadConfig, type IsolationRequest, type ModeName, type NetworkRequest } from '../../config';
import { agentCatalogue, agentStatuses, effectiveSandboxMode, listRoles, sandboxPreflight, type AgentStatus, type RoleStatus } from '../../engine/tasks';

/** One row of the "agent or role" step: what delegating to it would do today, computed by the engine. */
export interface TargetChoice {
  kind: 'agent' | 'role';
  /** Agent id or role name. */
  name: string;
  label: string;
  /** "installed", "not found", "refused by policy", or the agent a role picks. */
  verdict: string;
  /** Why it cannot be used (not found on PATH, the policy rule and its remedy), or what it is (name, transport, abilities). */
  detail: string;
  usable: boolean;
  /** Whether the agent (or the agent a role picks) takes a model. */
  takesModel: boolean;
  /** The configured model for it, if any. */
  model?: string;
}

export interface DelegateChoices {
  targets: TargetChoice[];
  defaults: { mode: ModeName; isolation: IsolationRequest; network: NetworkRequest };
  /** What an untrusted load ignored, for the UI to say. */
  ignored: string[];
  /** Whether a task started now runs sandboxed (the mode in force and the preflight, cached per process), and why not. */
  sandbox: { confined: boolean; reason?: string };
}

/** Reads the configuration layers and the agent catalogue the way delegation will (the engine's use cases). */
export async function loadDelegateChoices(root: string, trusted: boolean, env: NodeJS.ProcessEnv = process.env): Promise<DelegateChoices> {
  const loaded = await loadConfig({ root, env, trusted });
  const catalogue = agentCatalogue(loaded, { env, root });
  const [agents, roles, sandbox] = await Promise.all([agentStatuses(loaded, catalogue), listRoles(loaded, catalogue), sandboxVerdict(loaded.config.sandbox.mode, env)]);
  const byId = new Map(agents.map((a) => [a.id, a]));
  const policy = loaded.config.policy;
  return {
    targets: [...roles.map((r) => roleChoice(r, byId)), ...agents.map((a) => agentChoice(a, loaded.config.transports[a.id] ?? 'stream'))],
    defaults: { mode: policy.default_mode, isolation: policy.default_isolation, network: policy.default_network },
    // What was left out, and the loosenings of the user's policy the repository asked for and did not get.
    ignored: [...loaded.ignored, ...loaded.notes.map((n) => n.message)],
    sandbox,
  };
}

/** As the supervisor will decide it (the preflight runs there again; this one is for the mark, ~25 ms once). */
async function sandboxVerdict(mode: Parameters<typeof effectiveSandboxMode>[0], env: NodeJS.ProcessEnv): Promise<DelegateChoices['sandbox']> {
  if (effectiveSandboxMode(mode, env) === 'off') return { confined: false, reason: '[sandbox] mode = "off"' };
  const verdict = await sandboxPreflight(env);
  return verdict.available ? { confined: true } : { confined: false, reason: `${verdict.cause}. Fix: ${verdict.fix}` };
}

/** What an agent's capabilities mean to the person picking it, in words (not flags). */
export function capabilityWords(caps: AgentStatus['capabilities']): string[] {
  if (!caps) return [];
  const network = { open: 'network always open', controllable: 'network can be closed', 'write-only': 'network only when writing', unknown: '' }[caps.network];
  return [
    network,
    caps.nativeReadOnly ? 'read-only mode' : '',
    caps.model ? 'takes a model' : '',
    caps.schemaTier || caps.channel ? 'structured report' : '',
    caps.reportsUsage ? 'reports usage' : '',
  ].filter(Boolean);
}

function agentChoice(a: AgentStatus, transport: string): TargetChoice {
  let verdict = 'installed';
  // Its name, how it is driven and what it can do; not where its binary lies (the built-in demo's is Node's own).
  let detail = [a.display_name !== a.id ? a.display_name : '', a.version ?? '', `over ${transport === 'acp' ? 'ACP' : 'its native stream'}`, ...capabilityWords(a.capabilities)]
    .filter(Boolean)
    .join(' · ');
  if (!a.installed) {
    verdict = 'not found';
    detail = `its program was not found on PATH${a.install_hint ? ` — ${a.install_hint}` : ''}`;
  } else if (!a.allowed && a.refusal) {
    verdict = 'refused by policy';
    detail = `${a.refusal.reason} ${a.refusal.remedy}`.trim();
  }
  return {
    kind: 'agent',
    name: a.id,
    label: a.id,
    verdict,
    detail,
    usable: a.installed && a.allowed,
    takesModel: a.capabilities?.model === true,
    ...(a.model ? { model: a.model.value } : {}),
  };
}

function roleChoice(r: RoleStatus, agents: Map<string, AgentStatus>): TargetChoice {
  const picked = r.picks !== undefined ? agents.get(r.picks) : undefined;
  const skipped = r.skipped.map((s) => `${s.agent}: ${s.reason}`).join('; ');
  return {
    kind: 'role',
    name: r.role.name,
    label: `role: ${r.role.name}`,
    verdict: r.picks !== undefined ? `picks ${r.picks}` : 'no usable agent',
    detail: [r.role.purpose, r.reason, skipped ? `skipped ${skipped}` : ''].filter(Boolean).join(' · '),
    usable: r.picks !== undefined,
    takesModel: picked?.capabilities?.model === true,
    ...(r.role.model ? { model: r.role.model } : picked?.model ? { model: picked.model.value } : {}),
  };
}

/**
 * The target Enter picks: the `caesar.defaultAgent` setting when usable, else the last one used here, else the first
 * usable real agent, else the built-in demo agent (always installed).
 */
export function defaultTarget(targets: TargetChoice[], setting: string | undefined, lastUsed: string | undefined): TargetChoice | undefined {
  const usable = targets.filter((t) => t.usable);
  const named = (name: string | undefined) => (name ? usable.find((t) => t.name === name || t.label === name) : undefined);
  return named(setting) ?? named(lastUsed) ?? usable.find((t) => t.kind === 'agent' && t.name !== 'demo') ?? named('demo') ?? usable[0];
}

import { checkPolicy, pickRoleAgent, type LoadedConfig, type Origin, type RoleConfig, type RolePick, type SkippedAgent } from '../../config';
import type { AgentCapabilities } from '../../agents/types';
import { defaultAgentCatalogue, type AgentCatalogue } from '../resolve/agent-catalogue';

/**
 * What every front end (CLI doctor/agents/roles, MCP caesar_list_agents/caesar_list_roles, the extension's Delegate
 * flow) says about agents and roles, computed one way. The catalogue is built here only, so `caesar run` and
 * `caesar doctor` can never disagree on which agents exist or where a relative program path is resolved from.
 */

export interface CatalogueOptions {
  /** PATH and CAESAR_VERSION come from here; defaults to process.env. */
  env?: NodeJS.ProcessEnv;
  /** The caesar root: relative `[[agent]] bin` paths are resolved from it, wherever the caller runs. */
  root?: string;
}

/** The registry's adapters plus the configuration's `[[agent]]` entries (an entry with a built-in id replaces it). */
export function agentCatalogue(loaded: LoadedConfig, options: CatalogueOptions = {}): AgentCatalogue {
  return defaultAgentCatalogue(loaded.config.agents, options.env ?? process.env, options.root);
}

export interface AgentStatus {
  id: string;
  display_name: string;
  installed: boolean;
  location?: string;
  version?: string;
  capabilities: AgentCapabilities | undefined;
  origin: 'builtin' | Origin;
  model?: { value: string; origin: Origin };
  allowed: boolean;
  refusal?: { rule: string; reason: string; remedy: string };
  install_hint?: string;
}

/** Each agent of the catalogue: installed or not (and where), its version when asked, the policy's verdict, its model. */
export async function agentStatuses(loaded: LoadedConfig, catalogue: AgentCatalogue, options: { withVersion?: boolean } = {}): Promise<AgentStatus[]> {
  return Promise.all(
    catalogue.ids().map(async (id) => {
      const installed = await catalogue.isInstalled(id);
      const refusal = checkPolicy(loaded.config.policy, id, { provenance: loaded.provenance.policy, ...(loaded.provenance.deniedBy ? { deniedBy: loaded.provenance.deniedBy } : {}) });
      const status: AgentStatus = {
        id,
        display_name: catalogue.displayName(id),
        installed,
        capabilities: catalogue.capabilities(id),
        origin: loaded.provenance.agents[id] ?? 'builtin',
        allowed: !refusal,
      };
      const hint = installed ? undefined : catalogue.installHint?.(id);
      if (hint) status.install_hint = hint;
      const location = installed ? await catalogue.location?.(id) : undefined;
      if (location) status.location = location;
      const version = installed && options.withVersion ? await catalogue.version?.(id) : undefined;
      if (version) status.version = version;
      const model = loaded.config.models[id];
      if (model !== undefined) status.model = { value: model, origin: loaded.provenance.models[id] ?? 'default' };
      if (refusal) status.refusal = { rule: refusal.rule, reason: refusal.reason, remedy: refusal.remedy };
      return status;
    }),
  );
}

/** The agent a role would pick today: the same walk as delegation (known, installed, then policy without depth). */
export function pickForRole(loaded: LoadedConfig, catalogue: AgentCatalogue, role: RoleConfig): Promise<RolePick> {
  return pickRoleAgent(role, {
    unusable: async (id) => {
      if (!catalogue.capabilities(id)) return 'unknown agent';
      if (!(await catalogue.isInstalled(id))) return 'not installed';
      return checkPolicy(loaded.config.policy, id, { provenance: loaded.provenance.policy, ...(loaded.provenance.deniedBy ? { deniedBy: loaded.provenance.deniedBy } : {}) })?.reason;
    },
  });
}

/** One line a person reads: the network capability, then the optional capabilities the agent has. */
export function describeCapabilities(caps: unknown): string {
  if (!caps || typeof caps !== 'object') return 'capabilities unknown';
  const c = caps as Record<string, unknown>;
  const flags = ['nativeReadOnly', 'schemaTier', 'channel', 'model', 'reportsUsage'].filter((k) => c[k] === true);
  return `network ${String(c.network)}; ${flags.join(', ') || 'no optional capability'}`;
}

export interface RoleStatus {
  role: RoleConfig;
  origin: Origin | 'default';
  /** The agent delegation would pick for this role today, or undefined with the reason. */
  picks?: string;
  reason?: string;
  skipped: SkippedAgent[];
}

/** Every configured role with the agent it would pick today. */
export async function listRoles(loaded: LoadedConfig, catalogue: AgentCatalogue): Promise<RoleStatus[]> {
  return Promise.all(
    loaded.config.roles.map(async (role) => {
      const pick = await pickForRole(loaded, catalogue, role);
      return {
        role,
        origin: loaded.provenance.roles[role.name] ?? 'default',
        ...(pick.agent !== undefined ? { picks: pick.agent } : {}),
        ...(pick.agent === undefined && pick.reason ? { reason: pick.reason } : {}),
        skipped: pick.skipped,
      };
    }),
  );
}

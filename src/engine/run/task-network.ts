import type { AgentAdapter, SpawnPlan } from '../../agents/types';
import type { LaunchSpec } from '../../protocol';
import { decideNetwork, type CutNetwork, type NetworkDecision } from '../sandbox/sandbox';
import type { Placement } from './isolation';

/** resolve.ts's warning for an agent whose CLI cannot close its network: moot once the sandbox cuts it. */
const NOT_AS_REQUESTED = 'Network not as requested';

/**
 * Whether this task's network is cut (src/engine/sandbox/network.ts), decided before task.json is written: its
 * `network` is false only when it is. The decision's findings join the task's; a cut network drops the delegation's
 * "may still reach the network" finding, which no longer holds.
 */
export async function decideTaskNetwork(launch: LaunchSpec, adapter: AgentAdapter, placement: Placement): Promise<NetworkDecision> {
  const decision = await decideNetwork({
    wanted: launch.network_cut,
    requested: userAskedOff(launch),
    agentId: adapter.id,
    env: process.env,
    allowHosts: launch.sandbox?.allow_hosts ?? [],
    mode: launch.sandbox?.mode,
    ...(agentCannotBeSandboxed(launch, adapter) ? { cannotBeSandboxed: agentCannotBeSandboxed(launch, adapter) } : {}),
  });
  placement.findings.push(...decision.findings);
  if (decision.cut) launch.findings = launch.findings.filter((f) => f.title !== NOT_AS_REQUESTED);
  return decision;
}

/**
 * The user asked for `off` (not the read-only default, which cuts only a read-only task's network): a write task
 * with its network to cut, or resolve.ts's warning that the agent's CLI could not close it.
 */
function userAskedOff(launch: LaunchSpec): boolean {
  return launch.network_cut && (launch.mode === 'write' || launch.findings.some((f) => f.title === NOT_AS_REQUESTED));
}

/** Why the adapter cannot run in the sandbox at all over this transport (codex over ACP), when it cannot. */
export function agentCannotBeSandboxed(launch: LaunchSpec, adapter: AgentAdapter): string | undefined {
  return launch.transport === 'acp' ? adapter.acp?.cannotBeSandboxed : undefined;
}

/** What the sandbox needs of a cut network's decision (its findings are the task's already). */
export function cutNetwork(decision: Extract<NetworkDecision, { cut: true }>): CutNetwork {
  return { endpoints: decision.endpoints, proxied: decision.proxied, ...(decision.socat ? { socat: decision.socat } : {}) };
}

/** The agent's plan when it runs inside the sandbox, for an ACP agent whose own sandbox hands over to ours (codex-acp). */
export function insidePlanOf(plan: SpawnPlan, launch: LaunchSpec, adapter: AgentAdapter): { insidePlan?: SpawnPlan } {
  const inside = launch.transport === 'acp' ? adapter.acp?.insideSandbox : undefined;
  return inside ? { insidePlan: inside(plan) } : {};
}

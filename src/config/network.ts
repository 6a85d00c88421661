import type { ModeName, NetworkRequest } from './schema';

/** How far the orchestrator controls an agent's network (mirrors AgentCapabilities['network'] in src/agents/types.ts). */
export type NetworkCapability = 'open' | 'controllable' | 'write-only' | 'unknown';

export type NetworkDecision = { available: boolean; warning?: string } | { refused: string; remedy: string };

/**
 * The network tri-state against what the agent allows (reference §4.6): `off` is a wish we may be unable to grant
 * (warned, never refused, because refusing would block agents that cannot close it at all); `on` fails only where
 * the agent provably cannot open it; `auto` takes what the agent gives and says so when that is "closed".
 */
export function resolveNetwork(request: NetworkRequest, capability: NetworkCapability, mode: ModeName, agent: string): NetworkDecision {
  if (request === 'off') {
    if (capability === 'open' || capability === 'unknown') {
      return {
        available: true,
        warning: `The network was requested closed, but the orchestrator does not know how to close it for "${agent}": unless the sandbox cuts it (docs/sandbox.md), the agent may still reach the network.`,
      };
    }
    return { available: false };
  }
  if (capability === 'open' || capability === 'controllable') return { available: true };
  if (capability === 'write-only') {
    if (mode === 'write') return { available: true };
    if (request === 'on') {
      return {
        refused: `Agent "${agent}" can open the network only in a writable sandbox, and this task is read-only.`,
        remedy: 'Relaunch in write mode with worktree isolation, or pick an agent whose network is open (antigravity or opencode, for example).',
      };
    }
    return { available: false, warning: `The network is closed: "${agent}" opens it only in write mode, and this task is read-only.` };
  }
  // unknown: a template agent without network_args; we cannot tell, so assume open.
  if (request === 'on') {
    return {
      available: true,
      warning: `Network requested for "${agent}", which declares no network_args: the orchestrator cannot tell whether it has one. Declare network_args in its [[agent]] entry.`,
    };
  }
  return { available: true };
}

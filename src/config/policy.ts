import { ENV } from '../protocol';
import type { LayerName, Origin, PolicyConfig, PolicyKey } from './schema';

export type PolicyRule = 'denied' | 'allowlist' | 'depth' | 'recursion';

export interface PolicyRefusal {
  rule: PolicyRule;
  agent: string;
  /** What is wrong, in a sentence. */
  reason: string;
  /** What to do about it, naming the layer that holds the deciding setting. */
  remedy: string;
}

/**
 * Agents refused when allow_recursion is false. The reference names only `claude`, the orchestrator it was built for
 * (Claude Code delegating to itself is the loop the flag guards against). We keep exactly that: the orchestrator
 * here may be VS Code's chat, a terminal, or any MCP client, and nothing tells us reliably which agent it runs in;
 * guessing would refuse legitimate delegations. Runaway chains are bounded by max_depth whatever the agent.
 */
export const RECURSION_AGENTS: readonly string[] = ['claude'];

/** The `--global` / `--local` flag that targets a layer on the command line (the project layer needs none). */
export function layerFlag(origin: Origin): string {
  return origin === 'global' ? ' --global' : origin === 'local' ? ' --local' : '';
}

export function layerLabel(origin: Origin | LayerName): string {
  return origin === 'default' ? 'the built-in default' : `the ${origin} config`;
}

export interface PolicyCheck {
  /** The depth the new delegation would have; omit for the per-agent view (doctor, lists), which ignores depth. */
  depth?: number;
  /** Where each policy field comes from, so remedies target the right layer. */
  provenance?: Partial<Record<PolicyKey, Origin>>;
}

/** The four rules, in order; the first refusal wins. `denied` beats `allowed`. */
export function checkPolicy(policy: PolicyConfig, agent: string, check: PolicyCheck = {}): PolicyRefusal | undefined {
  const from = (key: PolicyKey): Origin => check.provenance?.[key] ?? 'default';
  if (policy.denied.includes(agent)) {
    return {
      rule: 'denied',
      agent,
      reason: `Agent "${agent}" is denied by the policy (denied list in ${layerLabel(from('denied'))}).`,
      remedy: `caesar agents enable ${agent}${layerFlag(from('denied'))}`,
    };
  }
  if (policy.allowed.length > 0 && !policy.allowed.includes(agent)) {
    return {
      rule: 'allowlist',
      agent,
      reason: `Agent "${agent}" is not in the policy's allowed list (${policy.allowed.join(', ')}; set in ${layerLabel(from('allowed'))}).`,
      remedy: `caesar policy allow ${agent}${layerFlag(from('allowed'))}`,
    };
  }
  if (check.depth !== undefined && check.depth > policy.max_depth) {
    return {
      rule: 'depth',
      agent,
      reason:
        `This delegation would have depth ${check.depth} and max_depth is ${policy.max_depth} ` +
        `(a delegation from the top level has depth 1; each nested delegation adds one).`,
      remedy: `Raise max_depth in [policy] (${layerLabel(from('max_depth'))}) or delegate from a shallower level.`,
    };
  }
  if (!policy.allow_recursion && RECURSION_AGENTS.includes(agent)) {
    return {
      rule: 'recursion',
      agent,
      reason: `Agent "${agent}" may be the orchestrator itself, and recursion is not allowed (allow_recursion = false).`,
      remedy: `Set allow_recursion = true in the [policy] table of a config file (${layerLabel(from('allow_recursion'))} decides today).`,
    };
  }
  return undefined;
}

/** `caesar policy allow` on an empty list makes the policy restrictive: everything else becomes refused. */
export function allowlistWarning(before: string[], agent: string): string | undefined {
  if (before.length > 0) return undefined;
  return `The allowed list was empty, so every agent was allowed. From now on only "${agent}" is allowed (plus any agent added to the list later).`;
}

/**
 * The depth of a delegation made from this process: one more than $CAESAR_DEPTH (set for every delegated agent).
 * Missing or unreadable means we are at the top level, so the new delegation has depth 1.
 */
export function nextDelegationDepth(env: NodeJS.ProcessEnv = process.env): number {
  const parent = Number.parseInt(env[ENV.depth] ?? '', 10);
  return (Number.isFinite(parent) && parent >= 0 ? parent : 0) + 1;
}

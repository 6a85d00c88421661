import { ENV } from '../protocol';
import { parse } from 'smol-toml';
import { ConfigEditError } from './errors';
import { POLICY_TOML_KEY, PolicyLayerSchema, type LayerName, type Origin, type PolicyConfig, type PolicyKey } from './schema';

export type PolicyRule = 'denied' | 'allowlist' | 'depth' | 'recursion';

export interface PolicyRefusal {
  rule: PolicyRule;
  agent: string;
  /** What is wrong, in a sentence. */
  reason: string;
  /** What to do about it, naming the layer that holds the deciding setting. */
  remedy: string;
}

/*
 * Recursion is decided by depth, not by name (reference §4.3.4 named `claude`, assuming the orchestrator is Claude
 * Code; a person in a terminal or the editor, and VS Code's chat, are not). Every task's agent runs with $CAESAR_DEPTH
 * (its task's depth) and $CAESAR_AGENT: a delegation from depth 0 — a terminal, the editor, a chat — is never
 * recursion, so `claude` runs by default there; chains are bounded by max_depth whatever the agent; and
 * allow_recursion = false only refuses a task's agent delegating to ITS OWN agent (claude inside a claude task).
 */

/** The `--global` / `--local` flag that targets a layer on the command line (the project layer needs none). */
export function layerFlag(origin: Origin): string {
  return origin === 'global' ? ' --global' : origin === 'local' ? ' --local' : '';
}

export function layerLabel(origin: Origin | LayerName): string {
  return origin === 'default' ? 'the built-in default' : `the ${origin} config, ${layerFileLabel(origin)}`;
}

/** Where a layer's file is, as a user finds it: under the caesar root, or in their home folder. */
export function layerFileLabel(scope: LayerName): string {
  return scope === 'global' ? '~/.config/caesar/config.toml' : scope === 'local' ? '.caesar/config.local.toml' : '.caesar/config.toml';
}

/**
 * How to change one policy value, for messages that ask the user to: the command, and the file it writes. It targets
 * the layer that decides the value today (the project layer when it is the built-in default), so the change takes
 * effect instead of being shadowed by a more specific layer.
 */
export function policyChange(key: PolicyKey, value: string, origin: Origin = 'default'): string {
  const tomlKey = POLICY_TOML_KEY[key];
  // A loosening counts only from the user's own layer: a repository's can only tighten (src/config/tighten.ts).
  const scope = TIGHTEN_ONLY_KEYS.includes(key) ? 'global' : layerOf(origin);
  const alsoThere = scope === 'global' && (origin === 'project' || origin === 'local') ? `, and remove it from [policy] of ${layerFileLabel(origin)}, which lowers it` : '';
  return `\`caesar policy set ${tomlKey} ${value}${layerFlag(scope)}\` (sets ${tomlKey} in [policy] of ${layerFileLabel(scope)}${alsoThere})`;
}

/** The [policy] keys a repository's layers (project, local) can only tighten; the others they set freely. */
export const TIGHTEN_ONLY_KEYS: readonly PolicyKey[] = ['allowed', 'denied', 'allow_inplace_write', 'allow_recursion', 'max_depth', 'env', 'env_allow', 'permissions'];

/** The layer a change should go to: the one deciding today, the project layer in place of the built-in default. */
function layerOf(origin: Origin): LayerName {
  return origin === 'default' ? 'project' : origin;
}

/** The [policy] keys as spelled in a config file, in the order `caesar policy show` lists them. */
export const POLICY_TOML_KEYS: readonly string[] = Object.values(POLICY_TOML_KEY);

/**
 * A value typed on a command line for one [policy] key, checked by the schema that loading uses. It is read as TOML
 * first (`true`, `4`, `"10m"`, `["codex"]`), else as a bare word; a list key also takes `codex,claude` (and `""` for
 * an empty list). Returns the value to write in the file.
 */
export function parsePolicyValue(tomlKey: string, text: string): unknown {
  if (!POLICY_TOML_KEYS.includes(tomlKey)) {
    throw new ConfigEditError(`Unknown policy key "${tomlKey}". The keys are: ${POLICY_TOML_KEYS.join(', ')}.`);
  }
  let value: unknown = text;
  try {
    value = parse(`value = ${text}`).value;
  } catch {
    /* not a TOML value: a bare word, taken as a string */
  }
  const isList = tomlKey === 'allowed' || tomlKey === 'denied' || tomlKey === 'env_allow';
  if (isList && typeof value === 'string') value = value.split(',').map((item) => item.trim()).filter(Boolean);
  const checked = PolicyLayerSchema.safeParse({ [tomlKey]: value });
  if (!checked.success) {
    const problem = checked.error.issues[0]?.message ?? 'invalid value';
    throw new ConfigEditError(`Invalid value ${JSON.stringify(text)} for ${tomlKey}: ${problem}.${valueHint(tomlKey)}`);
  }
  return value;
}

function valueHint(tomlKey: string): string {
  switch (tomlKey) {
    case 'allowed':
    case 'denied':
      return ' Give agent ids separated by commas, e.g. codex,claude ("" for none).';
    case 'default_timeout':
      return ' Give a duration such as 90s, 10m or 1h.';
    case 'allow_recursion':
    case 'allow_inplace_write':
    case 'default_channel':
      return ' Give true or false.';
    case 'max_parallel':
      return ' Give a whole number of 1 or more.';
    case 'max_depth':
      return ' Give a whole number of 0 or more.';
    case 'env':
      return ' Give inherit or minimal.';
    case 'permissions':
      return ' Give ask, allow-in-worktree or deny.';
    case 'env_allow':
      return ' Give variable names separated by commas, e.g. AWS_PROFILE,HTTPS_PROXY ("" for none).';
    default:
      return '';
  }
}

export interface PolicyCheck {
  /** The depth the new delegation would have; omit for the per-agent view (doctor, lists), which ignores depth. */
  depth?: number;
  /** Where each policy field comes from, so remedies target the right layer. */
  provenance?: Partial<Record<PolicyKey, Origin>>;
  /** Per denied agent, the layer denying it (Provenance.deniedBy); more precise than provenance.denied. */
  deniedBy?: Record<string, Origin>;
  /** The agent of the task this delegation is made from ($CAESAR_AGENT inside a task); absent at depth 0. */
  parentAgent?: string;
}

/** The four rules, in order; the first refusal wins. `denied` beats `allowed`. */
export function checkPolicy(policy: PolicyConfig, agent: string, check: PolicyCheck = {}): PolicyRefusal | undefined {
  const from = (key: PolicyKey): Origin => check.provenance?.[key] ?? 'default';
  if (policy.denied.includes(agent)) {
    const deniedIn = check.deniedBy?.[agent] ?? from('denied');
    return {
      rule: 'denied',
      agent,
      reason: `Agent "${agent}" is denied by the policy (denied list in ${layerLabel(deniedIn)}).`,
      remedy: `caesar agents enable ${agent}${layerFlag(deniedIn)}`,
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
        (check.depth > 1 ? `(it is made by a task's agent running at depth ${check.depth - 1}, its $${ENV.depth}; ` : '(') +
        `a delegation from the top level has depth 1; each nested delegation adds one).`,
      remedy: `Raise max_depth with ${policyChange('max_depth', String(check.depth), from('max_depth'))}, or delegate from a shallower level.`,
    };
  }
  if (!policy.allow_recursion && check.parentAgent === agent) {
    return {
      rule: 'recursion',
      agent,
      reason: `Agent "${agent}" would delegate to itself from inside its own task, and recursion is not allowed (allow_recursion = false).`,
      remedy: `To allow it: ${policyChange('allow_recursion', 'true', from('allow_recursion'))}.`,
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

/** The agent running the task this process belongs to ($CAESAR_AGENT with $CAESAR_DEPTH ≥ 1); undefined at the top level. */
export function delegatingAgent(env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (nextDelegationDepth(env) < 2) return undefined;
  const agent = env[ENV.agent]?.trim();
  return agent ? agent : undefined;
}

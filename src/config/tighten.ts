import { isDeepStrictEqual } from 'node:util';
import { layerFileLabel } from './policy';
import type { Layer, LayerName, Origin, PermissionPolicy, PolicyConfig, PolicyKey, SandboxConfig } from './schema';

/*
 * The repository's layers (`.caesar/config.toml`, `.caesar/config.local.toml`) may only tighten the user's policy:
 * the built-in defaults and the user's global layer are the ceiling. A cloned repository could otherwise allow
 * in-place writes, pass the whole environment on, let an ACP agent's writes through unasked, raise max_depth or
 * re-enable an agent the user denied. Each loosening the repository asked for is ignored and said in a note
 * (`caesar config show`, doctor, the editor show them) with the command that would make it the user's own choice.
 */

const PERMISSION_RANK: Record<PermissionPolicy, number> = { deny: 0, ask: 1, 'allow-in-worktree': 2 };

/** A loosening a repository layer asked for and did not get. */
export interface PolicyNote {
  key: PolicyKey;
  scope: LayerName;
  message: string;
}

/** The part of the merge's provenance (src/config/layers.ts) that tightening decides. */
export interface TightenedOrigins {
  policy: Record<PolicyKey, Origin>;
  /** Per denied agent, the layer that denies it (the repository's layers add to the user's list, never remove). */
  deniedBy?: Record<string, Origin>;
  sandbox: Record<keyof SandboxConfig, Origin>;
}

export interface Tightened<T> {
  value: T;
  /** Why the repository's value was not taken whole; absent when it was. */
  note?: string;
}

/**
 * The value of `key` once a repository layer asked for `asked`, given the user's ceiling `base` (defaults + global).
 * `env_allow` is judged against the env the user's ceiling has: with `inherit` every name already passes, so a
 * repository asking for `minimal` plus a few names is still tighter.
 */
export function tightenKey(key: PolicyKey, base: PolicyConfig, asked: unknown, scope: LayerName): Tightened<unknown> {
  const where = `${key} = ${JSON.stringify(asked)} in [policy] of ${layerFileLabel(scope)}`;
  const fix = (value: string) => `To choose it yourself: caesar policy set ${key} ${shellWord(value)} --global.`;
  switch (key) {
    case 'denied': {
      const list = asked as string[];
      const kept = base.denied.filter((id) => !list.includes(id));
      const value = [...base.denied, ...list.filter((id) => !base.denied.includes(id))];
      return kept.length ? { value, note: `${where} does not list ${kept.join(', ')}, but your global policy denies ${kept.length === 1 ? 'it' : 'them'}: a repository cannot enable an agent you denied (caesar agents enable <id> --global does).` } : { value };
    }
    case 'allowed': {
      const list = asked as string[];
      if (base.allowed.length === 0) return { value: [...list] };
      const inside = list.filter((id) => base.allowed.includes(id));
      const outside = list.filter((id) => !base.allowed.includes(id));
      if (list.length === 0 || inside.length === 0) {
        return { value: [...base.allowed], note: `${where} would allow ${list.length ? outside.join(', ') : 'every agent'}, beyond your global allowed list (${base.allowed.join(', ')}), which stays.` };
      }
      return outside.length ? { value: inside, note: `${where} names ${outside.join(', ')}, not in your global allowed list: ignored (caesar policy allow <id> --global).` } : { value: inside };
    }
    case 'allow_inplace_write':
    case 'allow_recursion': {
      const value = base[key] && (asked as boolean);
      return asked === true && !base[key] ? { value, note: `${where} ignored: a repository cannot turn it on. ${fix('true')}` } : { value };
    }
    case 'max_depth': {
      const value = Math.min(base.max_depth, asked as number);
      return (asked as number) > base.max_depth ? { value, note: `${where} ignored: a repository can only lower it (it stays ${base.max_depth}). ${fix(String(asked))}` } : { value };
    }
    case 'env':
      return asked === 'inherit' && base.env === 'minimal' ? { value: 'minimal', note: `${where} ignored: a repository cannot pass your whole environment on. ${fix('inherit')}` } : { value: asked };
    case 'env_allow': {
      const list = asked as string[];
      if (base.env === 'inherit') return { value: [...list] };
      const covered = list.filter((name) => base.env_allow.some((pattern) => envPatternCovers(pattern, name)));
      const added = list.filter((name) => !covered.includes(name));
      return added.length ? { value: covered, note: `${where} adds ${added.join(', ')} to what your global policy passes: ignored. ${fix([...base.env_allow, ...added].join(','))}` } : { value: covered };
    }
    case 'permissions': {
      const value = PERMISSION_RANK[asked as PermissionPolicy] <= PERMISSION_RANK[base.permissions] ? asked : base.permissions;
      return value !== asked ? { value, note: `${where} ignored: a repository can only make permissions stricter (it stays "${base.permissions}"). ${fix(String(asked))}` } : { value };
    }
    default:
      return { value: asked };
  }
}

/** `AWS_*` covers `AWS_PROFILE` and `AWS_*` itself; a plain name covers only itself. */
function envPatternCovers(pattern: string, name: string): boolean {
  if (pattern === name) return true;
  if (!pattern.endsWith('*')) return false;
  const prefix = pattern.slice(0, -1);
  return name.startsWith(prefix) && (!name.endsWith('*') || name.length >= pattern.length);
}

/** A value as one word for a POSIX shell (`AWS_*` would otherwise be a glob). */
function shellWord(value: string): string {
  return /^[A-Za-z0-9_.,=-]+$/.test(value) ? value : `'${value.replace(/'/g, `'\\''`)}'`;
}

/** Applies what the repository's layers asked to the user's policy, tightening only; returns what was refused. */
export function applyRepositoryPolicy(policy: PolicyConfig, provenance: TightenedOrigins, asked: Map<PolicyKey, { value: unknown; scope: LayerName }>): PolicyNote[] {
  const ceiling: PolicyConfig = { ...policy, allowed: [...policy.allowed], denied: [...policy.denied], env_allow: [...policy.env_allow] };
  const notes: PolicyNote[] = [];
  const userDenied = provenance.policy.denied;
  provenance.deniedBy = Object.fromEntries(ceiling.denied.map((id) => [id, userDenied]));
  for (const [key, { value, scope }] of asked) {
    if (key === 'denied') for (const id of value as string[]) provenance.deniedBy[id] ??= scope;
    const result = tightenKey(key, ceiling, value, scope);
    if (result.note) notes.push({ key, scope, message: result.note });
    if (isDeepStrictEqual(result.value, ceiling[key])) continue;
    (policy as unknown as Record<string, unknown>)[key] = result.value;
    provenance.policy[key] = scope;
  }
  return notes;
}

const SANDBOX_STRICTNESS = { off: 0, auto: 1, required: 2 } as const;

/**
 * `[sandbox]` from one layer. The user's own (global) layer decides freely; a repository's layers (project, local) can
 * only tighten it, as they can the policy: a stricter mode, more hidden paths; never `off` over `auto`, never more
 * writable paths — a cloned repository must not switch off the sandbox its own agents run in.
 */
export function mergeSandbox(sandbox: SandboxConfig, provenance: TightenedOrigins, scope: LayerName, asked: Layer['sandbox'], notes: string[]): void {
  if (!asked) return;
  const repository = scope !== 'global';
  if (asked.mode !== undefined) {
    if (!repository || SANDBOX_STRICTNESS[asked.mode] > SANDBOX_STRICTNESS[sandbox.mode ?? 'auto']) {
      sandbox.mode = asked.mode;
      provenance.sandbox.mode = scope;
    } else if (asked.mode !== (sandbox.mode ?? 'auto')) {
      notes.push(`[sandbox] mode = "${asked.mode}" from ${scope} ignored: a repository's configuration can only make the sandbox stricter (set it in ~/.config/caesar/config.toml).`);
    }
  }
  if (asked.hide !== undefined) {
    sandbox.hide = repository ? [...new Set([...sandbox.hide, ...asked.hide])] : [...asked.hide];
    provenance.sandbox.hide = scope;
  }
  if (asked.read_write !== undefined) {
    if (!repository) {
      sandbox.read_write = [...asked.read_write];
      provenance.sandbox.read_write = scope;
    } else if (asked.read_write.length) {
      notes.push(`[sandbox] read_write from ${scope} ignored: a repository's configuration cannot make more paths writable (set it in ~/.config/caesar/config.toml).`);
    }
  }
  if (asked.allow_hosts !== undefined) {
    if (!repository) {
      sandbox.allow_hosts = [...asked.allow_hosts];
      provenance.sandbox.allow_hosts = scope;
    } else if (asked.allow_hosts.length) {
      notes.push(`[sandbox] allow_hosts from ${scope} ignored: a repository's configuration cannot open the network of a task that has it cut (set it in ~/.config/caesar/config.toml).`);
    }
  }
}

import { layerFileLabel } from './policy';
import type { LayerName, PermissionPolicy, PolicyConfig, PolicyKey } from './schema';

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

import * as path from 'node:path';
import type { SpawnPlan } from '../../agents/types';
import type { Mount } from './policy';

/**
 * bubblewrap's command line for a task. Namespaces: all of them (user, pid, ipc, uts, cgroup), and the network's too
 * unless `shareNet` (a task whose network is cut gets an empty one, its model endpoints bridged in: network-bridge.ts). A PID
 * namespace whose init is bwrap's: when the agent's leader exits or bwrap is killed, the kernel kills every process
 * left in it, setsid and double forks included. --die-with-parent: the supervisor's death takes the sandbox too.
 */
export function bwrapArgs(mounts: Mount[], options: { cwd: string; setEnv: Record<string, string>; unsetEnv: string[]; shareNet?: boolean }): string[] {
  const args: string[] = [];
  for (const mount of mounts) args.push(...mountArgs(mount));
  // --cap-drop ALL: run as root (a container, CI), bwrap would otherwise keep every capability, and an agent could
  // umount the read-only binds (the host's writable files lie beneath) or mount what it likes. A no-op for other users.
  args.push('--unshare-all', ...(options.shareNet === false ? [] : ['--share-net']), '--die-with-parent', '--new-session', '--cap-drop', 'ALL');
  args.push(...rootAgentIds());
  for (const name of options.unsetEnv) args.push('--unsetenv', name);
  for (const [name, value] of Object.entries(options.setEnv)) args.push('--setenv', name, value);
  args.push('--chdir', options.cwd);
  return args;
}

/** The ids a root caller's agent runs under inside (mapped to root outside: its own files stay its own). */
export const ROOT_AGENT_ID = '1000';

/**
 * Run as root, the agent gets a non-zero id inside the sandbox. As uid 0 without capabilities it could still write
 * what root's file modes allow, and a bwrap started inside (codex's own sandbox) takes uid 0 for real root and fails
 * ("setting up uid map: Operation not permitted"); as an ordinary id it nests as it does for any other user.
 */
function rootAgentIds(): string[] {
  return process.getuid?.() === 0 ? ['--uid', ROOT_AGENT_ID, '--gid', ROOT_AGENT_ID] : [];
}

function mountArgs(mount: Mount): string[] {
  switch (mount.kind) {
    case 'tmpfs':
      return ['--tmpfs', mount.path];
    case 'dev':
      return ['--dev', mount.path];
    case 'proc':
      // bwrap 0.8 covers /proc/irq and /proc/bus but left /proc/sys writable to a root agent (measured): the host
      // kernel's settings (kernel.core_pattern runs a program as root on the next crash). Read-only, the host's view.
      return ['--proc', mount.path, '--ro-bind', '/proc/sys', path.join(mount.path, 'sys')];
    case 'empty':
      return ['--ro-bind', mount.source, mount.path];
    case 'ro':
      return [mount.optional ? '--ro-bind-try' : '--ro-bind', mount.source ?? mount.path, mount.path];
    case 'rw':
      return [mount.optional ? '--bind-try' : '--bind', mount.source ?? mount.path, mount.path];
  }
}

/** The same plan run inside bwrap: argv only, the agent's own command after `--`. */
export function wrapPlan(plan: SpawnPlan, bwrap: string, args: string[]): SpawnPlan {
  return { ...plan, command: bwrap, args: [...args, '--', plan.command, ...plan.args] };
}

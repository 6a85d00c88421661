import { execFile } from 'node:child_process';
import { accessSync, constants, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { testSwitchName } from '../../base/test-switches';

/** Whether bubblewrap can confine an agent on this machine, and if not, why and what fixes it. */
export type SandboxAvailability =
  | { available: true; bwrap: string }
  | { available: false; cause: string; fix: string };

/**
 * Where bwrap is: the first executable `bwrap` on PATH; in a test build $CAESAR_BWRAP when set (an empty value means
 * "no bwrap here"; test-switches.ts: a pass-through script there would leave a task unconfined that says confined).
 */
export function locateBwrap(env: NodeJS.ProcessEnv = process.env): string | undefined {
  return findExecutable('bwrap', env, testSwitchName('bwrap'));
}

/** A program by name: `$<override>` when set (empty: "not installed here"), else the first executable on PATH. */
export function findExecutable(name: string, env: NodeJS.ProcessEnv, override: string | undefined): string | undefined {
  const forced = override === undefined ? undefined : env[override];
  if (forced !== undefined) return forced.trim() === '' ? undefined : forced;
  for (const dir of (env.PATH ?? '').split(path.delimiter)) {
    if (!dir) continue;
    const candidate = path.join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      /* not here */
    }
  }
  return undefined;
}

let cached: { key: string; result: Promise<SandboxAvailability> } | undefined;

/**
 * The preflight, once per process (per bwrap path): a real `bwrap … true` with the namespaces a task uses, ~25 ms.
 * A failure is explained from the kernel's own switches, each with its fix.
 */
export function sandboxPreflight(env: NodeJS.ProcessEnv = process.env): Promise<SandboxAvailability> {
  if (process.platform !== 'linux') {
    return Promise.resolve({ available: false, cause: `no sandbox on ${process.platform} yet (bubblewrap is Linux only)`, fix: 'run caesar on Linux for a sandboxed agent, or set [sandbox] mode = "off" to accept it' });
  }
  const bwrap = locateBwrap(env);
  const key = bwrap ?? '';
  if (cached?.key === key) return cached.result;
  const result = bwrap ? probe(bwrap) : Promise.resolve(missing());
  cached = { key, result };
  return result;
}

function missing(): SandboxAvailability {
  return { available: false, cause: 'bubblewrap (bwrap) is not installed', fix: 'install it: `sudo apt install bubblewrap` (Debian/Ubuntu) or `sudo dnf install bubblewrap` (Fedora)' };
}

function probe(bwrap: string): Promise<SandboxAvailability> {
  const args = ['--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--tmpfs', '/tmp', '--unshare-all', '--share-net', '--die-with-parent', '--new-session', '--', 'true'];
  return new Promise((resolve) => {
    execFile(bwrap, args, { timeout: 10_000 }, (error, _stdout, stderr) => {
      if (!error) resolve({ available: true, bwrap });
      else resolve(explainFailure(bwrap, String(stderr || error.message).trim()));
    });
  });
}

/** Reads a /proc/sys switch; undefined when the kernel does not have it. */
function readSysctl(name: string): string | undefined {
  try {
    return readFileSync(`/proc/sys/${name.replace(/\./g, '/')}`, 'utf8').trim();
  } catch {
    return undefined;
  }
}

export function explainFailure(bwrap: string, message: string, sysctl: (name: string) => string | undefined = readSysctl): SandboxAvailability {
  const said = `${bwrap} failed: ${message.split('\n')[0]}`;
  if (sysctl('kernel.unprivileged_userns_clone') === '0') {
    return { available: false, cause: `unprivileged user namespaces are disabled (${said})`, fix: '`sudo sysctl -w kernel.unprivileged_userns_clone=1` (and in /etc/sysctl.d/ to keep it)' };
  }
  if (sysctl('user.max_user_namespaces') === '0') {
    return { available: false, cause: `user namespaces are disabled (user.max_user_namespaces = 0; ${said})`, fix: '`sudo sysctl -w user.max_user_namespaces=15000` (and in /etc/sysctl.d/ to keep it)' };
  }
  if (sysctl('kernel.apparmor_restrict_unprivileged_userns') === '1') {
    return {
      available: false,
      cause: `AppArmor restricts unprivileged user namespaces (Ubuntu 23.10 and later; ${said})`,
      fix: 'allow bwrap with an AppArmor profile (`/etc/apparmor.d/bwrap` with `userns,`, as Ubuntu documents), or `sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0`',
    };
  }
  return { available: false, cause: said, fix: 'check that bubblewrap works: `bwrap --ro-bind / / --unshare-all true`; inside a container, run it with user namespaces allowed (e.g. docker --security-opt seccomp=unconfined)' };
}

/** For tests: forget the cached verdict. */
export function resetSandboxPreflight(): void {
  cached = undefined;
}

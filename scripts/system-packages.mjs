// The Debian/Ubuntu packages the README's two commands need, and why: ONE list, read by `npm start`
// (scripts/start.mjs), `npm test` (scripts/test.mjs) and CI (.ci/run, through `--names`). npm cannot bring these.
// Missing ones are installed when this user may (root, or passwordless sudo) and apt is there, saying what and why;
// otherwise the caller stops before anything else with the one exact command to run.
//
//   node scripts/system-packages.mjs --names [use…]    the package names, one a line (all of them without a use)
//   node scripts/system-packages.mjs --ensure [use…]   install what is missing, or print the command and exit 1
// A use is `start` or a suite key of scripts/test.mjs (mocha, reliability, live, slurm, editor).
import { spawnSync } from 'node:child_process';
import { accessSync, constants, existsSync } from 'node:fs';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';

const SANDBOXED = ['start', 'mocha', 'reliability', 'live', 'slurm', 'editor'];
const ALL_SUITES = ['mocha', 'reliability', 'live', 'slurm', 'editor'];

/**
 * `probe` finds the package's piece where dpkg cannot tell (not Debian): a program on PATH, or an absolute file.
 * `uses` are what needs it: `start` (npm start) and the suites of npm test.
 */
export const SYSTEM_PACKAGES = [
  { name: 'git', probe: 'git', uses: [...SANDBOXED], why: 'tasks are git worktrees and git is their source of truth' },
  { name: 'libkrb5-dev', probe: '/usr/include/gssapi/gssapi.h', uses: ['start', 'editor'], why: "code-server's install builds its kerberos module against these headers" },
  { name: 'bubblewrap', probe: 'bwrap', uses: [...SANDBOXED], why: 'the sandbox every task runs in (without it a task runs unconfined, with a high finding)' },
  { name: 'socat', probe: 'socat', uses: [...SANDBOXED], why: "the sandbox's network cut: socat bridges the model endpoint into the task" },
  { name: 'iproute2', probe: 'ip', uses: ['start', ...ALL_SUITES], why: 'brings loopback up in the loopback-only network namespaces the editor, the live agents and the cluster run in' },
  { name: 'util-linux', probe: 'unshare', uses: ['start', ...ALL_SUITES], why: 'unshare makes those namespaces' },
  { name: 'bsdutils', probe: 'script', uses: ['mocha'], why: "script gives the terminal tests a real pty" },
  { name: 'procps', probe: 'ps', uses: ['mocha', 'reliability'], why: 'ps: the tests check that no process outlives its task' },
  { name: 'jq', probe: 'jq', uses: ['mocha'], why: "the OACP spec's shortest agent, a jq script, is run as written" },
  { name: 'curl', probe: 'curl', uses: ['mocha', 'reliability'], why: "the sandbox's host-name proxy is tested with curl inside the task" },
  { name: 'python3', probe: 'python3', uses: ['mocha', 'reliability'], why: "the terminal-injection probes (TIOCSTI) are python3" },
  { name: 'chromium', probe: '/usr/bin/chromium', uses: ['editor'], why: 'the editor suite drives the real VS Code (code-server) in it with Playwright' },
  { name: 'slurm-wlm', probe: 'slurmctld', uses: ['slurm'], why: "the launcher suite runs tasks as jobs of a real one-node Slurm cluster" },
  { name: 'munge', probe: 'munged', uses: ['slurm'], why: "Slurm's authentication daemon for that cluster" },
];

/** The packages any of `uses` needs (all of them when `uses` is empty), in the list's order. */
export function packagesFor(uses = []) {
  return SYSTEM_PACKAGES.filter((p) => !uses.length || p.uses.some((u) => uses.includes(u)));
}

function onPath(name, env) {
  for (const dir of (env.PATH ?? '').split(path.delimiter)) {
    if (!dir) continue;
    try {
      accessSync(path.join(dir, name), constants.X_OK);
      return true;
    } catch {
      /* not here */
    }
  }
  return false;
}

/** Which of `packages` are missing: dpkg's word where there is dpkg, else each one's probe. */
export function missingPackages(packages, env = process.env) {
  if (!packages.length) return [];
  if (onPath('dpkg-query', env)) {
    // Unknown names make dpkg-query exit 1 and say so on stderr; the ones it knows are still listed.
    const r = spawnSync('dpkg-query', ['-W', '-f', '${Package} ${db:Status-Abbrev}\n', ...packages.map((p) => p.name)], { env, encoding: 'utf8' });
    const installed = new Set((r.stdout ?? '').split('\n').map((l) => l.split(/\s+/)).filter(([, status]) => status === 'ii').map(([name]) => name));
    return packages.filter((p) => !installed.has(p.name));
  }
  return packages.filter((p) => (path.isAbsolute(p.probe) ? !existsSync(p.probe) : !onPath(p.probe, env)));
}

/**
 * How this user can install: `root`, `sudo` (passwordless: `sudo -n true` succeeds), or why not. `uid` is a
 * parameter so the tests can ask as someone else.
 */
export function installRights(env = process.env, uid = process.getuid?.()) {
  if (!onPath('apt-get', env) || !onPath('dpkg-query', env)) return { can: false, why: 'this is not a Debian/Ubuntu system (no apt-get)' };
  if (uid === 0) return { can: true, prefix: [] };
  if (onPath('sudo', env) && spawnSync('sudo', ['-n', 'true'], { env, stdio: 'ignore' }).status === 0) return { can: true, prefix: ['sudo'] };
  return { can: false, why: 'installing them needs root (or sudo without a password)' };
}

/** The one command that installs `missing`, as the user should type it. */
export function installCommand(missing, asRoot) {
  const sudo = asRoot ? '' : 'sudo ';
  return `${sudo}apt-get update && ${sudo}env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends ${missing.map((p) => p.name).join(' ')}`;
}

/** Each missing package with what it is for, one a line. */
export function explainMissing(missing) {
  return missing.map((p) => `  ${p.name.padEnd(12)} ${p.why}`).join('\n');
}

/**
 * Installs the packages `uses` need that are missing, saying what and why (apt-get update once), or throws an error
 * whose message names them and gives the one command to run. Returns the names installed.
 */
export function ensureSystemPackages(uses, { env = process.env, uid = process.getuid?.(), log = console.log } = {}) {
  const missing = missingPackages(packagesFor(uses), env);
  if (!missing.length) return [];
  const rights = installRights(env, uid);
  if (!rights.can) {
    const how = onPath('apt-get', env) ? `Run:\n  ${installCommand(missing, uid === 0)}` : 'Install their equivalents with your system\'s package manager.';
    throw new Error(`missing system packages (${rights.why}):\n${explainMissing(missing)}\n${how}`);
  }
  log(`installing the Debian packages this needs (npm cannot bring them)${rights.prefix.length ? ', with sudo' : ''}:\n${explainMissing(missing)}`);
  // sudo resets the environment: DEBIAN_FRONTEND goes through `env`.
  const [command, ...prefix] = [...rights.prefix, 'env', 'DEBIAN_FRONTEND=noninteractive', 'apt-get'];
  const apt = (args) => {
    const r = spawnSync(command, [...prefix, ...args], { env, stdio: ['ignore', 'inherit', 'inherit'] });
    if (r.status !== 0) throw new Error(`apt-get ${args.join(' ')} failed (exit ${r.status ?? r.signal}); run it yourself:\n  ${installCommand(missing, uid === 0)}`);
  };
  apt(['update', '-qq']);
  apt(['install', '-y', '-qq', '--no-install-recommends', ...missing.map((p) => p.name)]);
  const still = missingPackages(missing, env);
  if (still.length) throw new Error(`apt-get ran but these are still missing: ${still.map((p) => p.name).join(', ')}`);
  return missing.map((p) => p.name);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const [mode, ...uses] = process.argv.slice(2);
  if (mode === '--names') {
    for (const p of packagesFor(uses)) console.log(p.name);
  } else if (mode === '--ensure') {
    try {
      ensureSystemPackages(uses);
    } catch (err) {
      console.error(err.message);
      process.exitCode = 1;
    }
  } else {
    console.error('usage: node scripts/system-packages.mjs --names|--ensure [start|mocha|reliability|live|slurm|editor …]');
    process.exitCode = 2;
  }
}

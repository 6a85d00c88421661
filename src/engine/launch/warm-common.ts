import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { lstatSync, mkdirSync, readlinkSync, realpathSync, statSync } from 'node:fs';
import * as path from 'node:path';
import { ENV } from '../../protocol/env';

/*
 * What both sides of the warm supervisor's hand-off agree on (warm-client.ts hands a task over, warm-server.ts waits
 * for one): where the idle supervisor listens, which build it runs, and the lines they exchange. Node's built-ins only:
 * the CLI's loader imports this before it loads any bundle.
 *
 * Who may hand a task over is decided by the kernel: the socket lives in a folder that is the user's own (owned by
 * this uid, mode 0700, not a symlink), checked on both sides before use, so only this user (or root) can reach it.
 * A folder that fails the check turns the warm supervisor off (every task starts its supervisor fresh), it is never
 * repaired or used as it is.
 *
 * The kernel's check is not enough on its own (issue 34): a sandboxed agent runs as the same user, and where the folder
 * was visible to it (a runtime folder the sandbox did not know of) it handed the idle supervisor a task with its own
 * PATH, and its fake git ran outside the sandbox. So the caller also proves it is not inside a sandbox: it answers the
 * supervisor's fresh challenge with an HMAC keyed by the user's record key (record-key.ts), which the sandbox hides
 * from every agent, over the very task it hands over. No proof, no task.
 */

/** The idle supervisor's greeting, the first line it writes on every connection. */
export interface IdleHello {
  caesar_idle_supervisor: 1;
  pid: number;
  build: string;
  /** Fresh for each connection: what the caller's proof answers. */
  challenge: string;
}

/** The client's one line: the build it expects and the task (as a standby gets it, supervisor-process.ts). */
export interface HandOff {
  build: string;
  assignment: { taskDir: string; cwd: string; env: Record<string, string> };
  /** handOffProof() of the supervisor's challenge, this build and this assignment. */
  proof: string;
}

/** The caller's answer to `challenge`: an HMAC keyed by the user's secret over the challenge, the build and the task. */
export function handOffProof(key: Buffer, challenge: string, build: string, assignment: HandOff['assignment']): string {
  const task = JSON.stringify([assignment.taskDir, assignment.cwd, Object.entries(assignment.env)]);
  return createHmac('sha256', key).update(`caesar warm hand-off\0${challenge}\0${build}\0${task}`).digest('hex');
}

/** True when `handOff` carries the proof for `challenge` (compared in constant time). */
export function provenHandOff(key: Buffer, challenge: string, handOff: HandOff): boolean {
  const expected = Buffer.from(handOffProof(key, challenge, handOff.build, handOff.assignment), 'hex');
  const given = Buffer.from(handOff.proof, 'hex');
  return given.length === expected.length && timingSafeEqual(given, expected);
}

export const TAKEN_LINE = 'taken';
/** An environment is a few KiB; a line near this is not from Caesar. */
export const HAND_OFF_LINE_LIMIT = 4 << 20;
/** How long an idle supervisor waits with nothing to do before it exits (CAESAR_WARM_IDLE_MS). */
export const DEFAULT_IDLE_MS = 5 * 60_000;

/**
 * False when CAESAR_WARM_SUPERVISOR is 0/off/false/no, on Windows (no unix sockets with these permissions), and
 * inside a task (an agent's own `caesar run`, $CAESAR_TASK_ID set): a sub-task keeps today's start, in its parent's
 * process tree and sweep, and an agent never starts the idle supervisor that would run the user's next task (it
 * would inherit the agent's environment, NODE_OPTIONS included).
 */
export function warmSupervisorEnabled(env: NodeJS.ProcessEnv = process.env): boolean {
  if (process.platform === 'win32' || env[ENV.taskId]) return false;
  const value = (env.CAESAR_WARM_SUPERVISOR ?? '').trim().toLowerCase();
  return !['0', 'off', 'false', 'no'].includes(value);
}

/** Only the lean supervisor bundle (dist/supervisor.js) has an idle mode; the CLI bundle does not. */
export function supportsIdleMode(script: string): boolean {
  return path.basename(script) === 'supervisor.js';
}

/**
 * How long a new idle supervisor waits before it loads its bundle. It is started as a task is handed to the previous
 * one, and loading is most of a Node start's CPU: on a 2-core machine, at once, it competed with that task's own
 * start (its git work, its agent) for the cores. The next task rarely comes within this delay; one that does starts
 * as without a warm supervisor (the standby the CLI's loader starts, or a fresh process), no slower than before.
 */
export const DEFAULT_IDLE_LOAD_DELAY_MS = 2_000;

export function idleLoadDelayMs(env: NodeJS.ProcessEnv = process.env): number {
  const value = Number(env.CAESAR_WARM_LOAD_DELAY_MS);
  return env.CAESAR_WARM_LOAD_DELAY_MS !== undefined && Number.isFinite(value) && value >= 0 ? value : DEFAULT_IDLE_LOAD_DELAY_MS;
}

export function idleMs(env: NodeJS.ProcessEnv = process.env): number {
  const value = Number(env.CAESAR_WARM_IDLE_MS);
  return Number.isFinite(value) && value > 0 ? value : DEFAULT_IDLE_MS;
}

/**
 * The user's folder for idle supervisors: $CAESAR_WARM_DIR, else /run/user/<uid>/caesar when that runtime folder is the
 * user's own, else /tmp/caesar-<uid>. Not $XDG_RUNTIME_DIR nor $TMPDIR: an agent sets its own environment, and a folder
 * named there is one the sandbox may not know to hide (issue 34); these two it hides (policy.ts). Created 0700 when
 * `create`; undefined when it is missing or is not safely this user's own.
 */
export function warmDir(env: NodeJS.ProcessEnv = process.env, create = false): string | undefined {
  const uid = process.getuid?.();
  if (uid === undefined) return undefined;
  const dir = env.CAESAR_WARM_DIR
    ? path.resolve(env.CAESAR_WARM_DIR)
    : isPrivateFolder(`/run/user/${uid}`, uid)
      ? path.join(`/run/user/${uid}`, 'caesar')
      : path.join('/tmp', `caesar-${uid}`);
  if (create) {
    try {
      mkdirSync(dir, { mode: 0o700 });
    } catch {
      /* exists already (checked below), or cannot be made (then the check fails) */
    }
  }
  return isPrivateFolder(dir, uid) ? dir : undefined;
}

/** A real folder (not a symlink), owned by `uid`, that no one else may enter or write. */
export function isPrivateFolder(dir: string, uid: number): boolean {
  try {
    const stat = lstatSync(dir);
    return stat.isDirectory() && stat.uid === uid && (stat.mode & 0o077) === 0;
  } catch {
    return false;
  }
}

/**
 * Which code an idle supervisor runs: the supervisor's loader and bundle as they are on disk now (path, inode, size,
 * times) and the Node binary running them. Any rebuild or reinstall changes it, so a supervisor that loaded the old
 * code is never handed a task by the new (its socket has another name) and exits at its next check.
 */
export function buildId(script: string): string | undefined {
  try {
    let key = `${process.execPath}\0${process.version}\0${process.arch}`;
    for (const file of [script, path.join(path.dirname(script), 'supervisor-main.js')]) {
      const real = realpathSync(file);
      const stat = statSync(real);
      key += `\0${real}\0${stat.dev}:${stat.ino}:${stat.size}:${stat.mtimeMs}:${stat.ctimeMs}`;
    }
    return createHash('sha256').update(key).digest('hex').slice(0, 24);
  } catch {
    return undefined;
  }
}

/** The idle supervisor's socket for `script`'s build, when one is there (a socket file, this user's); else undefined. */
export function idleSocket(script: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (!warmSupervisorEnabled(env) || !supportsIdleMode(script)) return undefined;
  const dir = warmDir(env);
  const build = dir && buildId(script);
  if (!dir || !build) return undefined;
  const socket = socketPath(dir, build);
  try {
    const stat = lstatSync(socket);
    return stat.isSocket() && stat.uid === process.getuid?.() ? socket : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The idle supervisor's socket for this build in `dir`, in this process's namespaces (short: unix socket paths are
 * limited to ~107 bytes).
 */
export function socketPath(dir: string, build: string): string {
  return path.join(dir, `idle-${build}-${namespaceKey()}.sock`);
}

let namespaces: string | undefined;

/**
 * Which network, mount, user and PID namespaces this process lives in, as a short key. A socket file is reachable
 * from every namespace that sees the folder, but a supervisor started in another one (a loopback-only `unshare -n`,
 * a container) would run the task in its world: its loopback, its files. So each side looks only for a supervisor of
 * its own namespaces. Where /proc/self/ns does not exist (not Linux) the key is a constant.
 */
function namespaceKey(): string {
  namespaces ??= createHash('sha256')
    .update(['net', 'mnt', 'user', 'pid'].map((kind) => readNamespace(kind)).join(' '))
    .digest('hex')
    .slice(0, 8);
  return namespaces;
}

function readNamespace(kind: string): string {
  try {
    return readlinkSync(`/proc/self/ns/${kind}`);
  } catch {
    return kind;
  }
}

/** Splits a stream's text into lines, giving up (undefined) past `limit` characters without a newline. */
export class LineReader {
  private text = '';
  constructor(private readonly limit: number) {}

  /** The complete lines so far, or undefined when the peer sent too much without a newline. */
  push(chunk: Buffer): string[] | undefined {
    this.text += chunk.toString('utf8');
    const lines = this.text.split('\n');
    this.text = lines.pop() ?? '';
    return this.text.length > this.limit ? undefined : lines;
  }
}

/** A hand-off line as the client wrote it, or undefined for anything else. Each field is checked, nothing trusted. */
export function parseHandOff(line: string): HandOff | undefined {
  try {
    const value = JSON.parse(line) as Partial<HandOff>;
    const a = value.assignment;
    if (typeof value.build !== 'string' || typeof value.proof !== 'string' || typeof a !== 'object' || a === null) return undefined;
    if (typeof a.taskDir !== 'string' || !path.isAbsolute(a.taskDir) || typeof a.cwd !== 'string' || !path.isAbsolute(a.cwd)) return undefined;
    if (typeof a.env !== 'object' || a.env === null || !Object.values(a.env).every((v) => typeof v === 'string')) return undefined;
    return { build: value.build, assignment: { taskDir: a.taskDir, cwd: a.cwd, env: { ...a.env } }, proof: value.proof };
  } catch {
    return undefined;
  }
}

export function parseHello(line: string): IdleHello | undefined {
  try {
    const value = JSON.parse(line) as Partial<IdleHello>;
    if (value.caesar_idle_supervisor !== 1 || typeof value.build !== 'string' || typeof value.challenge !== 'string' || !Number.isInteger(value.pid) || (value.pid ?? 0) <= 1) return undefined;
    return value as IdleHello;
  } catch {
    return undefined;
  }
}

import { spawn } from 'node:child_process';
import { unlinkSync } from 'node:fs';
import * as net from 'node:net';
import {
  LineReader,
  TAKEN_LINE,
  buildId,
  handOffProof,
  idleSocket,
  parseHello,
  supportsIdleMode,
  warmDir,
  warmSupervisorEnabled,
  type HandOff,
  type IdleHello,
} from './warm-common';
import { recordKey } from '../store/record-key';
import { SUPERVISOR_V8_FLAGS, supervisorEnv, type StandbyAssignment } from './supervisor-process';

export { idleSocket } from './warm-common';

/*
 * The caller's side of the warm supervisor (issue 27): an idle supervisor of this user, already loaded, waits on a
 * unix socket (warm-server.ts); delegate() hands it the task instead of starting a Node process, and then starts the
 * next idle one in the background. Anything unexpected — no socket, a file that is not a socket, one no one listens
 * on, another build, a supervisor that dies or goes quiet mid-handshake — returns undefined, and delegate() starts
 * the task's supervisor the ordinary way. Node's built-ins only (the CLI's loader imports this).
 */

/** How long a hand-off may take before the idle supervisor is ended and a fresh one started instead. */
const HAND_OFF_TIMEOUT_MS = 30_000;

/** Hands the task to the idle supervisor of `script`'s build: its pid once it has taken it, else undefined. */
export async function handOffToIdle(script: string, assignment: StandbyAssignment, env: NodeJS.ProcessEnv = process.env): Promise<number | undefined> {
  const socket = idleSocket(script, env);
  const build = socket && buildId(script);
  const key = socket && userSecret();
  if (!socket || !build || !key) return undefined;
  return new HandOffAttempt(socket, key, build, assignment).run();
}

/** Asks the idle supervisor who it is, without handing it anything (tests, `caesar doctor`-style checks). */
export function probeIdleSupervisor(script: string, env: NodeJS.ProcessEnv = process.env): Promise<IdleHello | undefined> {
  const socket = idleSocket(script, env);
  if (!socket) return Promise.resolve(undefined);
  return new Promise((resolve) => {
    const reader = new LineReader(64 << 10);
    const connection = net.connect(socket);
    const done = (hello: IdleHello | undefined) => {
      connection.destroy();
      resolve(hello);
    };
    connection.on('data', (chunk) => {
      const lines = reader.push(chunk);
      if (!lines) done(undefined);
      else if (lines.length) done(parseHello(lines[0]!));
    });
    connection.on('error', () => done(undefined));
    connection.on('close', () => done(undefined));
  });
}

/**
 * Starts an idle supervisor for `script` in the background unless one is there: detached in its own session, no
 * stdio, in `/`, unref'd, so it is on no one's critical path and outlives its starter. It finds out itself whether
 * another one won the race to listen (warm-server.ts). The pid, or undefined when none was started.
 */
export function startIdleSupervisor(script: string, env: NodeJS.ProcessEnv = process.env): number | undefined {
  if (!warmSupervisorEnabled(env) || !supportsIdleMode(script) || idleSocket(script, env) || !warmDir(env, true)) return undefined;
  try {
    const child = spawn(process.execPath, [...SUPERVISOR_V8_FLAGS, script, 'idle'], {
      cwd: '/',
      detached: true,
      stdio: 'ignore',
      env: supervisorEnv(env === process.env ? undefined : env),
      windowsHide: true,
    });
    child.on('error', () => undefined);
    child.unref();
    return child.pid;
  } catch {
    return undefined;
  }
}

/** One connection: read the greeting, check its build, send the task, wait for "taken". */
class HandOffAttempt {
  private readonly reader = new LineReader(64 << 10);
  private hello?: IdleHello;
  /** The task was sent: from then on, any end but "taken" or an explicit refusal may leave it half taken. */
  private sent = false;
  private settled = false;
  private connection?: net.Socket;
  private timer?: NodeJS.Timeout;
  private resolve: (pid: number | undefined) => void = () => undefined;

  constructor(
    private readonly socket: string,
    private readonly key: Buffer,
    private readonly build: string,
    private readonly assignment: HandOff['assignment'],
  ) {}

  run(): Promise<number | undefined> {
    return new Promise((resolve) => {
      this.resolve = resolve;
      const connection = net.connect(this.socket);
      this.connection = connection;
      this.timer = setTimeout(() => this.failed(), HAND_OFF_TIMEOUT_MS);
      connection.on('data', (chunk) => this.onData(chunk));
      connection.on('error', (err: NodeJS.ErrnoException) => {
        // A socket no one listens on is a dead idle supervisor's: out of the way, so that the next one can start.
        if (err.code === 'ECONNREFUSED') removeStaleSocket(this.socket);
        this.failed();
      });
      connection.on('close', () => this.failed());
    });
  }

  private onData(chunk: Buffer): void {
    const lines = this.reader.push(chunk);
    if (!lines) return this.settle(undefined);
    for (const line of lines) {
      if (!this.hello) {
        const hello = parseHello(line);
        // Another build answering on this build's name is not one to trust with a task.
        if (!hello || hello.build !== this.build) return this.settle(undefined);
        this.hello = hello;
        this.sent = true;
        const proof = handOffProof(this.key, hello.challenge, this.build, this.assignment);
        const handOff: HandOff = { build: this.build, assignment: this.assignment, proof };
        this.connection?.write(`${JSON.stringify(handOff)}\n`);
      } else if (line === TAKEN_LINE) {
        return this.settle(this.hello.pid);
      } else {
        this.sent = false; // refused: it took nothing
        return this.settle(undefined);
      }
    }
  }

  /**
   * Gone quiet, or the connection broke after the task was sent: the supervisor may have taken it or may yet, and a
   * task must never get two supervisors, so it is ended before delegate() starts a fresh one.
   */
  private failed(): void {
    if (this.sent && this.hello && !this.settled) {
      try {
        process.kill(this.hello.pid, 'SIGKILL');
      } catch {
        /* gone already */
      }
    }
    this.settle(undefined);
  }

  private settle(pid: number | undefined): void {
    if (this.settled) return;
    this.settled = true;
    clearTimeout(this.timer);
    this.connection?.destroy();
    this.resolve(pid);
  }
}

/** The user's record key, what proves a hand-off (warm-common.ts); undefined where it cannot be had (a sandbox). */
function userSecret(): Buffer | undefined {
  try {
    return recordKey();
  } catch {
    return undefined;
  }
}

function removeStaleSocket(socket: string): void {
  try {
    unlinkSync(socket);
  } catch {
    /* gone already */
  }
}

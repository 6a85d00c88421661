import { chmodSync, lstatSync, unlinkSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import * as net from 'node:net';
import { recordKey } from '../store/record-key';
import {
  HAND_OFF_LINE_LIMIT,
  LineReader,
  TAKEN_LINE,
  buildId,
  idleMs,
  isPrivateFolder,
  parseHandOff,
  provenHandOff,
  socketPath,
  warmDir,
  type HandOff,
} from './warm-common';

/*
 * The idle supervisor's side (issue 27): `supervisor.js idle` loads everything a supervisor needs, then waits on a
 * unix socket in the user's private folder (warm-common.ts) for ONE task. It takes the first well-formed hand-off of
 * its own build, stops listening at once (one supervisor per task, one task per supervisor) and from then on is that
 * task's supervisor exactly as a fresh one (supervisor-main.ts: superviseTask re-reads and re-validates the task
 * folder from disk; nothing handed over is trusted beyond where to look and the environment a fresh one would get).
 * Only a caller that proves it is outside every sandbox (the HMAC of warm-common.ts, over this connection's challenge)
 * is given the task: a sandboxed agent of the same user that reaches the socket is refused.
 * It exits when nothing came for CAESAR_WARM_IDLE_MS, when its code on disk changed (a stale build never runs a
 * task), or when its socket is no longer its own (another idle one replaced it).
 */

/** How often an idle supervisor checks that its build, folder and socket are still what it started with. */
const CHECK_MS = 2_000;
/** A connection that has not sent its task by then is dropped (it is not delegate(), or it died). */
const CONNECTION_TIMEOUT_MS = 10_000;

export interface IdleOptions {
  /** The supervisor's loader (dist/supervisor.js), whose build this process runs. */
  script: string;
  env?: NodeJS.ProcessEnv;
  /**
   * Becomes the task's supervisor: opens its log, calls `answer()` once it holds the task, then supervises it. It
   * must end the process when it cannot take the task (the caller then starts a fresh supervisor).
   */
  takeTask: (handOff: HandOff['assignment'], answer: () => void) => void;
  /** Called when this idle supervisor leaves without a task; the process should exit. */
  exit: (reason: string) => void;
}

/** Listens for a task; resolves false (after calling nothing) when it cannot listen, e.g. another idle one is there. */
export async function waitIdle(options: IdleOptions): Promise<boolean> {
  const env = options.env ?? process.env;
  const dir = warmDir(env, true);
  const build = buildId(options.script);
  if (!dir || !build) return false;
  let key: Buffer;
  try {
    key = recordKey();
  } catch {
    return false; // no secret to check a caller with: no idle mode
  }
  const socket = socketPath(dir, build);
  const server = net.createServer();
  if (!(await listenOnce(server, socket))) return false;
  chmodSync(socket, 0o600);
  new IdleSupervisor(options, server, { dir, build, socket, inode: lstatSync(socket).ino, key }, idleMs(env)).start();
  return true;
}

interface Place {
  dir: string;
  build: string;
  socket: string;
  inode: number;
  /** The user's secret a caller proves it holds (warm-common.ts). */
  key: Buffer;
}

class IdleSupervisor {
  private taken = false;
  private readonly timers: NodeJS.Timeout[] = [];

  constructor(
    private readonly options: IdleOptions,
    private readonly server: net.Server,
    private readonly place: Place,
    private readonly idleMs: number,
  ) {}

  start(): void {
    this.server.on('connection', (connection) => this.greet(connection));
    this.timers.push(setTimeout(() => this.leave('idle for too long'), this.idleMs));
    this.timers.push(
      setInterval(() => {
        const stale = this.staleReason();
        if (stale) this.leave(stale);
      }, CHECK_MS),
    );
  }

  private greet(connection: net.Socket): void {
    const reader = new LineReader(HAND_OFF_LINE_LIMIT);
    const timer = setTimeout(() => connection.destroy(), CONNECTION_TIMEOUT_MS);
    connection.on('error', () => undefined);
    connection.on('close', () => clearTimeout(timer));
    const challenge = randomBytes(32).toString('hex');
    connection.write(`${JSON.stringify({ caesar_idle_supervisor: 1, pid: process.pid, build: this.place.build, challenge })}\n`);
    connection.on('data', (chunk) => {
      const lines = reader.push(chunk);
      if (!lines) return void connection.destroy();
      if (!lines.length) return;
      clearTimeout(timer);
      connection.removeAllListeners('data');
      this.consider(connection, lines[0]!, challenge);
    });
  }

  /** One hand-off line: refused unless well formed, proven, of this build, and this supervisor still free and current. */
  private consider(connection: net.Socket, line: string, challenge: string): void {
    const handOff = parseHandOff(line);
    const stale = this.staleReason();
    const refusal = !handOff
      ? 'malformed hand-off'
      : !provenHandOff(this.place.key, challenge, handOff)
        ? 'no proof that the caller is outside the sandbox'
        : handOff.build !== this.place.build
          ? 'another build'
          : this.taken
            ? 'already taken'
            : stale;
    if (refusal || !handOff) {
      connection.end(`refused: ${refusal}\n`);
      if (stale) this.leave(stale);
      return;
    }
    this.taken = true;
    this.stopListening();
    this.options.takeTask(handOff.assignment, () => connection.end(`${TAKEN_LINE}\n`));
  }

  /** Why this process must not run a task any more, or undefined. */
  private staleReason(): string | undefined {
    if (buildId(this.options.script) !== this.place.build) return 'its code on disk has changed';
    if (!isPrivateFolder(this.place.dir, process.getuid?.() ?? -1)) return 'its folder is no longer private';
    try {
      if (lstatSync(this.place.socket).ino !== this.place.inode) return 'another idle supervisor took its place';
    } catch {
      return 'its socket was removed';
    }
    return undefined;
  }

  private stopListening(): void {
    for (const timer of this.timers) clearTimeout(timer);
    this.server.close();
    removeOwnSocket(this.place);
  }

  private leave(reason: string): void {
    if (this.taken) return;
    this.taken = true;
    this.stopListening();
    this.options.exit(reason);
  }
}

/**
 * Listens on `socket`. A path already there is either a live idle supervisor (then this one is not needed: false)
 * or left over (a crashed one's socket, or anything else in this private folder): removed, and listened on again.
 */
async function listenOnce(server: net.Server, socket: string): Promise<boolean> {
  for (let attempt = 0; attempt < 2; attempt++) {
    const error = await new Promise<NodeJS.ErrnoException | undefined>((resolve) => {
      server.once('error', resolve);
      server.listen(socket, () => {
        server.off('error', resolve);
        resolve(undefined);
      });
    });
    if (!error) return true;
    if (error.code !== 'EADDRINUSE' || (await someoneListens(socket))) return false;
    try {
      unlinkSync(socket);
    } catch {
      return false;
    }
  }
  return false;
}

function someoneListens(socket: string): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = net.connect(socket);
    probe.once('connect', () => {
      probe.destroy();
      resolve(true);
    });
    probe.once('error', () => resolve(false));
  });
}

/** Removes the socket only if it is still the one this process made (another idle one may have replaced it). */
function removeOwnSocket(place: Place): void {
  try {
    if (lstatSync(place.socket).ino === place.inode) unlinkSync(place.socket);
  } catch {
    /* gone already */
  }
}

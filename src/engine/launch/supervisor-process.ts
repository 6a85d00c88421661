import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync } from 'node:fs';
import type { Readable } from 'node:stream';
import * as path from 'node:path';
import { locateDistFile } from '../../agents/dist-path';
import { testSwitch } from '../../base/test-switches';
import { openRegularFileForWriting } from '../../base/safe-write';

/*
 * How a task's supervisor process comes to be. Normally delegate() spawns it once the task directory exists. A
 * `caesar run` from a terminal can do better (issue 14): the CLI's loader starts a *standby* supervisor before the CLI
 * has even loaded its own bundle, so the two Node start-ups (each ~0.1–0.3 s) overlap instead of following each other;
 * when delegate() has written the task directory it hands the standby its task over a pipe, and the standby becomes
 * that task's supervisor. The task still outlives the CLI: the standby is detached in its own session like any
 * supervisor. This module only uses Node's built-ins (and dist-path), because the CLI's tiny loader imports it.
 */

/**
 * A supervisor allocates little but briefly: V8's default young generation (up to 16 MiB per semi-space) would mostly
 * be resident memory it never needs. A small one keeps every task's supervisor lean (issue 14, memory).
 */
export const SUPERVISOR_V8_FLAGS = ['--max-semi-space-size=1'];

/** What a standby needs to become a task's supervisor, sent as one JSON line on its stdin. */
export interface StandbyAssignment {
  taskDir: string;
  /** The supervisor's working directory (the task's root). */
  cwd: string;
  /** The supervisor's whole environment, exactly as a freshly spawned one would get it. */
  env: Record<string, string>;
}

/** The line a standby writes on its answer pipe once it has taken its task (and opened its log). */
export const STANDBY_TAKEN = 'taken';

/** The standby's answer pipe: a file descriptor of its own, so that its stdout can simply be /dev/null. */
export const STANDBY_ANSWER_FD = 3;

export interface SupervisorLocation {
  /** The CLI bundle the supervisor is found beside (default: $CAESAR_CLI_JS, beside the running bundle, dist/). */
  cliScript?: string;
  env?: NodeJS.ProcessEnv;
}

/**
 * The script that supervises a task: $CAESAR_SUPERVISOR_JS, else dist/supervisor.js beside the CLI bundle (a lean
 * bundle: a task's start pays for loading it, issue 14), else the CLI bundle itself. All take `supervise <taskDir>`.
 */
export function locateSupervisor(options: SupervisorLocation = {}): string {
  const env = { ...process.env, ...options.env };
  if (testSwitch('supervisorScript', env)) return locateDistFile('supervisor.js', 'supervisorScript', env);
  const cliScript = options.cliScript ?? locateDistFile('caesar.js', 'cliScript', env);
  const dir = path.dirname(cliScript);
  const lean = path.join(dir, 'supervisor.js');
  return existsSync(lean) && existsSync(path.join(dir, 'supervisor-main.js')) ? lean : cliScript;
}

/**
 * `process.execPath <supervisor.js | caesar.js> supervise <taskDir>`, detached in its own session, stdio to
 * supervisor.log, unref'd. ELECTRON_RUN_AS_NODE=1 lets the extension host's Electron binary act as plain Node, so no
 * `node` on PATH is needed. The pid, or undefined when the process could not be started.
 */
export function spawnSupervisor(script: string, taskDir: string, logFile: string, cwd: string, extraEnv?: NodeJS.ProcessEnv): number | undefined {
  // The task folder may hold anything by now (a symlink or FIFO planted at supervisor.log): never follow or block.
  const log = openRegularFileForWriting(logFile, 'append');
  try {
    const child = spawn(process.execPath, [...SUPERVISOR_V8_FLAGS, script, 'supervise', taskDir], {
      cwd,
      detached: true,
      stdio: ['ignore', log, log],
      env: supervisorEnv(extraEnv),
      windowsHide: true,
    });
    child.on('error', () => {
      /* reported through the store: a supervisor that never writes its pid is shown as lost */
    });
    child.unref();
    return child.pid;
  } finally {
    closeSync(log);
  }
}

/** The environment every supervisor runs with: the caller's, the delegation's additions, Electron as plain Node. */
export function supervisorEnv(extraEnv?: NodeJS.ProcessEnv): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries({ ...process.env, ...extraEnv, ELECTRON_RUN_AS_NODE: '1' })) {
    if (value !== undefined) env[key] = value;
  }
  return env;
}

/** How long delegate() waits for a standby to take its task before it ends it and spawns a fresh supervisor. */
const STANDBY_TAKE_TIMEOUT_MS = 30_000;

/** A supervisor process started ahead of its task, waiting on its stdin for one. */
export class SupervisorStandby {
  private readonly answers: Readable | null;
  private exited = false;
  private taken = false;

  private constructor(
    readonly script: string,
    private readonly child: ChildProcess,
  ) {
    this.answers = child.stdio[STANDBY_ANSWER_FD] as Readable | null;
    child.on('exit', () => (this.exited = true));
    child.on('error', () => (this.exited = true));
    // A standby that dies, or a CLI that exits without a task for it, must never crash the CLI with EPIPE.
    child.stdin?.on('error', () => undefined);
    this.answers?.on('error', () => undefined);
  }

  /** Starts `<script> standby` detached; it exits on its own when this process ends without giving it a task. */
  static start(script: string): SupervisorStandby | undefined {
    try {
      const child = spawn(process.execPath, [...SUPERVISOR_V8_FLAGS, script, 'standby'], {
        detached: true,
        stdio: ['pipe', 'ignore', 'ignore', 'pipe'],
        env: supervisorEnv(),
        windowsHide: true,
      });
      if (child.pid === undefined) return undefined;
      const standby = new SupervisorStandby(script, child);
      // Neither the process nor its pipes may keep this one alive: the CLI ends when its own work is done.
      child.unref();
      unrefStream(child.stdin);
      unrefStream(standby.answers);
      return standby;
    } catch {
      return undefined;
    }
  }

  /**
   * Hands the standby its task; resolves to its pid once it has taken it, or undefined (and the standby is ended) when
   * it cannot: it died, or did not answer in time. Only one task per standby.
   */
  assign(assignment: StandbyAssignment): Promise<number | undefined> {
    const { child } = this;
    const answers = this.answers;
    if (this.taken || this.exited || !child.stdin?.writable || !answers) return Promise.resolve(undefined);
    this.taken = true;
    return new Promise((resolve) => {
      let answer = '';
      let settled = false;
      const settle = (pid: number | undefined) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        answers.off('data', onData);
        child.off('exit', onGone);
        answers.destroy();
        if (pid === undefined) this.kill();
        resolve(pid);
      };
      const onData = (chunk: Buffer) => {
        answer += chunk.toString();
        if (answer.includes('\n')) settle(answer.trim() === STANDBY_TAKEN ? child.pid : undefined);
      };
      const onGone = () => settle(undefined);
      const timer = setTimeout(onGone, STANDBY_TAKE_TIMEOUT_MS);
      // Waiting here is what the CLI would otherwise spend starting a supervisor: keep this process alive meanwhile.
      refStream(answers);
      answers.on('data', onData);
      child.once('exit', onGone);
      child.stdin?.end(`${JSON.stringify(assignment)}\n`);
    });
  }

  /** Ends an unused standby (it would end by itself when this process exits; this is sooner). */
  dispose(): void {
    if (!this.taken) this.kill();
  }

  private kill(): void {
    if (this.exited) return;
    try {
      this.child.kill('SIGKILL');
    } catch {
      /* already gone */
    }
  }
}

function unrefStream(stream: unknown): void {
  (stream as { unref?: () => void } | null)?.unref?.();
}

function refStream(stream: unknown): void {
  (stream as { ref?: () => void } | null)?.ref?.();
}

// The loader (its own bundle) and delegate() (the CLI's bundle) share no module instance: the standby is handed over
// through one well-known global slot, taken at most once.
const SLOT = Symbol.for('caesar.supervisorStandby');
type Slot = { [SLOT]?: SupervisorStandby };

/** Called by the CLI's loader before `caesar run` loads the CLI: starts a standby for the supervisor it will need. */
export function prestartSupervisor(env: NodeJS.ProcessEnv = process.env): void {
  // An explicit supervisor script (tests, debugging) is started the ordinary way; so is the CLI bundle itself, which
  // has no standby mode: only the lean dist/supervisor.js does.
  if (env.CAESAR_SUPERVISOR_STANDBY === 'off' || testSwitch('supervisorScript', env)) return;
  let script: string;
  try {
    script = locateSupervisor({ env });
  } catch {
    return; // no supervisor to start: delegate() reports it the usual way
  }
  if (path.basename(script) !== 'supervisor.js') return;
  const standby = SupervisorStandby.start(script);
  if (standby) (globalThis as Slot)[SLOT] = standby;
}

/** The standby started for `script`, if there is one; it is taken out of the slot (one task per standby). */
export function takeStandby(script: string): SupervisorStandby | undefined {
  const slot = globalThis as Slot;
  const standby = slot[SLOT];
  if (!standby) return undefined;
  delete slot[SLOT];
  if (standby.script === script) return standby;
  standby.dispose();
  return undefined;
}

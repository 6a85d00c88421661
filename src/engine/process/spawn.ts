import { spawn } from 'node:child_process';
import { closeSync, writeSync } from 'node:fs';
import { openRegularFileForWriting } from '../../base/safe-write';
import type { Writable } from 'node:stream';
import type { SpawnPlan } from '../../agents/types';
import { sweepTaskProcesses } from './process-sweep';
import { WriteFault } from './write-fault';

export interface RunAgentOptions {
  plan: SpawnPlan;
  env: NodeJS.ProcessEnv;
  /** Truncated at start; receives every stdout and stderr line in arrival order (reference §2.7.1). */
  rawLogPath: string;
  /** Complete stdout lines, in order, batched per chunk; this is where translation happens. */
  onStdoutLines(lines: string[]): void;
  onPid?(pid: number): void;
  /** The deadline, counted from spawn. */
  timeoutMs: number;
  /** Time between SIGTERM and SIGKILL of the process group. */
  graceMs: number;
  /** Aborting it cancels the run (TERM then KILL of the whole group). */
  signal?: AbortSignal;
  /** Called once when the deadline or a cancel starts terminating the group (before the process has exited). */
  onTerminate?(reason: 'timeout' | 'cancel'): void;
  /**
   * A conversation over stdio (the ACP transport): stdin stays open and is handed over, with a writer of raw.log
   * lines, instead of being fed plan.stdin and closed.
   */
  onStdin?(stdin: Writable, logLines: (lines: string[]) => void): void;
  /** Aborting it ends a run whose work is done: the group is terminated as for a cancel, without counting as one. */
  stopSignal?: AbortSignal;
  /**
   * Where a failed write of raw.log is latched; the events writer reports into the same one. Either failure stops
   * the agent's group: a task whose record cannot be kept must not run on unrecorded.
   */
  fault?: WriteFault;
}

export interface RunAgentResult {
  pid?: number;
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  timedOut: boolean;
  cancelled: boolean;
  /** The process could not be started at all (binary missing, not executable…). */
  spawnError?: string;
  /** A task file could not be written (disk full, file-size limit…); the group was stopped because of it. */
  writeError?: string;
  durationMs: number;
}

/** A line longer than this without a newline is cut, so a runaway agent cannot grow our memory without bound. */
const MAX_LINE_BYTES = 8 * 1024 * 1024;

/**
 * Runs an agent in its OWN process group (detached: on POSIX the child calls setsid), so a timeout or a cancel can
 * signal the whole group — shells and tools the agent started included (reference §8.7 fixed). Stdin is closed at once
 * or fed plan.stdin then closed; argv only, never a shell. When the leader exits, whatever it left running in its group
 * is terminated too: a finished task leaves no process behind.
 */
export function runAgentProcess(options: RunAgentOptions): Promise<RunAgentResult> {
  const { plan } = options;
  const started = Date.now();
  // Never through a symlink or into a FIFO planted at raw.log: anything but a regular file is refused (safe-write.ts).
  const raw = openRegularFileForWriting(options.rawLogPath, 'truncate');
  const fault = options.fault ?? new WriteFault();
  let rawOpen = true;
  const logLines = (lines: string[]) => {
    if (!rawOpen) return;
    try {
      writeLines(raw, lines);
    } catch (error) {
      rawOpen = false;
      fault.report('raw.log', error);
    }
  };
  let timedOut = false;
  let cancelled = false;
  let killTimer: NodeJS.Timeout | undefined;
  let deadline: NodeJS.Timeout | undefined;
  let closeGuard: NodeJS.Timeout | undefined;
  let termSentAt: number | undefined;

  return new Promise<RunAgentResult>((resolve) => {
    let settled = false;
    const finish = (result: Omit<RunAgentResult, 'durationMs' | 'timedOut' | 'cancelled'>) => {
      if (settled) return;
      settled = true;
      if (deadline) clearTimeout(deadline);
      if (killTimer) clearTimeout(killTimer);
      if (closeGuard) clearTimeout(closeGuard);
      options.signal?.removeEventListener('abort', onAbort);
      options.stopSignal?.removeEventListener('abort', onStop);
      fault.signal.removeEventListener('abort', onStop);
      rawOpen = false;
      try {
        closeSync(raw);
      } catch {
        /* EIO on close: what could be written was, the fault (if any) is already latched */
      }
      const writeError = fault.reason;
      resolve({ ...result, ...(writeError ? { writeError } : {}), timedOut, cancelled, durationMs: Date.now() - started });
    };

    let child: ReturnType<typeof spawn>;
    try {
      child = spawn(plan.command, plan.args, {
        cwd: plan.cwd,
        env: options.env,
        detached: true,
        stdio: [plan.stdin !== undefined || options.onStdin ? 'pipe' : 'ignore', 'pipe', 'pipe'],
        windowsHide: true,
      });
    } catch (err) {
      finish({ exitCode: null, signal: null, spawnError: (err as Error).message });
      return;
    }

    const terminateGroup = () => {
      if (child.pid === undefined) return;
      termSentAt ??= Date.now();
      signalGroup(child.pid, 'SIGTERM');
      killTimer ??= setTimeout(() => signalGroup(child.pid!, 'SIGKILL'), options.graceMs);
    };
    // Declarations (hoisted): finish() may run, and unregister them, before these lines are reached (a spawn that
    // throws at once, E2BIG for one, finishes above; an arrow in a const there was a ReferenceError, issue 23).
    function onAbort(): void {
      if (timedOut || cancelled || exited) return;
      cancelled = true;
      options.onTerminate?.('cancel');
      terminateGroup();
    }
    function onStop(): void {
      if (!exited) terminateGroup();
    }

    let exited = false;
    child.on('error', (err) => {
      // Spawn failures (ENOENT, EACCES) arrive here without an exit; later errors are stream noise.
      if (child.pid === undefined) finish({ exitCode: null, signal: null, spawnError: describeSpawnError(err, plan.command) });
    });
    if (child.pid === undefined) return; // the 'error' event will settle

    options.onPid?.(child.pid);
    if (options.onStdin && child.stdin) {
      child.stdin.on('error', () => {}); // EPIPE once the agent is gone: the conversation sees the end on stdout
      options.onStdin(child.stdin, logLines);
    } else if (plan.stdin !== undefined && child.stdin) {
      child.stdin.on('error', () => {}); // an agent that never reads its stdin must not crash us with EPIPE
      child.stdin.end(plan.stdin);
    }

    const stdout = new LineSplitter((lines) => {
      logLines(lines);
      options.onStdoutLines(lines);
    });
    const stderr = new LineSplitter(logLines);
    child.stdout!.on('data', (chunk: Buffer) => stdout.push(chunk));
    child.stderr!.on('data', (chunk: Buffer) => stderr.push(chunk));

    deadline = setTimeout(() => {
      if (cancelled || exited) return;
      timedOut = true;
      options.onTerminate?.('timeout');
      terminateGroup();
    }, options.timeoutMs);
    if (options.signal?.aborted) onAbort();
    else options.signal?.addEventListener('abort', onAbort);
    if (options.stopSignal?.aborted) onStop();
    else options.stopSignal?.addEventListener('abort', onStop);
    if (fault.signal.aborted) onStop();
    else fault.signal.addEventListener('abort', onStop);

    let exitCode: number | null = null;
    let exitSignal: NodeJS.Signals | null = null;
    child.on('exit', (code, signal) => {
      exited = true;
      exitCode = code;
      exitSignal = signal;
      // The leader is gone; anything it left in its group goes too (TERM, then KILL after the grace period).
      if (groupAlive(child.pid!)) terminateGroup();
      // A descendant that left our group could hold the pipes open forever: stop reading after the grace period.
      closeGuard = setTimeout(() => {
        child.stdout?.destroy();
        child.stderr?.destroy();
      }, options.graceMs + 1000);
    });
    child.on('close', () => {
      stdout.end();
      stderr.end();
      // Descendants that ignore SIGTERM and do not hold our pipes are still there: reap them before concluding. Then
      // those that left the group (setsid, double fork): found by the task id in their environment.
      void reapGroup(child.pid!, termSentAt, options.graceMs)
        .then(() => sweepEscapees(options.env.CAESAR_TASK_ID, options.graceMs))
        .then(() => finish({ pid: child.pid, exitCode, signal: exitSignal }));
    });
  });
}

/**
 * Makes sure the process group is empty: TERM (unless already sent), KILL once the grace period since the TERM has
 * passed, then wait for the kernel to reap. Processes have no watchable death notice, hence the short sleeps.
 */
async function reapGroup(pgid: number, termSentAt: number | undefined, graceMs: number): Promise<void> {
  if (!groupAlive(pgid)) return;
  const termAt = termSentAt ?? Date.now();
  if (termSentAt === undefined) signalGroup(pgid, 'SIGTERM');
  while (groupAlive(pgid) && Date.now() - termAt < graceMs) await sleep(50);
  if (!groupAlive(pgid)) return;
  signalGroup(pgid, 'SIGKILL');
  const killedAt = Date.now();
  while (groupAlive(pgid) && Date.now() - killedAt < 5000) await sleep(20);
}

/** Ends the task's processes that left its group; a sweep that fails must not keep the task from concluding. */
async function sweepEscapees(taskId: string | undefined, graceMs: number): Promise<void> {
  if (taskId) await sweepTaskProcesses(taskId, graceMs).catch(() => undefined);
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

export function signalGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal);
  } catch {
    /* ESRCH: the group is already empty */
  }
}

export function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function describeSpawnError(err: NodeJS.ErrnoException, command: string): string {
  if (err.code === 'ENOENT') return `Agent executable not found: ${command} (is it installed and on PATH?)`;
  if (err.code === 'EACCES') return `Agent executable is not executable: ${command}`;
  if (err.code === 'E2BIG') return `The command line is too long for the system (E2BIG): ${command}`;
  return `Could not start ${command}: ${err.message}`;
}

function writeLines(fd: number, lines: string[]): void {
  if (!lines.length) return;
  const buffer = Buffer.from(lines.join('\n') + '\n', 'utf8');
  let offset = 0;
  while (offset < buffer.length) offset += writeSync(fd, buffer, offset);
}

/** Splits a byte stream into UTF-8 lines (a multi-byte character split across chunks stays whole). */
class LineSplitter {
  private partial: Buffer = Buffer.alloc(0);
  constructor(private readonly emit: (lines: string[]) => void) {}

  push(chunk: Buffer): void {
    const data = this.partial.length ? Buffer.concat([this.partial, chunk]) : chunk;
    const last = data.lastIndexOf(0x0a);
    if (last < 0) {
      this.partial = data;
      if (this.partial.length > MAX_LINE_BYTES) this.flush();
      return;
    }
    this.partial = Buffer.from(data.subarray(last + 1));
    this.emit(data.subarray(0, last).toString('utf8').split('\n').map(stripCr));
  }

  end(): void {
    this.flush();
  }

  private flush(): void {
    if (!this.partial.length) return;
    const line = stripCr(this.partial.toString('utf8'));
    this.partial = Buffer.alloc(0);
    this.emit([line]);
  }
}

function stripCr(line: string): string {
  return line.endsWith('\r') ? line.slice(0, -1) : line;
}

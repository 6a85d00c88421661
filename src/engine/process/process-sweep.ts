import { promises as fs } from 'node:fs';
import { isPidAlive } from '../../base/process';

/*
 * Nothing outlives its task. The agent runs in its own process group, and the group is ended with it, but a
 * descendant can leave the group (setsid, a daemonizing double fork). Every agent process carries CAESAR_TASK_ID in
 * its environment, and descendants inherit it: on Linux /proc/<pid>/environ names them all, whatever group or
 * session they moved to. Elsewhere (no /proc) the sweep finds nothing and the process group remains the boundary.
 *
 * A task's supervisor may itself run inside an agent (an agent delegating a sub-task): it inherits the parent's id,
 * yet it and its own children belong to the sub-task, which concludes on its own; they are left alone.
 */

const PROC = '/proc';

/** Live processes (but this one) whose environment holds CAESAR_TASK_ID=<taskId>, sub-task supervisors excepted. */
export async function taskProcesses(taskId: string): Promise<number[]> {
  const needle = Buffer.from(`\0CAESAR_TASK_ID=${taskId}\0`);
  const pids = await listPids();
  const infos = await Promise.all(pids.map(async (pid) => ({ pid, environ: await readProc(pid, 'environ') })));
  const marked = infos.filter(({ pid, environ }) => pid !== process.pid && environ && Buffer.concat([Buffer.from([0]), environ, Buffer.from([0])]).includes(needle));
  const kept: number[] = [];
  for (const { pid } of marked) if (!(await underSupervisor(pid))) kept.push(pid);
  return kept;
}

/**
 * Ends every process of the task that is still alive: SIGTERM, then SIGKILL to those left after `graceMs`.
 * Returns the pids found (for the log).
 */
export async function sweepTaskProcesses(taskId: string, graceMs: number): Promise<number[]> {
  const found = await taskProcesses(taskId);
  if (!found.length) return [];
  for (const pid of found) signal(pid, 'SIGTERM');
  const deadline = Date.now() + graceMs;
  while (found.some(alive) && Date.now() < deadline) await sleep(50);
  for (const pid of found.filter(alive)) signal(pid, 'SIGKILL');
  // New ones may have been forked during the grace period by a process that was still alive.
  for (const pid of await taskProcesses(taskId)) signal(pid, 'SIGKILL');
  return found;
}

async function listPids(): Promise<number[]> {
  const names = await fs.readdir(PROC).catch(() => [] as string[]);
  return names.filter((n) => /^\d+$/.test(n)).map(Number);
}

async function readProc(pid: number, file: string): Promise<Buffer | undefined> {
  return fs.readFile(`${PROC}/${pid}/${file}`).catch(() => undefined);
}

/**
 * True when the process, or one of its ancestors (this process excluded), is a task supervisor: `<node> [node options]
 * <script> supervise <dir>`, or `<node> [node options] <script> standby` (one started ahead of its task by
 * `caesar run`, supervisor-process.ts), or `… idle` (the user's warm supervisor, which becomes a task's: warm-server.ts).
 */
async function underSupervisor(pid: number): Promise<boolean> {
  for (let current = pid, hops = 0; current > 1 && current !== process.pid && hops < 64; hops++) {
    const argv = (await readProc(current, 'cmdline'))?.toString('utf8').split('\0') ?? [];
    if (isSupervisorCommandLine(argv)) return true;
    const parent = await parentOf(current);
    if (parent === undefined) return false;
    current = parent;
  }
  return false;
}

/** The command after the script, Node's own options (`--max-semi-space-size=1`, which supervisors get) skipped. */
export function isSupervisorCommandLine(argv: readonly string[]): boolean {
  const script = argv.findIndex((arg, index) => index > 0 && !arg.startsWith('-'));
  const command = script > 0 ? argv[script + 1] : undefined;
  return command === 'supervise' || command === 'standby' || command === 'idle';
}

/** The parent pid from /proc/<pid>/stat (the field after the parenthesized command name, which may hold spaces). */
async function parentOf(pid: number): Promise<number | undefined> {
  const stat = (await readProc(pid, 'stat'))?.toString('utf8');
  const after = stat?.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ppid = Number(after?.[1]);
  return Number.isInteger(ppid) ? ppid : undefined;
}

/**
 * The process exists and is not a zombie. An escapee is orphaned, and an init that does not reap (a minimal container
 * init) leaves it a zombie after SIGKILL: dead, though `kill(pid, 0)` still succeeds.
 */

const alive = isPidAlive;

function signal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name);
  } catch {
    /* already gone */
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

import { execFile } from 'node:child_process';

/*
 * Slurm as caesar talks to it: sbatch to submit, squeue for what the controller knows of a job, scancel to end one.
 * Every call is argv (never a shell), bounded in time, and its failure is an answer ("the controller did not answer"),
 * never an exception a reader has to expect. Facts measured on Debian's slurm-wlm 22.05 (shared/cluster/SLURM.md):
 * `sbatch --parsable` prints "<id>" or "<id>;<cluster>"; `squeue -t all` still lists a job for MinJobAge (300 s by
 * default) after it ended, then forgets it; `--export=NONE,NAME` passes NAME with the value sbatch itself has.
 */

/** A Slurm command that answers within this is healthy; one that does not is treated as "no answer". */
const SLURM_TIMEOUT_MS = 15_000;
/** squeue's answer is shared by every reader of this process for this long (ps of 200 tasks: one squeue). */
const QUEUE_TTL_MS = 1000;

export interface SlurmRun {
  code: number | null;
  stdout: string;
  stderr: string;
  /** The program could not be started at all (not installed: ENOENT). */
  missing?: boolean;
}

export function runSlurm(program: 'sbatch' | 'squeue' | 'scancel' | 'sinfo', args: string[], env: NodeJS.ProcessEnv = process.env): Promise<SlurmRun> {
  return new Promise((resolve) => {
    execFile(program, args, { env, timeout: SLURM_TIMEOUT_MS, maxBuffer: 16 * 1024 * 1024, windowsHide: true }, (error, stdout, stderr) => {
      const errno = (error as NodeJS.ErrnoException | null)?.code;
      if (errno === 'ENOENT') return resolve({ code: null, stdout: '', stderr: `${program} not found on PATH`, missing: true });
      const code = error ? (typeof (error as { code?: unknown }).code === 'number' ? ((error as { code: number }).code) : null) : 0;
      resolve({ code, stdout: String(stdout), stderr: String(stderr) });
    });
  });
}

/** What squeue says of one job. `state` is Slurm's (PENDING, RUNNING, COMPLETED, CANCELLED, FAILED, TIMEOUT, …). */
export interface SlurmJobState {
  state: string;
  /** squeue's %r: why a pending job waits (Priority, Resources, …), or "None". */
  reason: string;
}

/** Slurm's states of a job that will still run or is running (squeue's "pending" and "running" families). */
const LIVE_JOB_STATES = new Set(['PENDING', 'CONFIGURING', 'RUNNING', 'COMPLETING', 'RESIZING', 'SUSPENDED', 'REQUEUED', 'REQUEUE_HOLD', 'REQUEUE_FED', 'SIGNALING', 'STAGE_OUT', 'STOPPED']);

export function isLiveJobState(state: string): boolean {
  return LIVE_JOB_STATES.has(state);
}

let cached: { at: number; jobs: Promise<Map<string, SlurmJobState> | undefined> } | undefined;

/**
 * The jobs the controller knows of this user (ended ones for MinJobAge too), by id; undefined when squeue could not
 * answer (not installed, controller down): a reader then keeps what the task's files say rather than guess.
 */
export function slurmJobs(now = Date.now()): Promise<Map<string, SlurmJobState> | undefined> {
  if (cached && now - cached.at < QUEUE_TTL_MS) return cached.jobs;
  const jobs = runSlurm('squeue', ['--noheader', '--states=all', '--me', '--format=%i|%T|%r']).then((run) => (run.code === 0 ? parseQueue(run.stdout) : undefined));
  cached = { at: now, jobs };
  return jobs;
}

/** Forgets the cached queue (after a submit or a cancel, so the next look sees it). */
export function forgetSlurmQueue(): void {
  cached = undefined;
}

export function parseQueue(text: string): Map<string, SlurmJobState> {
  const jobs = new Map<string, SlurmJobState>();
  for (const line of text.split('\n')) {
    const [id, state, reason] = line.trim().split('|');
    if (id && state) jobs.set(id, { state, reason: reason ?? '' });
  }
  return jobs;
}

/** `sbatch --parsable` output: "<id>" or "<id>;<cluster>". */
export function parseSubmission(stdout: string): { job_id: string; cluster?: string } | undefined {
  const match = /^([0-9]+(?:_[0-9]+)?)(?:;(\S+))?\s*$/.exec(stdout.trim());
  if (!match) return undefined;
  return { job_id: match[1]!, ...(match[2] ? { cluster: match[2] } : {}) };
}

/** scancel; true when Slurm accepted it (a job that already ended is no error for the caller). */
export async function cancelSlurmJob(jobId: string): Promise<boolean> {
  const run = await runSlurm('scancel', [jobId]);
  forgetSlurmQueue();
  return run.code === 0;
}

/** What `caesar doctor` says of Slurm: whether sbatch is there (its version) and whether the controller answers. */
export interface SlurmHealth {
  sbatch: string | { missing: true } | { error: string };
  controller: 'answers' | { error: string };
}

export async function slurmHealth(): Promise<SlurmHealth> {
  const [version, queue] = await Promise.all([runSlurm('sbatch', ['--version']), runSlurm('squeue', ['--noheader', '--me', '--format=%i'])]);
  const sbatch = version.missing ? { missing: true as const } : version.code === 0 ? version.stdout.trim() : { error: firstLine(version.stderr) };
  const controller = queue.code === 0 ? ('answers' as const) : { error: queue.missing ? 'squeue not found on PATH' : firstLine(queue.stderr) || `squeue exited ${queue.code}` };
  return { sbatch, controller };
}

function firstLine(text: string): string {
  return text.trim().split('\n').find((line) => line.trim() !== '')?.trim() ?? '';
}

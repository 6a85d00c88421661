import { hostname } from 'node:os';
import { isPidAlive } from '../../base/process';
import { ACTIVE_STATUSES, type LauncherRecord, type ObservedStatus, type TaskState } from '../../protocol';
import { isLiveJobState, slurmJobs, type SlurmJobState } from '../cluster/slurm';

/*
 * What a task is observed to be, beyond what its state.json records: a supervisor that died makes an active task
 * lost, and a task run as a job is what the job system says of it (queued, lost). The store reads every task through
 * this (store.ts).
 */

/** A supervisor that has not written its pid this long after delegation never started. */
const SUPERVISOR_START_GRACE_MS = 30_000;

export interface JobView {
  kind: 'slurm';
  id: string;
  /** Slurm's state of the job (PENDING, RUNNING, …) when the controller answered and still knows it. */
  state?: string;
  /** Why a pending job waits (squeue's reason: Priority, Resources, …). */
  reason?: string;
}

/** What the job system says of a task's job: its state, `null` when it no longer knows the job, undefined unasked. */
export interface JobProbe {
  record: LauncherRecord;
  job?: SlurmJobState | null;
  /** A cancel was requested (cancel.request exists): a job gone before its supervisor started was cancelled. */
  cancelRequested?: boolean;
}

/** Asks the job system about an active task's job (one squeue per process per second, whatever the task count). */
export async function probeJob(state: TaskState, record: Promise<LauncherRecord | undefined>, cancelRequested: boolean): Promise<JobProbe | undefined> {
  const launched = await record;
  if (!launched) return undefined;
  if (!ACTIVE_STATUSES.includes(state.status)) return { record: launched };
  const jobs = await slurmJobs();
  return { record: launched, job: jobs ? (jobs.get(launched.job_id) ?? null) : undefined, cancelRequested };
}

export function jobView(probe: JobProbe): JobView {
  const { record, job } = probe;
  return { kind: record.kind, id: record.job_id, ...(job ? { state: job.state, ...(job.reason && job.reason !== 'None' ? { reason: job.reason } : {}) } : {}) };
}

/**
 * What to show for a task: a supervisor that died while the task was active makes the task 'lost'. For a task run as
 * a job, the job system decides: held in its queue before the supervisor started is 'queued', a job it no longer runs
 * while the task is active is 'lost' (the supervisor writes its final state before it exits: a re-read confirms), and
 * an unanswered squeue changes nothing.
 */
export function observedStatus(state: TaskState, now = Date.now(), probe?: JobProbe): ObservedStatus {
  if (!ACTIVE_STATUSES.includes(state.status)) return state.status;
  if (probe) return observedJobStatus(state, probe);
  if (state.supervisor_host !== undefined && state.supervisor_host !== hostname()) return state.status;
  if (state.supervisor_pid !== undefined) return isPidAlive(state.supervisor_pid) ? state.status : 'lost';
  const age = now - Date.parse(state.created_at);
  return age > SUPERVISOR_START_GRACE_MS ? 'lost' : state.status;
}

function observedJobStatus(state: TaskState, probe: JobProbe): ObservedStatus {
  const { job } = probe;
  if (job === null || (job && !isLiveJobState(job.state))) return state.supervisor_pid === undefined && probe.cancelRequested ? 'cancelled' : 'lost';
  if (state.supervisor_pid === undefined) return job && job.state !== 'PENDING' ? state.status : 'queued';
  // A supervisor on this very host (a one-node cluster, or this node): its pid says more than the queue's last look.
  if (state.supervisor_host === hostname()) return isPidAlive(state.supervisor_pid) ? state.status : 'lost';
  return state.status;
}

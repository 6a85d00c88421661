import { closeSync, fstatSync, promises as fs, readSync, writeSync } from 'node:fs';
import * as path from 'node:path';
import { CAESAR_DIR, taskPaths } from '../../protocol';
import { isPidAlive } from '../../base/process';
import { readVerifiedJsonFile } from '../store/sealed-read';
import { createExclusive } from '../../base/atomic';
import { openRegularFileForWriting } from '../../base/safe-write';
import { EventsWriter } from './events-writer';
import { writeConclusion } from './finalize';
import { gitToplevel } from '../git/git';
import { reconcileScope, workspacePrefix } from './isolation';
import { reconcileReport, worktreeDiff, type DiffResult, type ReconcileOptions } from '../git/reconcile';
import { resolveReport } from './report';
import { sweepTaskProcesses } from '../process/process-sweep';
import { groupAlive, signalGroup } from '../process/spawn';
import { ACTIVE_STATUSES, TaskStateSchema, type Report, type TaskPaths, type TaskState } from '../../protocol';
import { jobOutputTail } from '../store/job-output';
import { readRepositorySnapshot, repositoryChangeFindings } from '../git/repository-watch';
import { StateWriter } from './state-writer';
import { recoverSandboxReport } from '../sandbox/sandbox';
import { moveAsidePlantedGit, uncheckedNestedRepositories } from '../git/nested-git';
import { TaskStore, type TaskSummary } from '../store/store';

export interface ConcludedTask {
  id: string;
  supervisor_pid?: number;
  /** The agent's process group was still running, orphaned, and was stopped. */
  agent_stopped: boolean;
  /** Files git shows as changed in the task's worktree (kept for review). */
  changed_files: number;
}

const AGENT_GRACE_MS = 3000;
const LOCK = 'conclude.lock';

/**
 * Concludes tasks whose supervisor died without concluding (`lost`): stops the agent group it left running, then
 * writes what the supervisor would have written, in its order (finalize.ts) — result.json (the agent's report if it
 * left a valid one, else a synthesized failure, reconciled with git as the supervisor would have), the final state
 * `failed`, then one closing `finished` event numbered after the last one. The supervisor was the single writer of those files; once it is provably gone (dead pid on this
 * host), this becomes their writer, guarded by an exclusive lock so two concurrent `caesar gc` never both do it.
 * The worktree is left alone: gc judges it like any other (kept when it holds unapplied work).
 */
export async function concludeLostTasks(root: string, options: { dryRun: boolean }): Promise<ConcludedTask[]> {
  const store = new TaskStore(root);
  // Lost, or a job system's task cancelled before its supervisor ever started (nobody wrote its end yet).
  const lost = (await store.list()).filter((task) => task.observed === 'lost' || (task.observed === 'cancelled' && ACTIVE_STATUSES.includes(task.state.status)));
  const concluded: ConcludedTask[] = [];
  for (const task of lost) {
    if (options.dryRun) {
      concluded.push({ id: task.id, ...pid(task.state), agent_stopped: false, changed_files: task.result?.diff?.files_total ?? task.result?.diff?.files.length ?? 0 });
      continue;
    }
    const done = await concludeOne(root, task).catch(() => undefined);
    if (done) concluded.push(done);
  }
  return concluded;
}

async function concludeOne(root: string, task: TaskSummary): Promise<ConcludedTask | undefined> {
  const paths = taskPaths(root, task.id);
  const lock = path.join(paths.dir, LOCK);
  if (!(await createExclusive(lock, `${JSON.stringify({ pid: process.pid, at: new Date().toISOString() })}\n`))) return undefined;
  try {
    // A state.json Caesar did not write is never concluded: that would seal someone else's word as Caesar's.
    const state = await readVerifiedJsonFile(paths.state, 'state', TaskStateSchema).catch(() => undefined);
    if (!state || !ACTIVE_STATUSES.includes(state.status)) return undefined;
    if (state.supervisor_pid !== undefined && isPidAlive(state.supervisor_pid)) return undefined;
    const agentStopped = await stopOrphanedAgent(state);
    // A sandboxed agent's report is still in its view of the task folder when its supervisor died during the run.
    // Once the conclusion had begun it had been taken back, and the view holds a check's writes: those are not the agent's.
    const recovered = state.concluding_since ? [] : await recoverSandboxReport(paths.dir).catch(() => []);
    // What the supervisor would have done before its diff: a repository the agent left in a subfolder, moved aside.
    const planted = state.worktree && isOwnWorktree(state.worktree, task.id) ? await moveAsidePlantedGit(state.worktree, paths).catch(() => []) : [];
    const unchecked = uncheckedNestedRepositories(planted);
    const diff = await diffOf(state);
    const cancelled = task.observed === 'cancelled';
    const why = await whyConcluded(paths, task, state);
    const resolved = await resolveReport({
      taskId: task.id,
      tier: 'file',
      channel: false,
      paths,
      translation: {},
      outcome: { exitCode: null, timedOut: false, cancelled: false, spawnError: why },
      ...(diff ? { diffFiles: diff.files } : {}),
    });
    const reconciled = reconcileReport(resolved.report, diff, state.mode, diff ? await reconcileScopeOf(state) : {});
    const watched = await repositoryWatchOf(paths, state);
    const report = {
      ...reconciled.report,
      findings: [
        ...reconciled.report.findings,
        ...resolved.findings,
        ...recovered,
        ...planted,
        ...(watched?.findings ?? []),
        { severity: 'high' as const, title: cancelled ? 'Task cancelled' : 'Task interrupted', detail: why },
      ],
    };
    // The supervisor's conclusion, in its order (finalize.ts); nothing is held any more, so nothing to release.
    await writeConclusion(
      {
        status: cancelled ? 'cancelled' : 'failed',
        report,
        source: resolved.source,
        verifiedBy: reconciled.changes_verified_by,
        agentReportValid: resolved.agent_report_valid,
        ...(resolved.agent_report_error ? { agentReportError: resolved.agent_report_error } : {}),
        ...(diff ? { diff } : {}),
        ...(watched || unchecked.length ? { repositoryChanges: [...(watched?.changes ?? []), ...unchecked] } : {}),
        error: why,
      },
      {
        resultFile: paths.result,
        // The log holds the events up to the last one Caesar wrote; the closing one is appended after the final state.
        state: new StateWriter(paths.state, state, () => (task.lastEvent?.seq ?? -1) + 1),
        release: async () => {},
        // The same status the state's report_status gets (the report's), as the supervisor's own finish writes.
        finish: (final) => appendFinished(paths.events, task, { status: final.status, summary: why }),
      },
    );
    return { id: task.id, ...pid(state), agent_stopped: agentStopped, changed_files: diff?.files.length ?? 0 };
  } finally {
    await fs.rm(lock, { force: true });
  }
}

/** The supervisor's check of the shared git dir, done here from the snapshot it left (a worktree task only). */
async function repositoryWatchOf(paths: TaskPaths, state: TaskState): Promise<{ changes: string[]; findings: Report['findings'] } | undefined> {
  if (!state.worktree) return undefined;
  const before = await readRepositorySnapshot(paths.repositorySnapshot);
  const gitRoot = before ? await gitToplevel(state.workspace) : undefined;
  if (!before || !gitRoot) return undefined;
  return repositoryChangeFindings(gitRoot, state.id, before).catch((err: unknown) => ({
    changes: [`the repository could not be compared with its record (${err instanceof Error ? err.message : String(err)})`],
    findings: [{ severity: 'critical' as const, title: 'Repository could not be checked', detail: `The shared git dir could not be compared with its record at the task's start: ${err instanceof Error ? err.message : String(err)}.` }],
  }));
}

/** Why the task ended without its supervisor's conclusion: the job system's word when it ran the supervisor. */
async function whyConcluded(paths: TaskPaths, task: TaskSummary, state: TaskState): Promise<string> {
  const job = task.job;
  if (!job) return `The task's supervisor${state.supervisor_pid ? ` (pid ${state.supervisor_pid})` : ''} disappeared before the task ended; concluded by caesar gc.`;
  if (task.observed === 'cancelled') return `Cancelled while Slurm held it (job ${job.id}): the agent never started; concluded by caesar gc.`;
  const ended = job.state ? `ended (${job.state})` : 'is no longer known to the controller';
  const output = await jobOutputTail(paths);
  const started = state.supervisor_pid !== undefined ? 'before the task ended' : 'before the task\'s supervisor started (is the repository on a file system the node sees?)';
  return `Slurm job ${job.id} ${ended} ${started}; concluded by caesar gc.${output ? ` The job's output ends: ${output}` : ''}`;
}

/** The agent runs in its own process group, so it survives its supervisor: stop it before judging its work. */
async function stopOrphanedAgent(state: TaskState): Promise<boolean> {
  const group = state.agent_pid;
  let stopped = false;
  if (group !== undefined && groupAlive(group)) {
    signalGroup(group, 'SIGTERM');
    const deadline = Date.now() + AGENT_GRACE_MS;
    while (groupAlive(group) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    if (groupAlive(group)) signalGroup(group, 'SIGKILL');
    stopped = true;
  }
  // And whatever of the task left the group (setsid, double fork): found by the task id in its environment.
  const escapees = await sweepTaskProcesses(state.id, AGENT_GRACE_MS).catch(() => []);
  return stopped || escapees.length > 0;
}

/** The scope the supervisor reconciled with, rebuilt from what the state recorded (the worktree, the workspace). */
async function reconcileScopeOf(state: TaskState): Promise<ReconcileOptions> {
  const gitRoot = await gitToplevel(state.workspace);
  const prefix = gitRoot ? await workspacePrefix(gitRoot, state.workspace).catch(() => '') : '';
  return reconcileScope({ worktreePath: state.worktree, gitRoot, prefix });
}

/** Caesar's own place for this task's worktree (`<repo>/.caesar/wt/<id>`): the only folder gc moves anything out of. */
function isOwnWorktree(worktree: string, id: string): boolean {
  const parent = path.dirname(worktree);
  return path.isAbsolute(worktree) && path.basename(worktree) === id && path.basename(parent) === 'wt' && path.basename(path.dirname(parent)) === CAESAR_DIR;
}

async function diffOf(state: TaskState): Promise<DiffResult | undefined> {
  if (!state.worktree || !state.base_ref) return undefined;
  const exists = await fs.stat(state.worktree).then(() => true, () => false);
  return exists ? worktreeDiff(state.worktree, state.base_ref, state.excluded_paths) : undefined;
}

/** One closing event after the last one; a line the dead writer left half-written is closed off first. */
async function appendFinished(file: string, task: TaskSummary, draft: { status: Report['status']; summary: string }): Promise<void> {
  if (task.lastEvent?.type === 'finished') return;
  // Not through a symlink, not blocked by a FIFO: anything but a regular file is refused (safe-write.ts).
  const fd = openRegularFileForWriting(file, 'append');
  try {
    const { size } = fstatSync(fd);
    const last = Buffer.alloc(1);
    if (size > 0) readSync(fd, last, 0, 1, size - 1);
    if (size > 0 && last[0] !== 0x0a) writeSync(fd, '\n');
  } finally {
    closeSync(fd);
  }
  const writer = new EventsWriter(file, task.id, () => {}, (task.lastEvent?.seq ?? -1) + 1);
  writer.finish({ type: 'finished', ...draft });
}

function pid(state: TaskState): { supervisor_pid?: number } {
  return state.supervisor_pid !== undefined ? { supervisor_pid: state.supervisor_pid } : {};
}

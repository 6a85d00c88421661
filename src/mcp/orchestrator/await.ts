import { checksSuffix, isSafeId } from '../../protocol';
import { ForeignTaskError, TaskStore, isActive, type TaskSummary } from '../../engine/tasks';
import { formatJob } from '../../common/format';
import { nextActionHints, pendingQuestionsOf, reportSummaryOf } from './results';
import type { ActionHint } from '../../common/next-actions';

export interface TaskOutcome {
  task_id: string;
  status: string;
  pending: boolean;
  agent?: string;
  role?: string;
  phase?: string;
  /** The Slurm job that runs the task, with its queue state while active ("Slurm job 42 (PENDING: Priority)"). */
  job?: string;
  error?: string;
  /** Finished with checks: true when one Caesar ran itself failed (the agent may still have said it succeeded). */
  checks_failed?: boolean;
  /** The status as people read it: "succeeded · checks failed" when a check failed. */
  status_label?: string;
  pending_questions?: ReturnType<typeof pendingQuestionsOf>;
  report?: ReturnType<typeof reportSummaryOf>;
  /** Caesar's records of the task that do not verify (record-seal.ts), each with its reason. */
  unverified?: string[];
  /** What can be done with it next, and the tool that does it (src/common/next-actions.ts, as the CLI and the editor say it). */
  next_actions?: ActionHint[];
  message?: string;
}

/** One task as a waiting model sees it: finished with its reconciled report, or still going with its questions. */
export function outcomeOf(id: string, summary: TaskSummary | ForeignTaskError | undefined): TaskOutcome {
  if (!isSafeId(id)) return { task_id: id, status: 'invalid', pending: false, message: `Invalid task id ${JSON.stringify(id)}.` };
  if (summary instanceof ForeignTaskError) return { task_id: id, status: 'refused', pending: false, message: `${summary.message}.` };
  if (!summary) return { task_id: id, status: 'unknown', pending: false, message: `Unknown task "${id}": no such task under this root.` };
  const { state } = summary;
  const base = {
    task_id: id,
    next_actions: nextActionHints(summary),
    status: summary.observed,
    agent: state.agent,
    ...(state.role ? { role: state.role } : {}),
    ...(state.error ? { error: state.error } : {}),
    ...(summary.job ? { job: formatJob(summary.job)! } : {}),
    ...(summary.unverified.length ? { unverified: summary.unverified, message: `Not Caesar's record, not the truth: ${summary.unverified.join('; ')}.` } : {}),
  };
  if (isActive(summary.observed)) {
    return { ...base, pending: true, ...(state.phase ? { phase: state.phase } : {}), pending_questions: pendingQuestionsOf(summary) };
  }
  return {
    ...base,
    pending: false,
    ...(state.checks ? { checks_failed: state.checks.failed > 0 } : {}),
    status_label: `${summary.observed}${checksSuffix(state)}`,
    report: reportSummaryOf(summary),
    ...(summary.observed === 'lost' && !summary.unverified.length ? { message: 'Its supervisor died without concluding; `caesar gc` concludes it. Any worktree is kept for review.' } : {}),
  };
}

export interface AwaitOptions {
  timeoutMs: number;
  signal?: AbortSignal;
  /** Called whenever something changed while waiting (for MCP progress notifications and elicitation). */
  onChange?: (outcomes: TaskOutcome[]) => void;
}

/**
 * Waits until every id is settled (finished, unknown or invalid) or the timeout passes, whichever comes first, and
 * returns each task's outcome. Woken by file-system changes in the task folders (TaskStore.watch), not by polling;
 * a slow safety tick covers file systems whose watchers miss events. Nothing here owns the tasks: a client that
 * disconnects mid-wait loses nothing, the supervisors go on.
 */
export async function awaitTasks(root: string, ids: string[], options: AwaitOptions): Promise<TaskOutcome[]> {
  const store = new TaskStore(root);
  const read = () => Promise.all(ids.map(async (id) => outcomeOf(id, isSafeId(id) ? await store.summary(id).catch((err: unknown) => (err instanceof ForeignTaskError ? err : undefined)) : undefined)));
  let outcomes = await read();
  if (outcomes.every((o) => !o.pending) || options.timeoutMs <= 0) return outcomes;
  options.onChange?.(outcomes);
  return new Promise<TaskOutcome[]>((resolve) => {
    let settled = false;
    let checking = false;
    let again = false;
    const finish = () => {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      clearInterval(tick);
      watcher.dispose();
      options.signal?.removeEventListener('abort', finish);
      resolve(outcomes);
    };
    const check = async () => {
      if (settled) return;
      if (checking) {
        again = true;
        return;
      }
      checking = true;
      try {
        const next = await read();
        const changed = JSON.stringify(next) !== JSON.stringify(outcomes);
        outcomes = next;
        if (outcomes.every((o) => !o.pending)) finish();
        else if (changed) options.onChange?.(outcomes);
      } finally {
        checking = false;
        if (again && !settled) {
          again = false;
          void check();
        }
      }
    };
    const watchedIds = new Set(ids);
    const watcher = store.watch((changedIds) => {
      if (changedIds.some((id) => watchedIds.has(id))) void check();
    });
    const tick = setInterval(() => void check(), 2_000);
    const deadline = setTimeout(() => void read().then((last) => ((outcomes = last), finish()), finish), options.timeoutMs);
    options.signal?.addEventListener('abort', finish, { once: true });
  });
}

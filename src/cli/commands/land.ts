import type { Command } from 'commander';
import { RequestError, describeConflicts, landTasks, shellCommand, type LandOutcome, type LandTaskOutcome } from '../../engine/tasks';
import { addCommonOptions, assertTaskId, stopSignal, storeFor, taskIdArgument, type CommonOptions } from '../common';
import { plural } from '../../common/format';
import { table, termSafe, termSafeBlock } from '../format';
import { ExitCode, UsageError, printJson, type CliIo } from '../io';

interface LandCliOptions extends CommonOptions {
  acceptRepositoryChanges?: boolean;
}

/**
 * `caesar land <id>...`: lands finished worktree tasks in the order given onto the checkout's current HEAD, each
 * replayed three-way and re-checked on the combined result before it is written (engine/tasks/land.ts). Stops at
 * the first conflict or failed check; exit 1 when not every task landed.
 */
export function registerLand(program: Command, io: CliIo): void {
  addCommonOptions(
    program
      .command('land')
      .description("Land tasks in order onto the checkout's current HEAD: each replayed three-way and its checks re-run on the combined result; stops at the first conflict or failed check")
      .addArgument(taskIdArgument('<ids...>', 'the tasks to land, in order'))
      .option('--accept-repository-changes', "land although the repository's git dir (hooks, config, info/, refs) changed during a task"),
  ).action((ids: string[], opts: LandCliOptions) => land(io, ids, opts));
}

async function land(io: CliIo, ids: string[], opts: LandCliOptions): Promise<void> {
  ids.forEach(assertTaskId);
  const root = storeFor(io, opts).root;
  let outcome: LandOutcome;
  // Ctrl-C ends a running check's process group (its own, so the terminal's SIGINT does not reach it) and stops.
  const stop = stopSignal(io);
  try {
    outcome = await landTasks(root, ids, {
      signal: stop.signal,
      ...(opts.acceptRepositoryChanges ? { acceptRepositoryChanges: true } : {}),
      onProgress: opts.json ? undefined : (p) => io.err(`caesar: ${p.task_id} (${p.index + 1}/${p.total}): ${termSafe(p.step)}`),
    });
  } catch (err) {
    if (err instanceof RequestError) {
      if (err.code === 'invalid_id' || err.code === 'unknown_task') throw new UsageError(err.message);
      throw new ExitCode(1, err.message);
    }
    throw err;
  } finally {
    stop.dispose();
  }
  if (opts.json) printJson(io, outcome);
  else io.out(landReport(outcome).join('\n'));
  if (outcome.stopped_at) throw new ExitCode(1);
}

/** The per-task table, then what stopped the queue: the conflicting hunks or failed checks, and the follow-up. */
function landReport(outcome: LandOutcome): string[] {
  const rows = [['TASK', 'RESULT', 'FILES', 'DETAIL'], ...outcome.tasks.map((t) => [t.task_id, t.status.replace('_', ' '), String(t.files.length), termSafe(detail(t))])];
  const lines = table(rows);
  const stop = outcome.tasks.find((t) => t.task_id === outcome.stopped_at);
  lines.push('', termSafeBlock(outcome.message));
  if (stop?.status === 'check_failed') {
    for (const check of stop.checks ?? []) lines.push(`  check "${termSafe(check.name)}": ${check.error ?? `exit code ${check.exit_code}`}`, ...termSafeBlock(check.output_tail.trimEnd()).split('\n').slice(-10).map((l) => `    ${l}`));
    if (stop.checks_log_dir) lines.push(`  full output: ${termSafe(stop.checks_log_dir)}`);
  }
  if (stop?.follow_up) {
    lines.push('', 'Send the conflict back to the agent (its worktree starts from the new HEAD, conflicts marked):', `  ${termSafe(shellCommand(stop.follow_up.command))}`);
  }
  return lines;
}

function detail(task: LandTaskOutcome): string {
  if (task.status === 'conflict' && task.conflicts) return `conflicts: ${describeConflicts(task.conflicts)}`;
  if (task.status === 'landed') return task.checks?.length ? `${plural(task.checks.length, 'check')} passed on the combined result` : 'no checks';
  return task.status === 'not_landed' ? '' : task.message.split('\n')[0] ?? '';
}

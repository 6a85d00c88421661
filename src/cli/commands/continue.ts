import type { Command } from 'commander';
import { DelegationRefusedError, RequestError, continueTask, readReviewComments } from '../../engine/tasks';
import { addCommonOptions, assertTaskId, storeFor, taskIdArgument, type CommonOptions } from '../common';
import { termSafe } from '../format';
import { ExitCode, UsageError, printJson, type CliIo } from '../io';

interface ContinueOptions extends CommonOptions {
  comments?: boolean;
  baseCommit?: string;
}

/**
 * `caesar continue <task> "<feedback>"`: a new task on the same agent that starts from the finished task's worktree,
 * with the feedback as its objective and the review comments left in the editor (review-comments.json) as context.
 */
export function registerContinue(program: Command, io: CliIo): void {
  addCommonOptions(
    program
      .command('continue')
      .description("Continue a finished task with feedback: a new task on the same agent, starting from that task's worktree")
      .addArgument(taskIdArgument('<taskId>', 'the finished task to continue'))
      .argument('[feedback...]', 'what to change (may be empty when review comments were left in the editor)')
      .option('--no-comments', "leave out the review comments left on the task's diff in the editor")
      .option('--base-commit <sha>', "start from this commit instead of the task's worktree (what `caesar land` prints after a conflict: the change merged onto the new HEAD)"),
  ).action((taskId: string, words: string[], opts: ContinueOptions) => continueCommand(io, taskId, words.join(' '), opts));
}

async function continueCommand(io: CliIo, taskId: string, feedback: string, opts: ContinueOptions): Promise<void> {
  assertTaskId(taskId);
  const root = storeFor(io, opts).root;
  try {
    const comments = opts.comments === false ? [] : (await readReviewComments(root, taskId)).filter((c) => !c.sent_in);
    const continued = await continueTask(root, taskId, feedback, { comments, env: io.env, supervisorEnv: io.env, ...(opts.baseCommit ? { baseCommit: opts.baseCommit } : {}) });
    for (const warning of continued.warnings) io.err(`caesar: warning: ${termSafe(warning)}`);
    if (opts.json) {
      printJson(io, { task_id: continued.id, continued_from: taskId, agent: continued.launch.agent, base_commit: continued.base_commit ?? null, comments: comments.length });
      return;
    }
    const from = continued.base_commit ? ` from its worktree (snapshot ${continued.base_commit.slice(0, 12)})` : '';
    const withComments = comments.length ? ` with ${comments.length} review comment(s)` : '';
    io.out(`Task ${continued.id} continues ${taskId} on ${continued.launch.agent}${from}${withComments}. Follow it: caesar watch ${continued.id}`);
  } catch (err) {
    if (err instanceof DelegationRefusedError) throw new UsageError(err.message);
    if (err instanceof RequestError) {
      if (err.code === 'invalid_id' || err.code === 'unknown_task') throw new UsageError(err.message);
      throw new ExitCode(1, err.message);
    }
    throw err;
  }
}

import type { Command } from 'commander';
import * as path from 'node:path';
import { QuestionFileSchema, isSafeId, taskPaths } from '../../protocol';
import { answerQuestion, isActive, readJsonFile, requestCancel, RequestError, unknownQuestionMessage } from '../../engine/tasks';
import { addCommonOptions, assertTaskId, requireTask, stopSignal, storeFor, taskIdArgument, type CommonOptions } from '../common';
import { shortId, termSafe } from '../format';
import { ExitCode, UsageError, printJson, type CliIo } from '../io';
import { waitUntilSettled } from '../settle';

export function registerControl(program: Command, io: CliIo): void {
  addCommonOptions(
    program
      .command('cancel')
      .description("Ask a task's supervisor to stop it; the task ends as cancelled")
      .addArgument(taskIdArgument('<id>', 'task id'))
      .option('--wait', 'wait until the task has ended, and fail unless it ended as cancelled'),
  ).action((id: string, opts: CommonOptions & { wait?: boolean }) => cancel(io, id, opts));

  addCommonOptions(
    program
      .command('answer')
      .description("Answer a task's pending question (the first answer wins, from any process)")
      .addArgument(taskIdArgument('<taskId>', 'task id'))
      .argument('<questionId>', 'question id (shown by `caesar watch` and `caesar ps --json`)')
      .argument('[text...]', 'the answer')
      .option('--option <n>', 'answer with the question\'s n-th option (1-based)'),
  ).action((taskId: string, questionId: string, words: string[], opts: CommonOptions & { option?: string }) =>
    answer(io, taskId, questionId, words, opts),
  );
}

async function cancel(io: CliIo, id: string, opts: CommonOptions & { wait?: boolean }): Promise<void> {
  const store = storeFor(io, opts);
  const view = await requireTask(store, id);
  if (view.observed === 'lost') {
    report(io, opts, { task_id: id, requested: false, status: 'lost' }, `Task ${id} is lost: its supervisor died, nothing is running. Nothing to cancel.`);
    return;
  }
  const outcome = await requestCancel(store.root, id, 'cli').catch(rethrowRequestError);
  if (!outcome.requested) {
    report(io, opts, { task_id: id, requested: false, status: outcome.status }, `Task ${id} already ended (${outcome.status}): nothing to cancel.`);
    return;
  }
  if (!opts.wait) {
    report(io, opts, { task_id: id, requested: true, status: outcome.status }, `Cancel requested for ${id}; its supervisor stops the agent and records the task as cancelled.`);
    return;
  }
  if (!opts.json) io.err(`Cancel requested for ${shortId(id)}…; waiting for the task to end.`);
  const stop = stopSignal(io);
  try {
    const settled = await waitUntilSettled(store, id, stop.signal);
    if (!settled) throw new ExitCode(1, 'Stopped waiting; the cancel request stays filed.');
    const status = settled.observed;
    report(io, opts, { task_id: id, requested: true, status }, status === 'cancelled' ? `Task ${id} cancelled.` : `Task ${id} ended as ${status}, not cancelled.`);
    if (status !== 'cancelled') throw new ExitCode(1);
  } finally {
    stop.dispose();
  }
}

function report(io: CliIo, opts: CommonOptions, value: Record<string, unknown>, text: string): void {
  if (opts.json) printJson(io, value);
  else io.out(text);
}

async function answer(
  io: CliIo,
  taskId: string,
  questionId: string,
  words: string[],
  opts: CommonOptions & { option?: string },
): Promise<void> {
  assertTaskId(taskId);
  // Checked before anything is read: the id becomes a file name.
  if (!isSafeId(questionId)) throw new UsageError(`Invalid question id ${JSON.stringify(questionId)}.`);
  const store = storeFor(io, opts);
  const view = await requireTask(store, taskId);
  const typed = words.join(' ');
  if (opts.option !== undefined && typed) throw new UsageError('Give the answer as text or with --option, not both.');
  if (opts.option === undefined && !typed) throw new UsageError('No answer given: add the text, or --option <n> to pick one of the question\'s options.');
  const text = opts.option !== undefined ? await optionText(store.root, taskId, questionId, opts.option) : typed;
  if (!isActive(view.observed)) {
    throw new ExitCode(1, `Task ${taskId} has ended (${view.observed}): nobody is waiting for an answer any more.`);
  }
  const written = await answerQuestion(store.root, taskId, questionId, text, 'cli').catch(rethrowRequestError);
  if (opts.json) printJson(io, { task_id: taskId, ...written });
  else io.out(`Answered ${questionId} of ${taskId}: ${termSafe(text)}`);
}

/** `--option 2` → the question's second option. A question that does not exist is left to answerQuestion to report. */
async function optionText(root: string, taskId: string, questionId: string, option: string): Promise<string> {
  const n = Number(option);
  if (!Number.isInteger(n) || n < 1) throw new UsageError(`--option expects a positive number, got "${option}".`);
  const question = await readJsonFile(path.join(taskPaths(root, taskId).questionsDir, `${questionId}.json`), QuestionFileSchema);
  if (!question) throw new ExitCode(1, await unknownQuestionMessage(root, taskId, questionId));
  if (question.options.length === 0) throw new UsageError(`Question ${questionId} offers no options: answer with text.`);
  const picked = question.options[n - 1];
  if (picked === undefined) {
    throw new UsageError(`Question ${questionId} has ${question.options.length} option(s): ${question.options.map((o, i) => `${i + 1}) ${o}`).join(', ')}.`);
  }
  return picked;
}

/** Bad ids are usage mistakes (exit 2); a refused request (unknown question, answered, expired) is a failure (exit 1). */
function rethrowRequestError(err: unknown): never {
  if (err instanceof RequestError) {
    if (err.code === 'invalid_id' || err.code === 'unknown_task') throw new UsageError(err.message);
    throw new ExitCode(1, err.message);
  }
  throw err;
}

import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import {
  AnswerFileSchema,
  QuestionFileSchema,
  assertSafeId,
  taskPaths,
  type AnswerFile,
  type QuestionFile,
} from '../../protocol';
import { readJsonFile } from './atomic';
import { createExclusive } from '../../base/atomic';
import { claimQuestion } from '../../base/question-claim';
import { LauncherRecordSchema, TaskStateSchema, ACTIVE_STATUSES, answerTooLarge, type TaskStatus } from '../../protocol';
import { cancelSlurmJob } from '../cluster/slurm';
import { readPendingQuestions } from './store';
import { questionsClosedAt } from './questions-closed';
import { SupervisorRefusal, askSupervisor, delegationSocket, type SupervisorRequest } from './delegation-socket';

/**
 * Requests from processes other than a task's supervisor (DESIGN.md principle 2): they never write state.json or
 * events.jsonl; they drop a file the supervisor turns into an event. This is what keeps a cancel from being
 * overwritten (reference §8.2) and makes "the first answer wins" hold across processes (§5.2.10's race fixed).
 */

export class RequestError extends Error {
  override readonly name = 'RequestError';
  constructor(
    message: string,
    readonly code: 'unknown_task' | 'ambiguous_id' | 'unknown_question' | 'already_answered' | 'expired' | 'invalid_id' | 'finished' | 'unknown_file' | 'too_large',
  ) {
    super(message);
  }
}

export interface CancelOutcome {
  /** True when a cancel request was filed now or earlier and the task is still active. */
  requested: boolean;
  status: TaskStatus;
}

/** Asks the task's supervisor to cancel. A finished task has nothing to cancel; a second request is harmless. */
export async function requestCancel(root: string, taskId: string, by = 'cli'): Promise<CancelOutcome> {
  const socket = delegationSocket();
  if (socket) return (await relayRequest(socket, { op: 'cancel', task_id: taskId, by: requesterOf(by) })) as CancelOutcome;
  const paths = pathsFor(root, taskId);
  const state = await readJsonFile(paths.state, TaskStateSchema);
  if (!state) throw new RequestError(`Unknown task "${taskId}".`, 'unknown_task');
  if (!ACTIVE_STATUSES.includes(state.status)) return { requested: false, status: state.status };
  await createExclusive(paths.cancelRequest, `${JSON.stringify({ requested_at: new Date().toISOString(), by, pid: process.pid })}\n`);
  await cancelQueuedJob(paths.launcher, state.supervisor_pid);
  return { requested: true, status: state.status };
}

/**
 * A task still held by Slurm has no supervisor to read the request: its job is cancelled (scancel), and readers then
 * show the task cancelled (`caesar gc` writes it down). A job whose supervisor runs reads the request like any other
 * (its CancelWatch also polls, for shared file systems without change notification): scancel would give it only
 * KillWait seconds to conclude.
 */
async function cancelQueuedJob(launcherFile: string, supervisorPid: number | undefined): Promise<void> {
  if (supervisorPid !== undefined) return;
  const record = await readJsonFile(launcherFile, LauncherRecordSchema).catch(() => undefined);
  if (record?.kind === 'slurm') await cancelSlurmJob(record.job_id);
}

/**
 * Writes answers/<questionId>.json once. Unknown task, unknown question, expired question and already answered each
 * fail with their own clear error; ids are validated so nothing can be written outside the task directory.
 */
export async function answerQuestion(
  root: string,
  taskId: string,
  questionId: string,
  text: string,
  by = 'cli',
): Promise<AnswerFile> {
  // Before the relay too: the supervisor on the other end checks again, this says it sooner.
  const tooLarge = answerTooLarge(text);
  if (tooLarge) throw new RequestError(tooLarge, 'too_large');
  const socket = delegationSocket();
  if (socket) return (await relayRequest(socket, { op: 'answer', task_id: taskId, question_id: questionId, answer: text, by: requesterOf(by) })) as AnswerFile;
  const paths = pathsFor(root, taskId);
  try {
    assertSafeId(questionId, 'question id');
  } catch (err) {
    throw new RequestError((err as Error).message, 'invalid_id');
  }
  if (!(await exists(paths.state))) throw new RequestError(`Unknown task "${taskId}".`, 'unknown_task');
  const question = await readJsonFile(path.join(paths.questionsDir, `${questionId}.json`), QuestionFileSchema);
  if (!question) throw new RequestError(await unknownQuestionMessage(root, taskId, questionId), 'unknown_question');
  // The first answer wins, and stays the answer once the question is closed at the task's end: say so, not "expired".
  const answerFile = path.join(paths.answersDir, `${questionId}.json`);
  const earlier = await readJsonFile(answerFile, AnswerFileSchema).catch(() => undefined);
  if (earlier) throw alreadyAnswered(questionId, earlier);
  // Expired one by one (expired_at), or all at once (questions/.closed.json).
  const expiredAt = question.expired_at ?? (await questionsClosedAt(paths.questionsDir));
  const ended = await endedBeforeAnswer(paths.state, question, expiredAt);
  if (ended) throw new RequestError(ended, 'finished');
  if (expiredAt) throw expired(questionId, expiredAt);
  // The waiter may be giving up at this very moment: whichever of us claims the question first decides (question-claim.ts).
  if ((await claimQuestion(paths.questionsDir, questionId, 'answered')) === 'expired') {
    const marked = await readJsonFile(path.join(paths.questionsDir, `${questionId}.json`), QuestionFileSchema).catch(() => undefined);
    throw expired(questionId, marked?.expired_at ?? new Date().toISOString());
  }
  const answer: AnswerFile = { id: questionId, answer: text, answered_at: new Date().toISOString(), by };
  AnswerFileSchema.parse(answer);
  const created = await createExclusive(answerFile, `${JSON.stringify(answer, null, 2)}\n`);
  if (!created) throw alreadyAnswered(questionId, await readJsonFile(answerFile, AnswerFileSchema).catch(() => undefined));
  // A waiter that lost the claim waits CLAIMED_ANSWER_WAIT_MS for this file; if we stalled longer it gave up and
  // marked the question expired: say so, and take the answer back, rather than report an answer nobody took.
  const after = await readJsonFile(path.join(paths.questionsDir, `${questionId}.json`), QuestionFileSchema).catch(() => undefined);
  if (after?.expired_at) {
    await fs.rm(answerFile, { force: true });
    throw expired(questionId, after.expired_at);
  }
  return answer;
}

/**
 * Inside a sandboxed task every task folder is read-only: an answer or a cancel goes to the task's supervisor, which
 * files it for a sub-task it started (tasks/delegation-server.ts) and refuses any other; its RequestError comes back as one.
 */
async function relayRequest(socket: string, request: SupervisorRequest): Promise<unknown> {
  try {
    return await askSupervisor(socket, request);
  } catch (err) {
    if (!(err instanceof SupervisorRefusal)) throw err;
    const code = err.code.startsWith('request:') ? (err.code.slice('request:'.length) as RequestError['code']) : 'unknown_task';
    throw new RequestError(err.message, code);
  }
}

function requesterOf(by: string): 'cli' | 'mcp' | 'mcp-elicitation' {
  return by === 'mcp' || by === 'mcp-elicitation' ? by : 'cli';
}

function expired(questionId: string, expiredAt: string): RequestError {
  return new RequestError(`Question "${questionId}" expired at ${expiredAt}: the agent stopped waiting and went on with its own judgment.`, 'expired');
}

function alreadyAnswered(questionId: string, existing: AnswerFile | undefined): RequestError {
  return new RequestError(
    `Question "${questionId}" was already answered${existing?.by ? ` from ${existing.by}` : ''}${existing ? `: "${existing.answer}"` : ''}.`,
    'already_answered',
  );
}

/**
 * Why a question of a task that is over cannot be answered, or undefined while the task runs or when the question's
 * expiry says it all. The supervisor expires every unanswered question as the agent exits, so a cancelled task's
 * question reads "expired": "the agent … went on with its own judgment" would be untrue there (issue 24), and a task
 * that ended without expiring its question (a supervisor that died) would take an answer nobody reads.
 */
async function endedBeforeAnswer(stateFile: string, question: QuestionFile, expiredAt: string | undefined): Promise<string | undefined> {
  const state = await readJsonFile(stateFile, TaskStateSchema).catch(() => undefined);
  if (!state || ACTIVE_STATUSES.includes(state.status)) return undefined;
  if (expiredAt && state.status !== 'cancelled') return undefined; // the agent stopped waiting and went on
  const how = state.status === 'cancelled' ? 'was cancelled' : `ended (${state.status.replace('_', ' ')})`;
  return `Task "${state.id}" ${how} before question "${question.id}" was answered: nothing is waiting for an answer any more.`;
}

/** Names the questions that are waiting, so whoever mistyped an id sees the ones they can answer. */
export async function unknownQuestionMessage(root: string, taskId: string, questionId: string): Promise<string> {
  const pending = await pendingQuestions(root, taskId).catch(() => [] as QuestionFile[]);
  const headline = `Task "${taskId}" has no question "${questionId}"`;
  if (pending.length === 0) return `${headline}, and none of its questions is waiting for an answer.`;
  const lines = pending.map((q) => `  ${q.id}  ${q.question}${q.options.length ? ` (options: ${q.options.map((o, i) => `${i + 1}) ${o}`).join(', ')})` : ''}`);
  return [`${headline}. Questions waiting for an answer:`, ...lines].join('\n');
}

/** Unanswered, unexpired questions of a task, oldest first. */
export async function pendingQuestions(root: string, taskId: string): Promise<QuestionFile[]> {
  const paths = pathsFor(root, taskId);
  return readPendingQuestions(paths.questionsDir, paths.answersDir);
}

function pathsFor(root: string, taskId: string) {
  try {
    return taskPaths(root, taskId);
  } catch (err) {
    throw new RequestError((err as Error).message, 'invalid_id');
  }
}

async function exists(file: string): Promise<boolean> {
  return fs.stat(file).then(
    () => true,
    () => false,
  );
}

/** The name used in the team's API notes. */
export const answer = answerQuestion;

import { createHash, randomUUID } from 'node:crypto';
import { existsSync, promises as fs, watch, type FSWatcher } from 'node:fs';
import * as path from 'node:path';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { BoundedStdioTransport } from '../bounded-stdio';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { z } from '../../protocol/zod';
import {
  DOCUMENT_IDS,
  ReportSchema,
  TaskSchema,
  dropNulls,
  formatIssues,
  parseTaskDir,
  questionTooLarge,
  readTaskText,
  taskPaths,
  type ChannelReportMarker,
  type ProgressFile,
  type QuestionFile,
  type Task,
  type TaskPaths,
} from '../../protocol';
import { readAnswerForRelay, readJsonFile } from '../../engine/tasks';
import { writeJsonAtomic, writeFileAtomic } from '../../base/atomic';
import { answerFileAppears, claimQuestion } from '../../base/question-claim';
import { readRegularFileBounded } from '../../base/safe-read';
import { TaskStateSchema } from '../../protocol';
import { CAESAR_VERSION } from '../../base/version';

/** task.json holds the brief (objective, context, constraints): generous, but bounded. */
const MAX_TASK_FILE = 16 * 1024 * 1024;

/**
 * The return channel (OACP "The return channel", reference §5.3): one MCP server per task, started by the agent's
 * CLI over stdio from task.json's `channel` coordinates, declared to the agent as `caesar`. Four tools. Everything
 * goes through files of the task directory, so the server shares no memory with the supervisor and may be started
 * and stopped any number of times:
 * - get_task reads task.json;
 * - report_progress files progress/<name>.json, which the supervisor relays as a `progress` event (the supervisor is
 *   the only writer of events.jsonl);
 * - ask_orchestrator files questions/<id>.json (the supervisor relays the `question` event) and watches answers/ for
 *   answers/<id>.json, written once by whoever answers first (`caesar answer`, the MCP server, the editor). With no
 *   answer in time it marks the question expired and returns normally, inviting the agent to go on;
 * - submit_report validates the report at once (errors go back to the agent, which can fix and resubmit) and stores
 *   it as report.json with a marker that makes the supervisor record the `channel` report source.
 * Only JSON-RPC goes to stdout.
 */

export const CHANNEL_SERVER_INFO = { name: 'caesar-channel', version: CAESAR_VERSION } as const;
/** The longest ask_orchestrator waits for an answer (never past the task's deadline). */
export const DEFAULT_ANSWER_WAIT_MS = 5 * 60_000;
/** Overrides DEFAULT_ANSWER_WAIT_MS for one server (tests, or a person who wants shorter waits). */
export const ANSWER_WAIT_ENV = 'CAESAR_CHANNEL_ANSWER_WAIT_MS';
/** Safety re-check while waiting for an answer, for file systems whose watchers miss events. */
const ANSWER_POLL_MS = 1000;

export const NO_ANSWER_MESSAGE =
  'No answer arrived in time. Proceed using your own best judgment — do not keep waiting on this question, and ' +
  'mention the assumption you made in your report.';

export interface ChannelOptions {
  taskDir: string;
  /** Default $CAESAR_CHANNEL_ANSWER_WAIT_MS, else 5 minutes. */
  answerWaitMs?: number;
  /** Told of each question's wait, so a closing server can let them record their expiry before it exits. */
  trackWait?: (wait: Promise<unknown>) => void;
}

/** How long a closing server lets waiting questions mark themselves expired. */
const CLOSE_GRACE_MS = 3000;

/** Runs the channel on stdio until the client disconnects. */
export async function serveChannel(options: ChannelOptions): Promise<void> {
  assertChannelTaskDir(options.taskDir);
  const waits = new Set<Promise<unknown>>();
  const server = createChannelServer({
    ...options,
    trackWait: (wait) => {
      waits.add(wait);
      void wait.finally(() => waits.delete(wait)).catch(() => undefined);
    },
  });
  const transport = new BoundedStdioTransport();
  // The client going away (stdin ends) and the client's SIGTERM a moment later (the SDK's stdio client sends one when
  // a server takes over 2 s to exit) mean the same: stop waiting. A waiting question then marks itself expired rather
  // than staying pending forever.
  const closed = new Promise<void>((resolve) => {
    transport.onclose = () => resolve();
    process.stdin.once('end', () => resolve());
    for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) process.once(signal, () => resolve());
  });
  await server.connect(transport);
  process.stderr.write(`caesar channel: serving task ${path.basename(path.resolve(options.taskDir))}\n`);
  await closed;
  await server.close().catch(() => undefined);
  const grace = new Promise((resolve) => setTimeout(resolve, CLOSE_GRACE_MS).unref());
  await Promise.race([Promise.allSettled([...waits]), grace]);
  process.exit(process.exitCode ?? 0);
}

/** Connects a channel server to any transport (tests may use an in-memory pair; the CLI uses stdio). */
export async function connectChannel(options: ChannelOptions, transport: Transport): Promise<McpServer> {
  const server = createChannelServer(options);
  await server.connect(transport);
  return server;
}

const ProgressInput = {
  message: z.string().min(1).describe('Where you are, in one sentence ("tests written, now fixing the parser").'),
  pct: z.number().min(0).max(100).optional().describe('Rough completion percentage, 0-100.'),
};
const AskInput = {
  question: z.string().min(1).describe('The question, self-contained: the person answering has not read your context.'),
  options: z.array(z.string().min(1)).optional().describe('Suggested answers, when the choice is among a few.'),
};
const OkOutput = { ok: z.boolean(), message: z.string() };
const AskOutput = {
  id: z.string(),
  answered: z.boolean(),
  answer: z.string().optional(),
  answered_by: z.string().optional(),
  expired: z.boolean().optional(),
  message: z.string().optional(),
};
const SubmitOutput = { ok: z.boolean(), task_id: z.string(), status: z.string(), message: z.string() };
/**
 * The report as a tool input: `protocol` may be left out (it is filled in), and a top-level optional field may be
 * null (strict structured outputs write null for "absent"); everything else as caesar.report/v1.
 */
const REQUIRED_REPORT_FIELDS = new Set(['status', 'summary']);
const ReportInput = Object.fromEntries(
  Object.entries({
    ...ReportSchema.shape,
    protocol: z.literal(DOCUMENT_IDS.report).describe(`Always "${DOCUMENT_IDS.report}"; filled in when omitted.`),
  }).map(([key, schema]) => [key, REQUIRED_REPORT_FIELDS.has(key) ? schema : (schema as z.ZodType).nullish()]),
) as Record<string, z.ZodType>;

export function createChannelServer(options: ChannelOptions): McpServer {
  const { root, id } = parseTaskDir(options.taskDir);
  const paths = taskPaths(root, id);
  const waitCap = options.answerWaitMs ?? envWait() ?? DEFAULT_ANSWER_WAIT_MS;
  const server = new McpServer(CHANNEL_SERVER_INFO, {
    instructions:
      'The return channel to the orchestrator that delegated your task. Read the task with get_task, report progress ' +
      'with report_progress, ask a question outside your scope with ask_orchestrator, and hand in your final report ' +
      'with submit_report (fix and resubmit if it is refused).',
  });

  server.registerTool(
    'get_task',
    {
      title: 'Read the task',
      description:
        'Returns the task you were delegated (caesar.task/v1): objective, context, constraints, acceptance criteria, ' +
        'mode, workspace, deadline. Use it to re-read the assignment; it never changes while you work.',
      outputSchema: TaskSchema.shape,
      annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
    },
    async () => {
      const task = await readTask(paths);
      return { content: [{ type: 'text', text: JSON.stringify(task, null, 2) }], structuredContent: task as unknown as Record<string, unknown> };
    },
  );

  server.registerTool(
    'report_progress',
    {
      title: 'Report progress',
      description:
        'Tells the orchestrator where you are, shown live to the person following the task. Call it at milestones ' +
        '(not for every step); it returns at once.',
      inputSchema: ProgressInput,
      outputSchema: OkOutput,
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    },
    async ({ message, pct }) => {
      const progress: ProgressFile = { message, ...(pct !== undefined ? { pct } : {}), at: new Date().toISOString() };
      await writeJsonAtomic(path.join(paths.progressDir, `${Date.now().toString().padStart(15, '0')}-${randomUUID().slice(0, 8)}.json`), progress);
      const out = { ok: true, message: 'Progress recorded.' };
      return { content: [{ type: 'text', text: out.message }], structuredContent: out };
    },
  );

  server.registerTool(
    'ask_orchestrator',
    {
      title: 'Ask the orchestrator',
      description:
        'Asks the orchestrator (the agent or person who delegated this task) a question and waits for the answer. ' +
        'Use it only for a decision outside your scope that you cannot make from the task and the code. It waits ' +
        'at most a few minutes and never past the task deadline; without an answer it returns answered=false: then ' +
        'proceed on your best judgment and say so in your report.',
      inputSchema: AskInput,
      outputSchema: AskOutput,
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
    },
    async ({ question, options: choices }, extra) => {
      const tooLarge = questionTooLarge(question, choices ?? []);
      if (tooLarge) return { content: [{ type: 'text', text: tooLarge }], isError: true };
      const asking = ask(paths, question, choices ?? [], waitCap, extra.signal);
      options.trackWait?.(asking);
      const out = await asking;
      const text = out.answered ? `Answer: ${out.answer}` : out.message!;
      return { content: [{ type: 'text', text }], structuredContent: out };
    },
  );

  server.registerTool(
    'submit_report',
    {
      title: 'Submit the final report',
      description:
        'Hands in your final report (caesar.report/v1), validated at once. Call it once, as your last action, when ' +
        'the work is done or you cannot go further. If it is refused, the error names the fields to fix: fix them ' +
        'and call it again. Only protocol-less fields are needed: status, summary, then changes, findings, etc.',
      inputSchema: ReportInput,
      outputSchema: SubmitOutput,
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    },
    async (input) => {
      const result = await submit(paths, id, input as Record<string, unknown>);
      if ('error' in result) return { content: [{ type: 'text', text: result.error }], isError: true };
      return { content: [{ type: 'text', text: result.message }], structuredContent: result };
    },
  );

  return server;
}

/** task.json through the safe reader: regular file only, no symlink, bounded, a FIFO never blocks. */
async function readTask(paths: TaskPaths): Promise<Task> {
  return readTaskText((await readRegularFileBounded(paths.task, MAX_TASK_FILE, { within: path.dirname(paths.dir) })).toString('utf8'));
}

function envWait(): number | undefined {
  const value = Number(process.env[ANSWER_WAIT_ENV]);
  return process.env[ANSWER_WAIT_ENV] && Number.isFinite(value) && value >= 0 ? value : undefined;
}

/**
 * How long a question may wait: the cap, bounded by what is left of the task's deadline. The deadline counts from
 * the agent's start (state.json started_at), not from the task's creation, so a slot wait does not eat into it.
 */
async function answerBudget(paths: TaskPaths, cap: number): Promise<number> {
  const task = await readTask(paths).catch(() => undefined);
  if (!task) return cap;
  const state = await readJsonFile(paths.state, TaskStateSchema).catch(() => undefined);
  const start = Date.parse(state?.started_at ?? task.created_at);
  const remaining = task.deadline_ms - (Date.now() - (Number.isFinite(start) ? start : Date.now()));
  return Math.max(0, Math.min(cap, remaining));
}

type AskResult = z.infer<z.ZodObject<typeof AskOutput>>;

async function ask(paths: TaskPaths, question: string, options: string[], cap: number, signal: AbortSignal): Promise<AskResult> {
  const id = `q_${randomUUID().replaceAll('-', '').slice(0, 16)}`;
  const file = path.join(paths.questionsDir, `${id}.json`);
  const asked: QuestionFile = { id, question, options, asked_at: new Date().toISOString() };
  await fs.mkdir(paths.answersDir, { recursive: true });
  await writeJsonAtomic(file, asked);
  const budget = await answerBudget(paths, cap);
  const answerFile = path.join(paths.answersDir, `${id}.json`);
  const answer = await waitForFile(answerFile, paths.answersDir, budget, signal);
  if (answer) return { id, answered: true, answer: answer.answer, ...(answer.by ? { answered_by: answer.by } : {}) };
  // Nobody answered in time. An answerer may be claiming it right now: the first claim decides (question-claim.ts).
  if ((await claimQuestion(paths.questionsDir, id, 'expired')) === 'answered' && (await answerFileAppears(answerFile))) {
    const late = await readAnswer(answerFile);
    if (late) return { id, answered: true, answer: late.answer, ...(late.by ? { answered_by: late.by } : {}) };
  }
  // Marked so answering it now fails clearly instead of going nowhere.
  await writeJsonAtomic(file, { ...asked, expired_at: new Date().toISOString() });
  return { id, answered: false, expired: true, message: NO_ANSWER_MESSAGE };
}

/**
 * The answer as the asking agent gets it: whole up to 1 MiB of text, else its beginning and the path of the file that
 * holds it all (issue 23: the agent's own MCP client refuses a line over 10 MiB, and a 10 MB answer was not even read).
 */
async function readAnswer(file: string): Promise<{ answer: string; by?: string } | undefined> {
  const read = await readAnswerForRelay(file, path.basename(file, '.json'), path.basename(file), { maxChars: MAX_ANSWER_TO_AGENT_CHARS, wholeIn: file });
  return read ? { answer: read.eventText, ...(read.by ? { by: read.by } : {}) } : undefined;
}

const MAX_ANSWER_TO_AGENT_CHARS = 1024 * 1024;

/** Resolves with the answer as soon as it appears (fs.watch on answers/, plus a slow poll), or undefined at the budget. */
function waitForFile(file: string, dir: string, budgetMs: number, signal: AbortSignal) {
  return new Promise<Awaited<ReturnType<typeof readAnswer>>>((resolve) => {
    let watcher: FSWatcher | undefined;
    let done = false;
    const finish = (value: Awaited<ReturnType<typeof readAnswer>>) => {
      if (done) return;
      done = true;
      watcher?.close();
      clearInterval(poll);
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      resolve(value);
    };
    const check = () => {
      if (done || !existsSync(file)) return;
      void readAnswer(file).then((answer) => answer && finish(answer));
    };
    const onAbort = () => finish(undefined);
    try {
      watcher = watch(dir, () => check());
      watcher.on('error', () => undefined);
    } catch {
      /* the poll below still sees the answer */
    }
    const poll = setInterval(check, ANSWER_POLL_MS);
    const timer = setTimeout(() => void readAnswer(file).then(finish), budgetMs);
    signal.addEventListener('abort', onAbort);
    // The client may have gone while the question was being written (an abort listener added late never fires).
    if (signal.aborted) onAbort();
    check();
  });
}

type SubmitResult = z.infer<z.ZodObject<typeof SubmitOutput>> | { error: string };

async function submit(paths: TaskPaths, taskId: string, input: Record<string, unknown>): Promise<SubmitResult> {
  const doc = dropNulls({ ...input, protocol: DOCUMENT_IDS.report }) as Record<string, unknown>;
  if (doc.task_id !== undefined && doc.task_id !== '' && doc.task_id !== taskId) {
    return { error: `Report refused: task_id is "${String(doc.task_id)}", but this task is "${taskId}". Use "${taskId}" (or leave task_id out) and submit again.` };
  }
  const parsed = ReportSchema.safeParse({ ...doc, task_id: taskId });
  if (!parsed.success) {
    return { error: `Report refused, fix these fields and submit again: ${formatIssues(parsed.error).join('; ')}` };
  }
  const text = `${JSON.stringify(parsed.data, null, 2)}\n`;
  await writeFileAtomic(paths.report, text);
  const marker: ChannelReportMarker = { sha256: createHash('sha256').update(text).digest('hex'), submitted_at: new Date().toISOString() };
  await writeJsonAtomic(paths.channelReport, marker);
  return { ok: true, task_id: taskId, status: parsed.data.status, message: `Report accepted (status ${parsed.data.status}). You can stop now.` };
}

/** `caesar channel serve` refuses a folder that is not a task directory with a task.json. */
export function assertChannelTaskDir(taskDir: string): void {
  const { root, id } = parseTaskDir(taskDir);
  if (!existsSync(taskPaths(root, id).task)) throw new Error(`No task.json in ${taskDir}: not a task directory.`);
}

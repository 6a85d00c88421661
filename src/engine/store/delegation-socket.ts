import * as net from 'node:net';
import * as path from 'node:path';
import { z } from '../../protocol/zod';
import { ENV_POLICIES, ISOLATIONS, LAUNCHER_KINDS, MODES, NETWORK_REQUESTS, TRANSPORTS } from '../../config';
import { MAX_BRIEF_TEXT_BYTES } from '../../protocol';
import { realRoot } from './record-seal';

/*
 * Delegation from inside the sandbox (docs/sandbox.md). An agent in a sandboxed task cannot create a task: every
 * `.caesar/` is read-only to it, which is what keeps it off its siblings' records. Its task's supervisor, outside,
 * offers a UNIX socket instead (tasks/delegation-server.ts), named by $CAESAR_DELEGATION_SOCKET and shown read-only in
 * the sandbox. `caesar run`, `caesar answer`, `caesar cancel` and the MCP server inside send what they would have
 * written to the supervisor, one JSON line per connection, and get one JSON line back. The supervisor decides
 * everything that matters (the repository, the workspace, the depth, the parent, the policy, a sandbox and network no
 * looser than the parent's); this side only asks.
 */

export const DELEGATION_SOCKET_ENV = 'CAESAR_DELEGATION_SOCKET';
/** The largest request line: a brief at its limit (MAX_BRIEF_TEXT_BYTES) plus room for the other fields. */
export const MAX_REQUEST_BYTES = MAX_BRIEF_TEXT_BYTES + 256 * 1024;
/** The largest reply line (a summary carries the child's whole result.json). */
const MAX_REPLY_BYTES = 64 * 1024 * 1024;
/** A supervisor that neither answers nor hangs up within this is reported as such. */
const REPLY_TIMEOUT_MS = 60_000;

const shortText = z.string().min(1).max(256);
const taskId = z.string().min(1).max(128);
/** Who answers or cancels, as the answer file records it. */
const requester = z.enum(['cli', 'mcp', 'mcp-elicitation']);

/** A delegation request's fields, the way `caesar run` and caesar_delegate pass them (no workspace, no depth: the supervisor's). */
export const DelegateFieldsSchema = z.strictObject({
  objective: z.string().min(1),
  agent: shortText.optional(),
  role: shortText.optional(),
  mode: z.enum(MODES).optional(),
  isolation: z.enum(ISOLATIONS).optional(),
  network: z.enum(NETWORK_REQUESTS).optional(),
  model: shortText.optional(),
  timeout: z.union([z.string().min(1).max(32), z.number().positive()]).optional(),
  context: z.string().optional(),
  constraints: z.array(z.string().max(4096)).max(100).optional(),
  acceptance_criteria: z.array(z.string().max(4096)).max(100).optional(),
  channel: z.boolean().optional(),
  extra_args: z.array(z.string().max(4096)).max(64).optional(),
  env: z.enum(ENV_POLICIES).optional(),
  transport: z.enum(TRANSPORTS).optional(),
  launcher: z.enum(LAUNCHER_KINDS).optional(),
  checks: z.array(z.string().min(1).max(4096)).max(20).optional(),
});
export type DelegateFields = z.infer<typeof DelegateFieldsSchema>;

const claimedPath = z.string().min(1).max(4096);

export const SupervisorRequestSchema = z.discriminatedUnion('op', [
  /** root and workspace are what the caller resolved, checked against the parent's; the child's are the supervisor's. */
  z.strictObject({ op: z.literal('delegate'), root: claimedPath, workspace: claimedPath, request: DelegateFieldsSchema }),
  z.strictObject({ op: z.literal('summary'), task_id: taskId }),
  z.strictObject({ op: z.literal('answer'), task_id: taskId, question_id: taskId, answer: z.string().max(64 * 1024), by: requester }),
  z.strictObject({ op: z.literal('cancel'), task_id: taskId, by: requester }),
]);
export type SupervisorRequest = z.infer<typeof SupervisorRequestSchema>;

export type SupervisorReply = { ok: true; value?: unknown } | { ok: false; code: string; error: string };

/** The supervisor refused (code: a RefusalCode for a delegation, `request:<code>` for a RequestError). */
export class SupervisorRefusal extends Error {
  override readonly name = 'SupervisorRefusal';
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** The socket of this process's task supervisor, when it runs inside a sandboxed task that offers one. */
export function delegationSocket(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const socket = env[DELEGATION_SOCKET_ENV];
  return socket && path.isAbsolute(socket) ? socket : undefined;
}

/** Requests of this process, one at a time: the supervisor takes a few connections at once (`caesar ps` asks per task). */
let inFlight: Promise<unknown> = Promise.resolve();

/** One request, one reply: the reply's value, or a SupervisorRefusal. */
export function askSupervisor(socket: string, request: SupervisorRequest): Promise<unknown> {
  const asked = inFlight.then(
    () => askOnce(socket, request),
    () => askOnce(socket, request),
  );
  inFlight = asked.catch(() => undefined);
  return asked;
}

function askOnce(socket: string, request: SupervisorRequest): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    const finish = (error: Error | undefined, value?: unknown) => {
      if (done) return;
      done = true;
      connection.destroy();
      if (error) reject(error);
      else resolve(value);
    };
    const connection = net.connect(socket, () => connection.write(`${JSON.stringify(request)}\n`));
    connection.setTimeout(REPLY_TIMEOUT_MS, () => finish(new Error(`The task's supervisor did not answer within ${REPLY_TIMEOUT_MS / 1000} s (${socket}).`)));
    connection.on('error', (err) => finish(new Error(`Cannot reach the task's supervisor at ${socket}: ${err.message}`)));
    connection.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_REPLY_BYTES) return finish(new Error(`The supervisor's reply is over ${MAX_REPLY_BYTES} bytes.`));
      chunks.push(chunk);
      const text = Buffer.concat(chunks).toString('utf8');
      if (text.includes('\n')) settleReply(text.slice(0, text.indexOf('\n')), finish);
    });
    connection.on('end', () => finish(new Error(`The task's supervisor hung up without answering (${socket}).`)));
  });
}

function settleReply(line: string, finish: (error: Error | undefined, value?: unknown) => void): void {
  let reply: SupervisorReply;
  try {
    reply = JSON.parse(line) as SupervisorReply;
  } catch {
    return finish(new Error("The task's supervisor answered with something that is not JSON."));
  }
  if (reply.ok) finish(undefined, reply.value);
  else finish(new SupervisorRefusal(String(reply.code), String(reply.error)));
}

/*
 * The tasks the supervisor started for this process. Their records are sealed with Caesar's record key, which the
 * sandbox hides (record-key.ts), so this process cannot check a seal: it takes their events as Caesar's (their folder
 * is read-only to everything in the sandbox, and the supervisor named them) and asks the supervisor for their summary,
 * which it reads and verifies outside (and whose supervisor pid it can see: this PID namespace cannot).
 */
const relayed = new Set<string>();

function relayKey(root: string, id: string): string {
  return `${realRoot(root)}\0${id}`;
}

export function markRelayed(root: string, id: string): void {
  relayed.add(relayKey(root, id));
}

/** True for a task this process's supervisor started for it (only inside a sandbox that offers the socket). */
export function isRelayedTask(root: string, id: string): boolean {
  return relayed.size > 0 && delegationSocket() !== undefined && relayed.has(relayKey(root, id));
}

/**
 * The summary of a sub-task, as the supervisor of the sandbox this process runs in read and verified it outside; `no`
 * when there is no such supervisor or the task is none of its sub-tasks (the caller reads the folder itself). A task
 * the supervisor vouched for is marked relayed: this process then takes its events as Caesar's too.
 */
export async function relayedSummary<Summary>(root: string, id: string, taskFolderExists: () => boolean): Promise<{ summary: Summary | undefined } | 'no'> {
  const socket = delegationSocket();
  // Only for a task of this root (its folder is there): the supervisor answers for its own root's tasks.
  if (!socket || (!relayed.has(relayKey(root, id)) && !taskFolderExists())) return 'no';
  try {
    const summary = ((await askSupervisor(socket, { op: 'summary', task_id: id })) ?? undefined) as Summary | undefined;
    markRelayed(root, id);
    return { summary };
  } catch (err) {
    if (err instanceof SupervisorRefusal && err.code === 'request:unknown_task') return 'no';
    throw err;
  }
}

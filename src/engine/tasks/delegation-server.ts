import { promises as fs } from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { formatIssues } from '../../protocol';
import { DELEGATION_SOCKET_ENV, MAX_REQUEST_BYTES, SupervisorRequestSchema, type SupervisorReply, type SupervisorRequest } from '../store/delegation-socket';
import { delegateTask } from './delegate-task';
import { DelegationRefusedError } from '../resolve/resolve';
import { RequestError, answerQuestion, requestCancel } from '../store/requests';
import { TaskStore } from '../store/store';
import type { DelegatingParent, DelegationOffer } from '../run/delegating-parent';
import { checkClaimedPlaces, parentEnv, tightenLaunch, tightenRequest } from './delegation-policy';

/*
 * The supervisor's side of delegation from inside the sandbox (store/delegation-socket.ts has the protocol). Every
 * byte that arrives is the agent's, so hostile: one line of at most MAX_REQUEST_BYTES per connection, a schema with
 * no room for anything else (zod, strict), a few connections at a time, delegations one at a time and at most
 * MAX_CHILDREN per task. A delegation is resolved as any other (policy, depth, allowed agents), from the parent's own
 * launch (delegation-policy.ts), and the child is started as a normal task by delegate(): its own supervisor writes
 * its records. Answers and cancels go only to tasks this supervisor started, as request files (store/requests.ts).
 */

/** More sub-tasks than this from one task are refused: an agent in a loop must not fill the machine. */
export const MAX_CHILDREN = 16;
/** A connection that has not sent its request within this is closed. */
const REQUEST_TIMEOUT_MS = 30_000;
const MAX_CONNECTIONS = 8;

/** Opens the socket and names it in the agent's environment (`env` is the agent's, changed in place). */
export async function offerDelegation(parent: DelegatingParent, env: NodeJS.ProcessEnv, log: (message: string) => void): Promise<DelegationOffer> {
  // Under /tmp, short: a UNIX socket path has at most 107 bytes (network-bridge.ts does the same).
  const dir = await fs.mkdtemp('/tmp/caesar-delegate-');
  const socket = path.join(dir, 'supervisor.sock');
  const server = new DelegationServer(parent, log);
  await server.listen(socket);
  env[DELEGATION_SOCKET_ENV] = socket;
  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    await server.close();
    await fs.rm(dir, { recursive: true, force: true });
  };
  return {
    mounts: [{ kind: 'ro', path: dir }],
    settle: async (confined) => {
      if (confined) return;
      delete env[DELEGATION_SOCKET_ENV];
      await close();
    },
    close,
  };
}

export class DelegationServer {
  private readonly server = net.createServer((connection) => this.accept(connection));
  /** The tasks started for this task's agent: the only ones it may ask about, answer or cancel. */
  readonly children = new Set<string>();
  /** Delegations one after the other: the count of children is exact and a flood queues. */
  private queue: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly parent: DelegatingParent,
    private readonly log: (message: string) => void,
  ) {
    this.server.maxConnections = MAX_CONNECTIONS;
  }

  listen(socket: string): Promise<void> {
    return new Promise((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(socket, () => {
        this.server.off('error', reject);
        // The socket must not keep the supervisor alive on its own.
        this.server.unref();
        resolve();
      });
    });
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  private accept(connection: net.Socket): void {
    const chunks: Buffer[] = [];
    let size = 0;
    let answered = false;
    const reply = (answer: SupervisorReply) => {
      if (answered) return;
      answered = true;
      connection.end(`${JSON.stringify(answer)}\n`);
    };
    connection.setTimeout(REQUEST_TIMEOUT_MS, () => connection.destroy());
    connection.on('error', () => connection.destroy());
    connection.on('data', (chunk: Buffer) => {
      if (answered) return;
      const newline = chunk.indexOf(0x0a);
      size += newline >= 0 ? newline : chunk.length;
      if (size > MAX_REQUEST_BYTES) return reply(refusal('too-large', `Refused: the request is over ${MAX_REQUEST_BYTES} bytes.`));
      chunks.push(newline >= 0 ? chunk.subarray(0, newline) : chunk);
      if (newline < 0) return;
      answered = true;
      connection.setTimeout(0); // the request is in: its answer may take longer (a slow disk, a queue of delegations)
      void this.answer(Buffer.concat(chunks).toString('utf8')).then((answer) => connection.end(`${JSON.stringify(answer)}\n`));
    });
  }

  /** One request line → one reply; nothing thrown here reaches the supervisor. */
  async answer(line: string): Promise<SupervisorReply> {
    let request: SupervisorRequest;
    try {
      const parsed = SupervisorRequestSchema.safeParse(JSON.parse(line));
      if (!parsed.success) return refusal('malformed', `Refused: malformed request: ${formatIssues(parsed.error)}`);
      request = parsed.data;
    } catch {
      return refusal('malformed', 'Refused: the request is not JSON.');
    }
    try {
      return { ok: true, value: await this.dispatch(request) };
    } catch (err) {
      if (err instanceof DelegationRefusedError) return refusal(err.code, err.message);
      if (err instanceof RequestError) return refusal(`request:${err.code}`, err.message);
      this.log(`delegation request (${request.op}) failed: ${(err as Error).stack ?? String(err)}`);
      return refusal('failed', (err as Error).message ?? String(err));
    }
  }

  private dispatch(request: SupervisorRequest): Promise<unknown> {
    if (request.op === 'delegate') return this.enqueue(() => this.delegate(request));
    this.requireChild(request.task_id);
    const root = this.parent.root;
    if (request.op === 'summary') return new TaskStore(root).summary(request.task_id);
    if (request.op === 'cancel') return requestCancel(root, request.task_id, request.by);
    return answerQuestion(root, request.task_id, request.question_id, request.answer, request.by);
  }

  private enqueue<T>(work: () => Promise<T>): Promise<T> {
    const next = this.queue.then(work, work);
    this.queue = next.catch(() => undefined);
    return next;
  }

  private async delegate(request: Extract<SupervisorRequest, { op: 'delegate' }>): Promise<unknown> {
    if (this.children.size >= MAX_CHILDREN) throw new DelegationRefusedError('usage', `Refused: this task has already started ${MAX_CHILDREN} sub-tasks, the most one task may.`);
    const started = Date.now();
    checkClaimedPlaces(this.parent, request);
    const fields = tightenRequest(this.parent, request.request);
    const task = await delegateTask(this.parent.root, { ...fields, workspace: this.parent.launch.workspace }, {
      env: parentEnv(this.parent),
      tighten: (launch) => tightenLaunch(this.parent, launch),
    });
    this.children.add(task.id);
    this.log(`delegated sub-task ${task.id} (${task.launch.agent}) for the agent in ${Date.now() - started} ms`);
    return task;
  }

  private requireChild(id: string): void {
    if (!this.children.has(id)) throw new RequestError(`Refused: task "${id}" was not started by this task; from inside the sandbox only its own sub-tasks can be read, answered or cancelled.`, 'unknown_task');
  }
}

function refusal(code: string, error: string): SupervisorReply {
  return { ok: false, code, error };
}

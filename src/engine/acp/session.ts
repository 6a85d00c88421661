import type { Writable } from 'node:stream';
import * as acp from '@agentclientprotocol/sdk';
import type { EventDraft, LaunchSpec, ReportTier, Task, TaskPaths } from '../../protocol';
import type { AgentAdapter, BuildContext, SpawnPlan } from '../../agents/types';
import { obj } from '../../agents/stream';
import { runAgentProcess, type RunAgentOptions, type RunAgentResult } from '../process/spawn';
import { PermissionBroker, type AnswerSource } from './permission-broker';
import type { PermissionPolicy } from './permissions';
import { AcpTranslator } from './translator';
import { WorkspaceFs } from './workspace-fs';
import { reportedVersion } from '../../base/version';

/**
 * The report tier over ACP: the channel (an MCP server given in `session/new`) or the file. The schema tier's flags
 * belong to the stream command lines (claude --json-schema, codex --output-schema), which ACP does not run.
 */
export function acpTier(launch: Pick<LaunchSpec, 'transport'>, picked: ReportTier): ReportTier {
  return launch.transport === 'acp' && picked === 'schema' ? 'file' : picked;
}

export interface AcpSessionInput {
  adapter: AgentAdapter;
  task: Task;
  tier: ReportTier;
  paths: Pick<TaskPaths, 'questionsDir' | 'answersDir' | 'report'>;
  permissions: PermissionPolicy;
  /** The task runs in its own worktree (permissions `allow-in-worktree`). */
  inWorktree: boolean;
  relay: AnswerSource;
  /** `[sandbox] hide` as absolute paths: the client serves none of them (the agent runs outside the sandbox's view). */
  hidden?: string[];
  /** Drafts made outside the agent's stdout (automatic answers, client writes): into events.jsonl. */
  emit(drafts: EventDraft[]): void;
  log(message: string): void;
}

/** How long a cancelled agent gets to end its turn after `session/cancel`, before its process group is killed. */
const CANCEL_WAIT_MS = 2000;

/**
 * One task's agent driven over the Agent Client Protocol (JSON-RPC over the child's stdio, `@agentclientprotocol/sdk`
 * as the client): the process is started as every agent is (own process group, raw.log, deadline, cancel —
 * src/engine/process/spawn.ts), then `initialize` → `session/new` (cwd = the task's workspace, the return channel as an MCP
 * server in the channel tier) → `session/prompt` with the brief. raw.log holds every line the agent wrote and every
 * line sent to it (prefixed `>> `). When the prompt returns, stdin is closed and the group terminated: three of the
 * five agents never exit by themselves. A cancel sends `session/cancel`, answers open permission requests
 * `cancelled`, and kills the group once the turn ended or after a short wait.
 */
export class AcpSession {
  readonly translator: AcpTranslator;
  private readonly entry: NonNullable<AgentAdapter['acp']>;
  /** One session per task: the state of its one run. */
  private cancelRequested = false;
  private phase = 'initialize';
  private session?: { agent: acp.ClientContext; sessionId: string };

  constructor(private readonly input: AcpSessionInput) {
    if (!input.adapter.acp) {
      throw new Error(`${input.adapter.displayName} has no Agent Client Protocol mode: run it with transport "stream".`);
    }
    this.entry = input.adapter.acp;
    this.translator = new AcpTranslator(input.task.workspace);
  }

  /** The agent's ACP command line (AgentAdapter.acp.plan). */
  build(ctx: BuildContext): SpawnPlan {
    return this.entry.plan(ctx);
  }

  /** Runs the agent; the result's exit code is 0 once the turn ended (its stop reason is in the translation). */
  async run(options: RunAgentOptions, prompt: string): Promise<RunAgentResult> {
    const kill = new AbortController();
    const stop = new AbortController();
    const pipe = new StdioPipe();
    let exited = false;
    const processDone = runAgentProcess({
      ...options,
      signal: kill.signal,
      stopSignal: stop.signal,
      onStdin: (stdin, logLines) => pipe.attach(stdin, logLines),
      onStdoutLines: (lines) => {
        options.onStdoutLines(lines);
        pipe.receive(lines);
      },
    }).finally(() => {
      exited = true;
      pipe.end();
    });
    if (!pipe.attached) return processDone; // not started: the spawn error is in the result

    const broker = this.broker(Date.now() + options.timeoutMs);
    const conversation = this.converse(this.client(broker), pipe, prompt);
    const onCancel = () => {
      this.cancelRequested = true;
      broker.cancelAll();
      void this.cancelTurn(conversation).then(() => kill.abort());
    };
    if (options.signal?.aborted) onCancel();
    else options.signal?.addEventListener('abort', onCancel, { once: true });

    let stopReason: string | undefined;
    let failure: { error: unknown; exited: boolean } | undefined;
    try {
      stopReason = (await conversation).stopReason;
    } catch (error) {
      failure = { error, exited };
    } finally {
      options.signal?.removeEventListener('abort', onCancel);
      broker.dispose();
    }
    pipe.closeStdin();
    (this.cancelRequested ? kill : stop).abort();
    const run = await processDone;
    // A cancel or the deadline ends the conversation on purpose; anything else that broke it is the agent's failure.
    if (failure && !this.cancelRequested && !run.timedOut && !run.spawnError) this.conversationFailed(failure.error, failure.exited);
    const turnEnded = stopReason !== undefined && !run.timedOut;
    return { ...run, cancelled: run.cancelled || this.cancelRequested, exitCode: turnEnded ? 0 : run.exitCode, signal: turnEnded ? null : run.signal };
  }

  /** initialize → session/new → session/prompt with the brief; resolves with the prompt's response. */
  private converse(app: acp.ClientApp, pipe: StdioPipe, prompt: string): Promise<acp.PromptResponse> {
    return app.connectWith(acp.ndJsonStream(pipe.writable, pipe.readable), async (agent) => {
      await agent.request('initialize', {
        protocolVersion: acp.PROTOCOL_VERSION,
        clientCapabilities: { fs: { readTextFile: this.entry.readTextFile !== false, writeTextFile: true }, terminal: false },
        clientInfo: { name: 'caesar', version: reportedVersion() },
      });
      this.phase = 'session/new';
      const { sessionId } = await agent.request('session/new', { cwd: this.input.task.workspace, mcpServers: this.mcpServers() });
      this.session = { agent, sessionId };
      this.translator.noteSession(sessionId);
      if (this.cancelRequested) throw new Error('cancelled before the prompt was sent');
      this.phase = 'session/prompt';
      return agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: prompt }] });
    });
  }

  /** `session/cancel`, then the turn gets CANCEL_WAIT_MS to end by itself (resolves when it did, or the wait is over). */
  private async cancelTurn(conversation: Promise<unknown>): Promise<void> {
    if (!this.session) return;
    this.session.agent.notify('session/cancel', { sessionId: this.session.sessionId }).catch(() => undefined);
    let timer: NodeJS.Timeout | undefined;
    const waited = new Promise<void>((resolve) => (timer = setTimeout(resolve, CANCEL_WAIT_MS)));
    await Promise.race([conversation.then(() => undefined, () => undefined), waited]);
    clearTimeout(timer);
  }

  /** What the agent may ask of us: permissions (questions), and file reads and writes inside the workspace. */
  private client(broker: PermissionBroker): acp.ClientApp {
    const files = new WorkspaceFs({
      workspace: this.input.task.workspace,
      mode: this.input.task.mode,
      extraFiles: [this.input.paths.report],
      ...(this.input.hidden ? { hidden: this.input.hidden } : {}),
      emit: this.input.emit,
      onWritten: (rel) => this.translator.noteWritten(rel),
    });
    return (
      acp
        .client({ name: 'caesar' })
        // Raw params (no schema check): an option kind or field the SDK does not know yet must still reach a person.
        .onRequest('session/request_permission', (params: unknown) => obj(params), ({ params }) => broker.request(params))
        .onRequest('fs/read_text_file', ({ params }) => files.read(params))
        .onRequest('fs/write_text_file', ({ params }) => files.write(params))
        // Updates are translated from the raw lines (every one, known or not); the SDK only has to accept them.
        .onNotification('*', () => undefined)
    );
  }

  private broker(deadlineAt: number): PermissionBroker {
    const { task } = this.input;
    return new PermissionBroker({
      ...this.input.paths,
      relay: this.input.relay,
      policy: this.input.permissions,
      mode: task.mode,
      inWorktree: this.input.inWorktree,
      workspace: task.workspace,
      ...(task.channel ? { channelServer: task.channel.server_name } : {}),
      reportPath: task.report_path,
      agentName: this.input.adapter.displayName,
      deadlineAt,
      emit: this.input.emit,
      onRejected: (id) => this.translator.noteRejected(id),
    });
  }

  /** The task's return channel as an ACP stdio MCP server, in the channel tier only. */
  private mcpServers(): acp.McpServer[] {
    const channel = this.input.task.channel;
    if (this.input.tier !== 'channel' || !channel) return [];
    return [{ name: channel.server_name, command: channel.command, args: channel.args, env: [] }];
  }

  private conversationFailed(err: unknown, exited: boolean): void {
    const detail = err instanceof Error ? err.message : JSON.stringify(err);
    const message = exited
      ? `The agent exited before its ACP turn ended (during ${this.phase}).`
      : `The agent's ACP ${this.phase} failed: ${detail}`;
    this.input.log(`${message} (${detail})`);
    this.translator.noteFailure(message);
    this.input.emit([{ type: 'error', message, fatal: true }]);
  }
}

/**
 * The child's stdio as the two WebStreams the SDK reads and writes. Lines the agent wrote arrive already split (and
 * logged) by the spawn layer; only JSON-looking ones are passed on, so stray output cannot break the conversation.
 * What we send is logged to raw.log with a `>> ` prefix.
 */
class StdioPipe {
  readonly readable: ReadableStream<Uint8Array>;
  readonly writable: WritableStream<Uint8Array>;
  private controller!: ReadableStreamDefaultController<Uint8Array>;
  private stdin?: Writable;
  private logLines: (lines: string[]) => void = () => undefined;
  private ended = false;
  private partial = '';
  private readonly encoder = new TextEncoder();
  private readonly decoder = new TextDecoder();

  constructor() {
    this.readable = new ReadableStream<Uint8Array>({ start: (controller) => void (this.controller = controller) });
    this.writable = new WritableStream<Uint8Array>({
      write: (chunk) => this.send(chunk),
      close: () => this.closeStdin(),
      abort: () => this.closeStdin(),
    });
  }

  get attached(): boolean {
    return this.stdin !== undefined;
  }

  attach(stdin: Writable, logLines: (lines: string[]) => void): void {
    this.stdin = stdin;
    this.logLines = logLines;
  }

  receive(lines: string[]): void {
    if (this.ended) return;
    for (const line of lines) if (line.trimStart().startsWith('{')) this.controller.enqueue(this.encoder.encode(`${line}\n`));
  }

  end(): void {
    if (this.ended) return;
    this.ended = true;
    try {
      this.controller.close();
    } catch {
      /* already closed or errored by the reader */
    }
  }

  closeStdin(): void {
    if (this.stdin && !this.stdin.writableEnded) this.stdin.end();
  }

  private send(chunk: Uint8Array): Promise<void> {
    const text = this.partial + this.decoder.decode(chunk, { stream: true });
    const lines = text.split('\n');
    this.partial = lines.pop() ?? '';
    if (lines.length) this.logLines(lines.map((line) => `>> ${line}`));
    const stdin = this.stdin;
    if (!stdin || stdin.writableEnded || stdin.destroyed) return Promise.resolve();
    return new Promise((resolve) => stdin.write(chunk, () => resolve()));
  }
}

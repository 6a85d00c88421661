import * as http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * The project's own fake model servers: one HTTP server on 127.0.0.1, port 0, speaking one vendor dialect, answering
 * each model request with the next turn of a script. Side requests (a title call without tools, a non-streaming
 * "next speaker" check…) are answered with plain text and do not consume a turn. Every request is recorded.
 */

/** What the fake model was asked, with the caesar facts pulled out of the brief. */
export interface ModelRequest {
  path: string;
  body: Record<string, unknown>;
  /** Every string of the request body, joined: the prompt, tool results, system text. */
  text: string;
  taskId?: string;
  reportPath?: string;
  /** The directory the brief tells the agent to stay in. */
  workspace?: string;
  /** Whether this request consumed a turn of the script. */
  scripted: boolean;
  /** The tool turn this request was answered with, and the id given to each of its calls (in order). */
  played?: Turn;
  callIds?: string[];
}

export type Args = Record<string, unknown>;
export type Dynamic<T> = T | ((request: ModelRequest) => T);

export interface ToolCallSpec {
  /** The agent's native tool name: exec_command, Bash, bash, run_shell_command… */
  name: string;
  args: Dynamic<Args>;
  /** Codex: a custom (freeform) tool call such as apply_patch, whose input is a string. */
  custom?: Dynamic<string>;
  /**
   * Codex (Responses): the `namespace` of a function call. codex 0.171.0 defers MCP tools and runs one only when the
   * call names the bare tool plus `namespace: "mcp__<server>"` (e.g. `{name: "ask_orchestrator", namespace:
   * "mcp__caesar"}`); a flat `mcp__caesar__ask_orchestrator` comes back as "unsupported call" (verified offline).
   */
  namespace?: string;
}

export type Turn =
  | { kind: 'tools'; calls: ToolCallSpec[]; text?: string; thinking?: string }
  | { kind: 'text'; text: Dynamic<string>; thinking?: string }
  /** An HTTP error; sticky by default: every later request gets it too (CLIs retry). */
  | { kind: 'error'; status: number; message?: string; sticky?: boolean }
  /** Anthropic only: the stream breaks mid-way once; the CLI's retry gets the same turn again. */
  | { kind: 'break-then'; turn: Turn }
  /**
   * Decided when the request arrives, from what the model was sent (a previous tool's result, say). While `repeat`
   * answers true the turn stays at the head of the script and plays again on the next model request (polling).
   */
  | { kind: 'dynamic'; play: (request: ModelRequest) => Turn; repeat?: (request: ModelRequest) => boolean };

export interface Answer {
  status: number;
  headers?: Record<string, string>;
  /** SSE frames, already formatted, or a JSON body. */
  sse?: string[];
  json?: unknown;
  /** Destroy the socket after the frames (a broken stream). */
  breakAfter?: boolean;
}

export interface Dialect {
  name: string;
  /** undefined: not a model request of this dialect (404). */
  classify(path: string, body: Record<string, unknown>): 'model' | 'side' | undefined;
  answer(turn: Turn | undefined, request: ModelRequest, seq: number): Answer;
  /** The id answer() gives the index-th tool call of the turn it plays as number seq. */
  callId(seq: number, index: number): string;
  sideAnswer(request: ModelRequest): Answer;
}

export interface FakeServer {
  url: string;
  port: number;
  requests: ModelRequest[];
  /** Turns not yet consumed. */
  remaining(): number;
  close(): Promise<void>;
}

export function resolve<T>(value: Dynamic<T>, request: ModelRequest): T {
  return typeof value === 'function' ? (value as (r: ModelRequest) => T)(request) : value;
}

export async function startServer(dialect: Dialect, script: Turn[]): Promise<FakeServer> {
  const turns = [...script];
  let sticky: Turn | undefined;
  let seq = 0;
  const requests: ModelRequest[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = req.url ?? '/';
      let body: Record<string, unknown> = {};
      try {
        const parsed: unknown = chunks.length ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : {};
        if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) body = parsed as Record<string, unknown>;
      } catch {
        // not JSON: still recorded, answered as a side request or 404
      }
      const kind = req.method === 'POST' ? dialect.classify(path, body) : undefined;
      const request = describe(path, body, kind === 'model');
      requests.push(request);
      if (!kind) return send(res, { status: 404, json: { error: { message: `fake ${dialect.name} server: no route ${req.method} ${path}` } } });
      if (kind === 'side') return send(res, dialect.sideAnswer(request));
      let turn = sticky ?? turns.shift();
      if (turn?.kind === 'dynamic') {
        if (turn.repeat?.(request)) turns.unshift(turn);
        turn = turn.play(request);
      }
      if (turn?.kind === 'break-then') {
        // Break this stream, and give the unwrapped turn to the retry.
        turns.unshift(turn.turn);
        const answer = dialect.answer(turn.turn, request, seq++);
        return send(res, { ...answer, sse: (answer.sse ?? []).slice(0, 2), breakAfter: true });
      }
      if (turn?.kind === 'error' && turn.sticky !== false) sticky = turn;
      if (turn?.kind === 'tools') {
        request.played = turn;
        request.callIds = turn.calls.map((_, i) => dialect.callId(seq, i));
      }
      send(res, dialect.answer(turn, request, seq++));
    });
  });
  await new Promise<void>((ok, fail) => {
    server.once('error', fail);
    server.listen(0, '127.0.0.1', () => ok());
  });
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    requests,
    remaining: () => turns.length,
    close: () =>
      new Promise<void>((ok) => {
        server.closeAllConnections();
        server.close(() => ok());
      }),
  };
}

function send(res: http.ServerResponse, answer: Answer): void {
  const headers: Record<string, string> = { ...(answer.headers ?? {}) };
  // Without it several CLIs back off for a minute or more between retries.
  if (answer.status >= 400) headers['retry-after-ms'] = '50';
  if (answer.sse) {
    res.writeHead(answer.status, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', ...headers });
    if (answer.breakAfter) {
      // Headers and the first frames reach the client, then the connection dies mid-stream.
      res.write(answer.sse.join(''), () => setTimeout(() => res.socket?.destroy(), 20));
      return;
    }
    for (const frame of answer.sse) res.write(frame);
    res.end();
    return;
  }
  res.writeHead(answer.status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(answer.json ?? {}));
}

function describe(path: string, body: Record<string, unknown>, scripted: boolean): ModelRequest {
  const strings: string[] = [];
  collectStrings(body, strings, 0);
  const text = strings.join('\n');
  const request: ModelRequest = { path, body, text, scripted };
  const task = /on task (\S+?)\. Work only/.exec(text);
  if (task) request.taskId = task[1];
  const report = /Write your report as JSON to this exact path[^\n]*\n\s*(\S+)/.exec(text) ?? /write the report as JSON to this exact path instead:\n\s*(\S+)/.exec(text);
  if (report) request.reportPath = report[1];
  const workspace = /Stay inside the workspace: (\S+?)(?: \(|\n|$)/.exec(text);
  if (workspace) request.workspace = workspace[1];
  return request;
}

function collectStrings(value: unknown, out: string[], depth: number): void {
  if (depth > 12) return;
  if (typeof value === 'string') out.push(value);
  else if (Array.isArray(value)) for (const v of value) collectStrings(v, out, depth + 1);
  else if (value && typeof value === 'object') for (const v of Object.values(value)) collectStrings(v, out, depth + 1);
}

export function sseFrame(data: unknown, event?: string): string {
  return `${event ? `event: ${event}\n` : ''}data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`;
}

/**
 * A caesar.report/v1 answer for the task the brief names, complete enough for the strict schema (every property
 * present, optional ones null) that claude validates its StructuredOutput against.
 */
export function reportFor(request: ModelRequest, fields: Record<string, unknown> = {}): Record<string, unknown> {
  const report: Record<string, unknown> = {
    protocol: 'caesar.report/v1',
    task_id: request.taskId ?? '',
    status: 'success',
    summary: 'Done by the fake model.',
    details: '',
    changes: [],
    commands_run: [],
    findings: [],
    questions: [],
    next_steps: [],
    artifacts: [],
    usage: null,
    ...fields,
  };
  report.commands_run = (report.commands_run as Record<string, unknown>[]).map((c) => ({ exit_code: null, note: '', ...c }));
  report.changes = (report.changes as Record<string, unknown>[]).map((c) => ({ summary: '', ...c }));
  return report;
}

export type PlayableTurn = Extract<Turn, { kind: 'tools' | 'text' }>;

/** The turn to play: a missing (script exhausted) or non-playable turn becomes a plain "Done." answer. */
export function playable(turn: Turn | undefined): PlayableTurn {
  if (turn && (turn.kind === 'tools' || turn.kind === 'text')) return turn;
  if (turn?.kind === 'break-then') return playable(turn.turn);
  return { kind: 'text', text: 'Done.' };
}

/** One tool's result as the CLI sent it back to the model, with the call it answers. */
export interface ToolOutput {
  callId: string;
  /** The tool as the model called it (Responses: `namespace/name` when the call had a namespace), when known. */
  name?: string;
  text: string;
  isError: boolean;
}

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((part) => (part && typeof part === 'object' && typeof (part as { text?: unknown }).text === 'string' ? (part as { text: string }).text : ''))
    .filter((t) => t)
    .join('\n');
}

/**
 * The tool results in a model request, oldest first: Anthropic `tool_result` blocks (paired by `tool_use_id` with the
 * assistant's `tool_use`) and Responses `function_call_output` / `custom_tool_call_output` items (paired by
 * `call_id`). What a scripted turn reads to act on an earlier tool's answer (a task id, a question id…).
 */
export function toolOutputs(request: ModelRequest): ToolOutput[] {
  const names = new Map<string, string>();
  const out: ToolOutput[] = [];
  const messages = Array.isArray(request.body.messages) ? (request.body.messages as Record<string, unknown>[]) : [];
  for (const message of messages) {
    if (!Array.isArray(message.content)) continue;
    for (const block of message.content as Record<string, unknown>[]) {
      if (block.type === 'tool_use' && typeof block.id === 'string' && typeof block.name === 'string') names.set(block.id, block.name);
      if (block.type === 'tool_result' && typeof block.tool_use_id === 'string') {
        const name = names.get(block.tool_use_id);
        out.push({ callId: block.tool_use_id, ...(name ? { name } : {}), text: textOf(block.content), isError: block.is_error === true });
      }
    }
  }
  const contents = Array.isArray(request.body.contents) ? (request.body.contents as Record<string, unknown>[]) : [];
  for (const content of contents) {
    for (const part of Array.isArray(content.parts) ? (content.parts as Record<string, unknown>[]) : []) {
      const response = part.functionResponse as { id?: unknown; name?: unknown; response?: unknown } | undefined;
      if (!response || typeof response.id !== 'string') continue;
      const text = JSON.stringify(response.response ?? null);
      const isError = !!response.response && typeof response.response === 'object' && 'error' in response.response;
      out.push({ callId: response.id, ...(typeof response.name === 'string' ? { name: response.name } : {}), text, isError });
    }
  }
  const input = Array.isArray(request.body.input) ? (request.body.input as Record<string, unknown>[]) : [];
  for (const item of input) {
    if ((item.type === 'function_call' || item.type === 'custom_tool_call') && typeof item.call_id === 'string' && typeof item.name === 'string') {
      names.set(item.call_id, typeof item.namespace === 'string' ? `${item.namespace}/${item.name}` : item.name);
    }
    if ((item.type === 'function_call_output' || item.type === 'custom_tool_call_output') && typeof item.call_id === 'string') {
      const name = names.get(item.call_id);
      out.push({ callId: item.call_id, ...(name ? { name } : {}), text: textOf(item.output), isError: false });
    }
  }
  return out;
}

/** The latest result of the tool whose name ends with `tool` (e.g. `caesar_await`), or undefined. */
export function lastToolOutput(request: ModelRequest, tool: string): ToolOutput | undefined {
  return toolOutputs(request)
    .filter((o) => o.name !== undefined && (o.name === tool || o.name.endsWith(`__${tool}`) || o.name.endsWith(`/${tool}`)))
    .at(-1);
}

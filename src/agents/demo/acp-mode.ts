/**
 * The demo agent's Agent Client Protocol mode (`demo-agent.js --acp`): the same model-free walk through a task, spoken
 * over ACP with the SDK's agent side, so the engine's ACP transport, its permission questions and the editor's
 * notification can be driven offline and fast. Per `session/prompt`:
 * - a thought, a message in two chunks, a plan, a `read` tool call (through the client's `fs/read_text_file`);
 * - the edit of its target file: announced as a pending `edit` tool call with its diff, then ONE
 *   `session/request_permission` (options allow always / allow / reject, ids unlike their kinds on purpose); allowed →
 *   written through the client's `fs/write_text_file`; rejected → the call fails and nothing is written. Asked in
 *   read-only tasks too, like an agent that does not know better: the client must refuse;
 * - test-only fault modes, on only with CAESAR_DEMO_FAULTS=1 (./demo-work.ts): with "escape" in the objective, a write
 *   outside its workspace through the client, which must refuse it (never tried when the client has no file support:
 *   the demo would then write it itself); with "crash", an exit (code 3) in the middle of the turn;
 * - an update of a kind no client knows (`demo_unknown_update`), which a client must survive;
 * - the report file written by itself (it lies outside the workspace), a usage update, `end_turn`.
 * `session/cancel` (or a `cancelled` permission outcome) ends the turn with `cancelled`.
 * It exits when its stdin closes, unless CAESAR_DEMO_ACP_LINGER=1.
 */
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { Readable, Writable } from 'node:stream';
import * as acp from '@agentclientprotocol/sdk';
import { editedText, faultsEnabled, noteFor, previousObjective, targetFile, type Task } from './demo-work';

export interface DemoHelpers {
  pause(): Promise<void>;
}

export function runAcp(helpers: DemoHelpers): void {
  let clientFs = { readTextFile: false, writeTextFile: false };
  const turns = new Map<string, AbortController>();
  const app = acp
    .agent({ name: 'caesar-demo' })
    .onRequest('initialize', ({ params }) => {
      clientFs = { readTextFile: params.clientCapabilities?.fs?.readTextFile === true, writeTextFile: params.clientCapabilities?.fs?.writeTextFile === true };
      return { protocolVersion: acp.PROTOCOL_VERSION, agentCapabilities: {}, authMethods: [], agentInfo: { name: 'caesar-demo', version: '1' } };
    })
    .onRequest('session/new', () => ({ sessionId: `demo-${process.pid}-${Date.now().toString(36)}` }))
    .onRequest('session/prompt', async ({ params, client }) => {
      const turn = new AbortController();
      turns.set(params.sessionId, turn);
      try {
        const brief = params.prompt.map((block) => (block.type === 'text' ? block.text : '')).join('');
        return await promptTurn(new Turn(client, params.sessionId, turn.signal, clientFs, helpers), brief);
      } finally {
        turns.delete(params.sessionId);
      }
    })
    .onNotification('session/cancel', ({ params }) => turns.get(params.sessionId)?.abort());
  const input = Readable.toWeb(process.stdin) as unknown as ReadableStream<Uint8Array>;
  const output = Writable.toWeb(process.stdout) as unknown as WritableStream<Uint8Array>;
  const connection = app.connect(acp.ndJsonStream(output, input));
  // CAESAR_DEMO_ACP_LINGER=1: stay alive once stdin closes, as three of the five real agents do — the client must
  // end the process group itself.
  if (process.env.CAESAR_DEMO_ACP_LINGER === '1') setInterval(() => undefined, 60_000);
  else void connection.closed.finally(() => process.exit(0));
}

class Cancelled extends Error {}

/** One prompt turn's means of speaking to the client. */
class Turn {
  constructor(
    readonly client: acp.AgentContext,
    readonly sessionId: string,
    readonly signal: AbortSignal,
    readonly fs: { readTextFile: boolean; writeTextFile: boolean },
    readonly helpers: DemoHelpers,
  ) {}

  async update(update: acp.SessionUpdate): Promise<void> {
    if (this.signal.aborted) throw new Cancelled();
    await this.client.notify('session/update', { sessionId: this.sessionId, update });
  }

  say(text: string): Promise<void> {
    return this.update({ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text } });
  }

  async pause(): Promise<void> {
    await this.helpers.pause();
    if (this.signal.aborted) throw new Cancelled();
  }
}

async function promptTurn(turn: Turn, brief: string): Promise<acp.PromptResponse> {
  try {
    return await walk(turn, brief);
  } catch (err) {
    if (err instanceof Cancelled || turn.signal.aborted) return { stopReason: 'cancelled' };
    throw err;
  }
}

async function walk(turn: Turn, brief: string): Promise<acp.PromptResponse> {
  const task = JSON.parse(readFileSync(process.env.CAESAR_TASK_FILE ?? '', 'utf8')) as Task;
  const file = targetFile(task.objective, task.context);
  await turn.update({ sessionUpdate: 'agent_thought_chunk', content: { type: 'text', text: `The objective is: ${task.objective.slice(0, 200)}.` } });
  await turn.say('Demo agent here, speaking ACP. ');
  await turn.say(`I received a brief of ${brief.length} characters for task ${task.id}.`);
  await turn.update({
    sessionUpdate: 'plan',
    entries: [
      { content: 'Look around the workspace', priority: 'medium', status: 'in_progress' },
      { content: `Write ${file}`, priority: 'high', status: 'pending' },
      { content: 'Write the report', priority: 'medium', status: 'pending' },
    ],
  });
  // An update no client knows: a client must keep it (raw.log) and go on.
  await turn.update({ sessionUpdate: 'demo_unknown_update', note: 'ignore me' } as unknown as acp.SessionUpdate);
  if (faultsEnabled() && /\bcrash\b/i.test(task.objective)) process.exit(3);
  await turn.pause();
  await readReadme(turn, task);
  const written = await editWithPermission(turn, task, file);
  if (faultsEnabled() && /\bescape\b/i.test(task.objective)) await tryEscape(turn, task);
  await turn.update({
    sessionUpdate: 'plan',
    entries: [
      { content: 'Look around the workspace', priority: 'medium', status: 'completed' },
      { content: `Write ${file}`, priority: 'high', status: 'completed' },
      { content: 'Write the report', priority: 'medium', status: 'completed' },
    ],
  });
  const summary = written ? `The demo agent wrote ${file} over ACP.` : `The demo agent did not write ${file}: permission was not given.`;
  writeReport(task, summary, written ? [{ path: file, action: written, summary: 'written by the demo agent over ACP' }] : []);
  await turn.update({ sessionUpdate: 'usage_update', used: 42, size: 1000, cost: { amount: 0, currency: 'USD' } });
  await turn.say(summary);
  return { stopReason: 'end_turn' };
}

async function readReadme(turn: Turn, task: Task): Promise<void> {
  const readme = path.join(task.workspace, 'README.md');
  await turn.update({ sessionUpdate: 'tool_call', toolCallId: 'demo-read', title: 'Read README.md', kind: 'read', status: 'in_progress', locations: [{ path: readme }] });
  let ok = true;
  if (turn.fs.readTextFile) {
    ok = await turn.client.request('fs/read_text_file', { sessionId: turn.sessionId, path: readme, line: 1, limit: 5 }).then(() => true, () => false);
  }
  await turn.update({ sessionUpdate: 'tool_call_update', toolCallId: 'demo-read', status: ok ? 'completed' : 'failed' });
}

/** The one permission request: allowed → the file is written through the client; anything else → not written. */
async function editWithPermission(turn: Turn, task: Task, file: string): Promise<'created' | 'modified' | false> {
  const target = path.join(task.workspace, file);
  const oldText = existsSync(target) ? readFileSync(target, 'utf8') : null;
  const newText = editedText(file, oldText, noteFor(task), previousObjective(task.context));
  if (newText === undefined) {
    await turn.say(`${file} is not a JSON object I could add a note to; I leave it alone.`);
    return false;
  }
  const toolCall: acp.ToolCallUpdate = {
    toolCallId: 'demo-edit',
    title: `Write ${file}`,
    kind: 'edit',
    status: 'pending',
    locations: [{ path: target }],
    content: [{ type: 'diff', path: target, oldText, newText }],
  };
  await turn.update({ sessionUpdate: 'tool_call', toolCallId: 'demo-edit', title: `Write ${file}`, kind: 'edit', status: 'pending', locations: toolCall.locations ?? [], content: toolCall.content ?? [] });
  const answer = await turn.client.request('session/request_permission', {
    sessionId: turn.sessionId,
    toolCall,
    options: [
      { optionId: 'always', name: 'Allow always', kind: 'allow_always' },
      { optionId: 'once', name: 'Allow', kind: 'allow_once' },
      { optionId: 'no', name: 'Reject', kind: 'reject_once' },
    ],
  });
  if (answer.outcome.outcome === 'cancelled') throw new Cancelled();
  if (answer.outcome.optionId === 'no') {
    await turn.update({ sessionUpdate: 'tool_call_update', toolCallId: 'demo-edit', status: 'failed', content: [{ type: 'content', content: { type: 'text', text: 'Permission rejected.' } }] });
    await turn.say(`Permission to write ${file} was rejected; I leave it alone.`);
    return false;
  }
  await turn.update({ sessionUpdate: 'tool_call_update', toolCallId: 'demo-edit', status: 'in_progress' });
  const wrote = await writeThroughClient(turn, target, newText, task.workspace);
  await turn.update({ sessionUpdate: 'tool_call_update', toolCallId: 'demo-edit', status: wrote === true ? 'completed' : 'failed' });
  if (wrote !== true) await turn.say(`The client refused the write of ${file}: ${wrote}`);
  return wrote === true ? (oldText === null ? 'created' : 'modified') : false;
}

/** A write outside the workspace (test-only), which the client must refuse; only ever asked of the client. */
async function tryEscape(turn: Turn, task: Task): Promise<void> {
  const outside = path.resolve(task.workspace, '..', `escape-${task.id}.txt`);
  if (!turn.fs.writeTextFile) {
    await turn.say('The client has no file support: I do not try a write outside the workspace.');
    return;
  }
  await turn.update({ sessionUpdate: 'tool_call', toolCallId: 'demo-escape', title: `Write ${outside}`, kind: 'edit', status: 'in_progress', locations: [{ path: outside }] });
  const wrote = await writeThroughClient(turn, outside, 'escaped\n', task.workspace);
  await turn.update({ sessionUpdate: 'tool_call_update', toolCallId: 'demo-escape', status: wrote === true ? 'completed' : 'failed' });
  await turn.say(wrote === true ? `I wrote ${outside}.` : `Writing outside the workspace was refused: ${wrote}`);
}

/** true, or the client's refusal as text. Without client file support, the demo writes itself (inside its workspace). */
async function writeThroughClient(turn: Turn, file: string, content: string, workspace: string): Promise<true | string> {
  if (!turn.fs.writeTextFile) {
    const relative = path.relative(workspace, file);
    if (relative.startsWith('..') || path.isAbsolute(relative)) return `${file} is outside the workspace`;
    writeFileSync(file, content);
    return true;
  }
  return turn.client.request('fs/write_text_file', { sessionId: turn.sessionId, path: file, content }).then(
    () => true as const,
    (err: unknown) => (err instanceof Error ? err.message : String(err)),
  );
}

function writeReport(task: Task, summary: string, changes: Array<{ path: string; action: string; summary: string }>): void {
  const temp = `${task.report_path}.${process.pid}.tmp`;
  const report = {
    protocol: 'caesar.report/v1',
    task_id: task.id,
    status: 'success',
    summary,
    details: 'Driven over the Agent Client Protocol.',
    changes,
    commands_run: [],
    findings: [],
    next_steps: [],
  };
  writeFileSync(temp, `${JSON.stringify(report, null, 2)}\n`);
  renameSync(temp, task.report_path);
}

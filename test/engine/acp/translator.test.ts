import { strict as assert } from 'node:assert';
import { readFileSync, readdirSync } from 'node:fs';
import * as path from 'node:path';
import { DOCUMENT_IDS, EventSchema, type EventDraft } from '../../../src/protocol';
import { AcpTranslator } from '../../../src/engine/acp/translator';
import type { TranslationSummary } from '../../../src/agents/types';

/**
 * The ACP update mapping replayed on the real transcripts (copied from ../shared/agents/captures/acp-*.jsonl: every
 * JSON-RPC line of five agents driven live, see ../shared/agents/ACP.md). Only the agent's lines go through the
 * translator, as in a run; the client's permission answers are replayed as the engine's broker reports them.
 */
const CAPTURES = path.join(__dirname, 'captures');
const WORKSPACE = '/home/dev/lab/ws';

interface Line {
  dir: string;
  msg?: Record<string, unknown>;
}

interface Replayed {
  events: EventDraft[];
  summary: TranslationSummary;
  stopReason?: string;
}

function captureNames(): string[] {
  return readdirSync(CAPTURES)
    .filter((n) => n.endsWith('.jsonl'))
    .map((n) => n.slice(0, -'.jsonl'.length))
    .sort();
}

function replay(name: string): Replayed {
  const lines = readFileSync(path.join(CAPTURES, `${name}.jsonl`), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Line);
  const translator = new AcpTranslator(WORKSPACE);
  const events: EventDraft[] = [];
  /** Permission requests by JSON-RPC id: their options and tool call, to replay the client's answer. */
  const asked = new Map<unknown, { toolCallId: string; options: Array<{ optionId: string; kind: string }> }>();
  for (const line of lines) {
    const msg = line.msg;
    if (!msg) continue;
    if (line.dir === 'agent->client') {
      if (msg.method === 'session/request_permission') {
        const params = msg.params as { toolCall: { toolCallId: string }; options: Array<{ optionId: string; kind: string }> };
        asked.set(msg.id, { toolCallId: params.toolCall.toolCallId, options: params.options });
      }
      events.push(...translator.line(JSON.stringify(msg)));
    } else if (asked.has(msg.id) && 'result' in msg) {
      const { toolCallId, options } = asked.get(msg.id)!;
      const optionId = (msg.result as { outcome: { optionId?: string } }).outcome.optionId;
      if (options.find((o) => o.optionId === optionId)?.kind.startsWith('reject')) translator.noteRejected(toolCallId);
    }
  }
  return { events, summary: translator.end(), stopReason: translator.stopped };
}

function tools(events: EventDraft[]): Array<Extract<EventDraft, { type: 'tool_use' }>> {
  return events.filter((e): e is Extract<EventDraft, { type: 'tool_use' }> => e.type === 'tool_use');
}

function messages(events: EventDraft[], type: 'message' | 'thinking' = 'message'): string[] {
  return events.filter((e): e is Extract<EventDraft, { type: 'message' }> => e.type === type).map((e) => e.text);
}

/** Each id started once and first, ended at most once. */
function assertPaired(name: string, events: EventDraft[]): void {
  const state = new Map<string, 'open' | 'closed'>();
  for (const event of tools(events)) {
    assert.ok(event.id, `${name}: a tool event without id`);
    if (event.status === 'started') {
      assert.equal(state.get(event.id!), undefined, `${name}: ${event.id} started twice`);
      state.set(event.id!, 'open');
    } else {
      assert.equal(state.get(event.id!), 'open', `${name}: ${event.id} ended while ${state.get(event.id!) ?? 'never started'}`);
      state.set(event.id!, 'closed');
    }
  }
}

/** The tool calls a transcript names anywhere (tool_call, tool_call_update, permission request). */
function announcedIds(name: string): string[] {
  const ids = new Set<string>();
  for (const raw of readFileSync(path.join(CAPTURES, `${name}.jsonl`), 'utf8').split('\n').filter(Boolean)) {
    const msg = (JSON.parse(raw) as Line).msg;
    if (!msg || (JSON.parse(raw) as Line).dir !== 'agent->client') continue;
    const params = (msg.params ?? {}) as { update?: { toolCallId?: string }; toolCall?: { toolCallId?: string } };
    const id = params.update?.toolCallId ?? params.toolCall?.toolCallId;
    if (id) ids.add(id);
  }
  return [...ids];
}

describe('ACP translator on the real transcripts (test/engine/acp/captures)', () => {
  const names = captureNames();

  it('has transcripts of all five agents', () => {
    for (const agent of ['gemini', 'opencode', 'copilot', 'claude', 'codex']) {
      assert.ok(names.some((n) => n.startsWith(`acp-${agent}-`)), agent);
    }
  });

  for (const name of names) {
    it(`${name}: valid events, every announced tool call started once and paired, the turn's end seen`, () => {
      const { events, stopReason } = replay(name);
      for (const draft of events) {
        const checked = EventSchema.safeParse({ ...draft, protocol: DOCUMENT_IDS.event, seq: 0, at: new Date(0).toISOString(), task_id: 't' });
        assert.ok(checked.success, `${name}: ${JSON.stringify(draft)}`);
      }
      assertPaired(name, events);
      const started = tools(events).filter((e) => e.status === 'started').map((e) => e.id);
      assert.deepEqual(started.sort(), announcedIds(name).sort(), `${name}: started ids`);
      assert.ok(stopReason, `${name}: the prompt's stop reason`);
      for (const text of [...messages(events), ...messages(events, 'thinking')]) assert.ok(text.trim(), `${name}: hollow text`);
    });
  }

  it('claude allow: chunks merged into two messages, the command as summary, paired by toolCallId, usage and cost', () => {
    const { events, summary } = replay('acp-claude-allow');
    assert.deepEqual(messages(events), ['I will create the file with a shell command.', 'Done: hello.txt was handled.']);
    assert.deepEqual(
      tools(events).map((e) => [e.id, e.tool, e.input_summary, e.status]),
      [
        ['toolu_fake0_0', 'execute', 'printf hi > hello.txt', 'started'],
        ['toolu_fake0_0', 'execute', 'printf hi > hello.txt', 'succeeded'],
      ],
    );
    assert.deepEqual(summary.usage, { input_tokens: 200, output_tokens: 40, cost_usd: 0.0012000000000000001 });
    assert.equal(summary.finalText, 'Done: hello.txt was handled.');
    assert.equal(summary.nativeFailure, undefined);
  });

  it('claude write: an edit with its path, and the file it created once it completed', () => {
    const { events } = replay('acp-claude-write');
    const started = tools(events).find((e) => e.status === 'started');
    assert.equal(started?.tool, 'edit');
    assert.match(started?.input_summary ?? '', /hello\.txt/);
    assert.deepEqual(tools(events).map((e) => e.status), ['started', 'succeeded']);
  });

  it('copilot write: the diff of a completed edit becomes file_changed (created), relative to the workspace', () => {
    const { events } = replay('acp-copilot-write');
    assert.deepEqual(events.filter((e) => e.type === 'file_changed'), [{ type: 'file_changed', path: 'hello.txt', action: 'created' }]);
  });

  for (const agent of ['claude', 'copilot', 'opencode', 'gemini', 'codex']) {
    it(`${agent} reject: the tool call ends failed, whether the agent says so or not`, () => {
      const name = agent === 'codex' ? 'acp-codex-untrusted-reject' : `acp-${agent}-reject`;
      const { events } = replay(name);
      assert.deepEqual(tools(events).map((e) => e.status), ['started', 'failed'], name);
    });
    it(`${agent} allow: the tool call succeeds`, () => {
      const name = agent === 'codex' ? 'acp-codex-untrusted-allow' : `acp-${agent}-allow`;
      const { events } = replay(name);
      assert.deepEqual(tools(events).map((e) => e.status), ['started', 'succeeded'], name);
      assert.deepEqual(messages(events), ['I will create the file with a shell command.', 'Done: hello.txt was handled.'], name);
    });
  }

  it('opencode: the held pending call starts with the command, not "bash"', () => {
    const { events, summary } = replay('acp-opencode-allow');
    assert.equal(tools(events)[0]?.input_summary, 'printf hi > hello.txt');
    assert.deepEqual(summary.usage, { input_tokens: 100, output_tokens: 20 });
  });

  it('gemini: the call learned from the permission request is the one its update closes; tokens from _meta.quota', () => {
    const { events, summary } = replay('acp-gemini-allow');
    assert.deepEqual(tools(events).map((e) => [e.id, e.input_summary]), [
      ['run_shell_command__fc_0_0', 'printf hi > hello.txt'],
      ['run_shell_command__fc_0_0', 'printf hi > hello.txt'],
    ]);
    assert.deepEqual(summary.usage, { input_tokens: 400, output_tokens: 40 });
  });

  it('copilot: the shell command, not the model\'s description, is the summary; cumulative prompt usage', () => {
    const { events, summary } = replay('acp-copilot-allow');
    assert.equal(tools(events)[0]?.input_summary, 'printf hi > hello.txt');
    assert.deepEqual(summary.usage, { input_tokens: 200, output_tokens: 40 });
  });

  it('codex reject: stop reason "cancelled" is a failure of the turn; codex reports no tokens', () => {
    const { summary, stopReason } = replay('acp-codex-untrusted-reject');
    assert.equal(stopReason, 'cancelled');
    assert.match(summary.nativeFailure ?? '', /cancelled/);
    assert.equal(summary.usage, undefined);
  });

  it('end_turn is no failure', () => {
    assert.equal(replay('acp-codex-untrusted-allow').summary.nativeFailure, undefined);
  });
});

describe('ACP translator on synthetic updates', () => {
  const line = (update: Record<string, unknown>) => JSON.stringify({ jsonrpc: '2.0', method: 'session/update', params: { sessionId: 's', update } });
  const ended = (stopReason: string) => JSON.stringify({ jsonrpc: '2.0', id: 9, result: { stopReason } });

  it('a plan becomes one progress event with its entries and the share done', () => {
    const t = new AcpTranslator('/w');
    const out = t.line(line({ sessionUpdate: 'plan', entries: [
      { content: 'Read', priority: 'high', status: 'completed' },
      { content: 'Write', priority: 'high', status: 'in_progress' },
      { content: 'Test', priority: 'low', status: 'pending' },
      { content: 'Ship', priority: 'low', status: 'completed' },
    ] }));
    assert.deepEqual(out, [{ type: 'progress', message: 'Plan:\n[x] Read\n[~] Write\n[ ] Test\n[x] Ship', pct: 50 }]);
  });

  it('thought chunks merge into one thinking event, cut by a message; a new messageId starts a new message', () => {
    const t = new AcpTranslator('/w');
    const out = [
      ...t.line(line({ sessionUpdate: 'agent_thought_chunk', content: { type: 'text', text: 'Let me ' } })),
      ...t.line(line({ sessionUpdate: 'agent_thought_chunk', content: { type: 'text', text: 'think.' } })),
      ...t.line(line({ sessionUpdate: 'agent_message_chunk', messageId: 'a', content: { type: 'text', text: 'One' } })),
      ...t.line(line({ sessionUpdate: 'usage_update', used: 1, size: 2 })),
      ...t.line(line({ sessionUpdate: 'agent_message_chunk', messageId: 'a', content: { type: 'text', text: ' two.' } })),
      ...t.line(line({ sessionUpdate: 'agent_message_chunk', messageId: 'b', content: { type: 'text', text: 'Three.' } })),
      ...t.line(ended('end_turn')),
    ];
    assert.deepEqual(out, [
      { type: 'thinking', text: 'Let me think.' },
      { type: 'message', text: 'One two.' },
      { type: 'message', text: 'Three.' },
    ]);
  });

  it('unknown updates, broken lines and foreign stop reasons never throw', () => {
    const t = new AcpTranslator('/w');
    assert.deepEqual(t.line(line({ sessionUpdate: 'something_new', x: 1 })), []);
    assert.deepEqual(t.line('not json'), []);
    assert.deepEqual(t.line('{"method":"session/update","params":null}'), []);
    assert.deepEqual(t.line(line({ sessionUpdate: 'tool_call_update', status: 'completed' })), []);
    t.line(ended('max_tokens'));
    assert.match(t.end().nativeFailure ?? '', /token limit/);
    const refused = new AcpTranslator('/w');
    refused.line(ended('refusal'));
    assert.match(refused.end().nativeFailure ?? '', /refused/);
  });

  it('an end for a call never announced gets its start first; a held call is started at the turn\'s end', () => {
    const t = new AcpTranslator('/w');
    const out = [
      ...t.line(line({ sessionUpdate: 'tool_call_update', toolCallId: 'x', status: 'failed', kind: 'read', title: 'cat a' })),
      ...t.line(line({ sessionUpdate: 'tool_call', toolCallId: 'y', status: 'pending', kind: 'fetch', title: 'https://example.invalid' })),
      ...t.line(ended('end_turn')),
    ];
    assert.deepEqual(out.map((e) => e.type === 'tool_use' && [e.id, e.status]), [['x', 'started'], ['x', 'failed'], ['y', 'started']]);
  });
});

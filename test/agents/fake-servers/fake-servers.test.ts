import * as assert from 'node:assert/strict';
import * as http from 'node:http';
import { startAnthropicServer, startChatServer, startGeminiServer, startResponsesServer, reportFor, lastToolOutput, toolOutputs, type FakeServer, type Turn } from './index';

/** The fake model servers themselves: framing, scripting, errors, side calls and the broken-stream retry. */

interface Reply {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
  broken: boolean;
}

function post(server: FakeServer, path: string, body: unknown): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = http.request(`${server.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' } }, (res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString('utf8')));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text, broken: false }));
      res.on('error', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text, broken: true }));
      res.on('aborted', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text, broken: true }));
    });
    req.on('error', (err: NodeJS.ErrnoException) => (err.code === 'ECONNRESET' ? resolve({ status: 0, headers: {}, body: '', broken: true }) : reject(err)));
    req.end(JSON.stringify(body));
  });
}

/** The JSON payloads of an SSE body, with their event names when given. */
function frames(body: string): { event?: string; data: unknown }[] {
  return body
    .split(/\r?\n\r?\n/)
    .filter((f) => f.trim())
    .map((frame) => {
      const event = /^event: (.+)$/m.exec(frame)?.[1];
      const data = /^data: (.+)$/m.exec(frame)?.[1] ?? '';
      return { ...(event ? { event } : {}), data: data === '[DONE]' ? data : JSON.parse(data) };
    });
}

const BRIEF = 'You are a delegated sub-agent working inside an orchestrator, on task t_abc. Work only toward the objective below.\n' +
  'Write your report as JSON to this exact path (also given in $CAESAR_REPORT_PATH):\n    /tmp/x/report.json\n' +
  'Stay inside the workspace: /tmp/ws (the report file under "Reporting" is the one exception).';
const tools = [{ name: 't' }];

describe('fake model servers', () => {
  const open: FakeServer[] = [];
  afterEach(async () => {
    while (open.length) await open.pop()!.close();
  });
  const track = (s: FakeServer) => (open.push(s), s);

  it('listen on 127.0.0.1 on a free port and record what the model was asked, with the brief facts', async () => {
    const server = track(await startAnthropicServer([{ kind: 'text', text: (r) => `task ${r.taskId}` }]));
    assert.match(server.url, /^http:\/\/127\.0\.0\.1:\d+$/);
    const reply = await post(server, '/v1/messages', { stream: true, tools, messages: [{ role: 'user', content: BRIEF }] });
    assert.equal(reply.status, 200);
    const [request] = server.requests;
    assert.equal(request?.taskId, 't_abc');
    assert.equal(request?.reportPath, '/tmp/x/report.json');
    assert.equal(request?.workspace, '/tmp/ws');
    assert.ok(reply.body.includes('task t_abc'));
  });

  describe('Anthropic Messages', () => {
    it('streams thinking, text and tool_use blocks as SSE events, then stop_reason tool_use', async () => {
      const script: Turn[] = [{ kind: 'tools', thinking: 'hmm', text: 'Running it.', calls: [{ name: 'Bash', args: { command: 'ls' } }] }];
      const server = track(await startAnthropicServer(script));
      const reply = await post(server, '/v1/messages', { stream: true, tools, messages: [] });
      const events = frames(reply.body);
      assert.deepEqual(events.map((f) => f.event), [
        'message_start',
        'content_block_start', 'content_block_delta', 'content_block_delta', 'content_block_stop',
        'content_block_start', 'content_block_delta', 'content_block_stop',
        'content_block_start', 'content_block_delta', 'content_block_stop',
        'message_delta', 'message_stop',
      ]);
      const toolStart = events[8]!.data as { content_block: { type: string; name: string } };
      assert.deepEqual([toolStart.content_block.type, toolStart.content_block.name], ['tool_use', 'Bash']);
      assert.equal((events[9]!.data as { delta: { partial_json: string } }).delta.partial_json, '{"command":"ls"}');
      assert.equal((events[11]!.data as { delta: { stop_reason: string } }).delta.stop_reason, 'tool_use');
    });

    it('answers plain JSON when stream is false, and a broken stream is retried with the same turn', async () => {
      const server = track(await startAnthropicServer([{ kind: 'break-then', turn: { kind: 'text', text: 'after the break' } }]));
      const first = await post(server, '/v1/messages', { stream: true, tools, messages: [] });
      assert.ok(first.broken || !first.body.includes('message_stop'), 'the first stream must break');
      const retry = await post(server, '/v1/messages', { stream: false, tools, messages: [] });
      const message = JSON.parse(retry.body) as { content: { type: string; text: string }[]; stop_reason: string };
      assert.deepEqual(message.content, [{ type: 'text', text: 'after the break' }]);
      assert.equal(message.stop_reason, 'end_turn');
      assert.equal(server.remaining(), 0);
    });

    it('HTTP errors are sticky (CLIs retry) and carry the vendor error shape and a short retry-after', async () => {
      const server = track(await startAnthropicServer([{ kind: 'error', status: 401 }]));
      for (let i = 0; i < 2; i++) {
        const reply = await post(server, '/v1/messages', { stream: true, tools, messages: [] });
        assert.equal(reply.status, 401);
        assert.equal(reply.headers['retry-after-ms'], '50');
        assert.equal((JSON.parse(reply.body) as { error: { type: string } }).error.type, 'authentication_error');
      }
    });

    it('a request without tools is a side call: answered, the script untouched', async () => {
      const server = track(await startAnthropicServer([{ kind: 'text', text: 'scripted' }]));
      const side = await post(server, '/v1/messages', { stream: false, messages: [] });
      assert.equal((JSON.parse(side.body) as { content: { text: string }[] }).content[0]?.text, 'Fake side answer');
      assert.equal(server.remaining(), 1);
      assert.equal(server.requests[0]?.scripted, false);
    });
  });

  describe('OpenAI Responses', () => {
    it('streams output items (function_call, custom_tool_call, message) then response.completed with usage', async () => {
      const server = track(await startResponsesServer([
        { kind: 'tools', calls: [{ name: 'exec_command', args: { cmd: 'ls' } }, { name: 'apply_patch', args: {}, custom: '*** Begin Patch\n*** End Patch\n' }] },
        { kind: 'text', text: 'Done here' },
      ]));
      const first = frames((await post(server, '/v1/responses', {})).body);
      const items = first.filter((f) => f.event === 'response.output_item.done').map((f) => (f.data as { item: { type: string; name?: string; arguments?: string } }).item);
      assert.deepEqual(items.map((i) => [i.type, i.name]), [['function_call', 'exec_command'], ['custom_tool_call', 'apply_patch']]);
      assert.equal(items[0]?.arguments, '{"cmd":"ls"}');
      assert.equal(first.at(-1)?.event, 'response.completed');
      const second = frames((await post(server, '/v1/responses', {})).body);
      const message = (second[1]!.data as { item: { content: { text: string }[] } }).item;
      assert.equal(message.content[0]?.text, 'Done here');
    });

    it('errors in the OpenAI shape', async () => {
      const server = track(await startResponsesServer([{ kind: 'error', status: 500 }]));
      const reply = await post(server, '/v1/responses', {});
      assert.equal(reply.status, 500);
      assert.equal((JSON.parse(reply.body) as { error: { type: string } }).error.type, 'server_error');
    });
  });

  describe('OpenAI Chat Completions', () => {
    it('streams tool_calls chunks, finish_reason tool_calls, a usage chunk and [DONE]; the title call is a side call', async () => {
      const server = track(await startChatServer([{ kind: 'tools', calls: [{ name: 'bash', args: { command: 'ls' } }] }]));
      const title = frames((await post(server, '/v1/chat/completions', { stream: true, messages: [] })).body);
      assert.equal((title[0]!.data as { choices: { delta: { content: string } }[] }).choices[0]?.delta.content, 'Fake title');
      assert.equal(server.remaining(), 1);
      const chunks = frames((await post(server, '/v1/chat/completions', { stream: true, tools, messages: [] })).body);
      const call = (chunks[0]!.data as { choices: { delta: { tool_calls: { function: { name: string } }[] } }[] }).choices[0]?.delta.tool_calls[0];
      assert.equal(call?.function.name, 'bash');
      assert.equal((chunks[1]!.data as { choices: { finish_reason: string }[] }).choices[0]?.finish_reason, 'tool_calls');
      assert.deepEqual((chunks[2]!.data as { usage: object }).usage, { prompt_tokens: 100, completion_tokens: 20, total_tokens: 120 });
      assert.equal(chunks.at(-1)?.data, '[DONE]');
    });
  });

  describe('Gemini streamGenerateContent', () => {
    it('frames data lines with CRLF, function calls with ids, usage on the last chunk', async () => {
      const server = track(await startGeminiServer([{ kind: 'tools', text: 'On it.', calls: [{ name: 'run_shell_command', args: { command: 'ls' } }] }]));
      const reply = await post(server, '/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse', { contents: [] });
      assert.ok(reply.body.includes('\r\n\r\n'));
      const chunks = frames(reply.body).map((f) => f.data as { candidates: { content: { parts: Record<string, unknown>[] }; finishReason?: string }[]; usageMetadata?: object });
      assert.deepEqual(chunks[0]?.candidates[0]?.content.parts, [{ text: 'On it.' }]);
      assert.deepEqual(chunks[1]?.candidates[0]?.content.parts, [{ functionCall: { id: 'fc_0_0', name: 'run_shell_command', args: { command: 'ls' } } }]);
      assert.equal(chunks[1]?.candidates[0]?.finishReason, 'STOP');
      assert.ok(chunks[1]?.usageMetadata);
    });

    it('a non-streaming generateContent is a side call; errors carry the Google status name', async () => {
      const server = track(await startGeminiServer([{ kind: 'error', status: 401 }]));
      const side = await post(server, '/v1beta/models/gemini-2.5-flash:generateContent', {});
      assert.equal(side.status, 200);
      const reply = await post(server, '/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse', {});
      assert.equal(reply.status, 401);
      assert.equal((JSON.parse(reply.body) as { error: { status: string } }).error.status, 'UNAUTHENTICATED');
    });
  });

  it('unknown routes are 404, never a crash', async () => {
    const server = track(await startResponsesServer([]));
    assert.equal((await post(server, '/v1/other', {})).status, 404);
  });

  describe('multi-turn scenarios (MCP tool chains)', () => {
    it('a Responses function call can carry a namespace (how codex runs a deferred MCP tool)', async () => {
      const server = track(await startResponsesServer([{ kind: 'tools', calls: [{ name: 'ask_orchestrator', namespace: 'mcp__caesar', args: { question: 'Which?' } }] }]));
      const items = frames((await post(server, '/v1/responses', {})).body)
        .filter((f) => f.event === 'response.output_item.done')
        .map((f) => (f.data as { item: Record<string, unknown> }).item);
      assert.deepEqual([items[0]?.type, items[0]?.name, items[0]?.namespace, items[0]?.arguments], ['function_call', 'ask_orchestrator', 'mcp__caesar', '{"question":"Which?"}']);
      // Without a namespace the item has no such key at all.
      const plain = track(await startResponsesServer([{ kind: 'tools', calls: [{ name: 'exec_command', args: {} }] }]));
      const item = (frames((await post(plain, '/v1/responses', {})).body)[1]!.data as { item: Record<string, unknown> }).item;
      assert.equal('namespace' in item, false);
    });

    it('toolOutputs pairs Anthropic tool_result blocks and Responses outputs with the calls they answer', () => {
      const anthropic = toolOutputs({
        path: '/v1/messages',
        scripted: true,
        text: '',
        body: {
          messages: [
            { role: 'user', content: 'go' },
            { role: 'assistant', content: [{ type: 'tool_use', id: 'tu_1', name: 'mcp__caesar__caesar_delegate', input: {} }] },
            { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'tu_1', content: [{ type: 'text', text: '{"task_id":"t_1"}' }] }] },
            { role: 'assistant', content: [{ type: 'tool_use', id: 'tu_2', name: 'mcp__caesar__caesar_await', input: {} }] },
            { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'tu_2', content: 'boom', is_error: true }] },
          ],
        },
      });
      assert.deepEqual(anthropic, [
        { callId: 'tu_1', name: 'mcp__caesar__caesar_delegate', text: '{"task_id":"t_1"}', isError: false },
        { callId: 'tu_2', name: 'mcp__caesar__caesar_await', text: 'boom', isError: true },
      ]);
      const responses = {
        path: '/v1/responses',
        scripted: true,
        text: '',
        body: {
          input: [
            { type: 'function_call', call_id: 'c1', name: 'ask_orchestrator', namespace: 'mcp__caesar', arguments: '{}' },
            // codex 0.171.0 sends an MCP result as an array of input_text parts (a wall-time line first).
            { type: 'function_call_output', call_id: 'c1', output: [{ type: 'input_text', text: 'Wall time: 0.01 seconds\nOutput:' }, { type: 'input_text', text: 'Blue.' }] },
            { type: 'custom_tool_call', call_id: 'c2', name: 'apply_patch', input: '' },
            { type: 'custom_tool_call_output', call_id: 'c2', output: 'Success.' },
          ],
        },
      };
      assert.deepEqual(toolOutputs(responses), [
        { callId: 'c1', name: 'mcp__caesar/ask_orchestrator', text: 'Wall time: 0.01 seconds\nOutput:\nBlue.', isError: false },
        { callId: 'c2', name: 'apply_patch', text: 'Success.', isError: false },
      ]);
      assert.equal(lastToolOutput(responses, 'ask_orchestrator')?.callId, 'c1');
      assert.equal(lastToolOutput(responses, 'submit_report'), undefined);
    });

    it('a dynamic turn is decided from the request, and repeats while asked to (polling)', async () => {
      let polls = 0;
      const script: Turn[] = [
        {
          kind: 'dynamic',
          repeat: (r) => !r.text.includes('ready'),
          play: (r) => (r.text.includes('ready') ? { kind: 'text', text: 'saw it' } : { kind: 'tools', calls: [{ name: 'poll', args: { n: ++polls } }] }),
        },
        { kind: 'text', text: 'after' },
      ];
      const server = track(await startAnthropicServer(script));
      const ask = async (content: string) => JSON.parse((await post(server, '/v1/messages', { stream: false, tools, messages: [{ role: 'user', content }] })).body) as { content: Record<string, unknown>[]; stop_reason: string };
      const first = await ask('not yet');
      assert.deepEqual([first.stop_reason, first.content[0]?.name, first.content[0]?.input], ['tool_use', 'poll', { n: 1 }]);
      assert.equal(server.remaining(), 2, 'a repeating turn stays in the script');
      assert.deepEqual((await ask('still not')).content[0]?.input, { n: 2 });
      assert.equal((await ask('ready now')).content[0]?.text, 'saw it');
      assert.equal(server.remaining(), 1);
      assert.equal((await ask('next')).content[0]?.text, 'after');
    });
  });

  it('reportFor fills every property the strict schema requires', () => {
    const report = reportFor({ path: '/', body: {}, text: '', scripted: true, taskId: 't_1' }, { commands_run: [{ command: 'ls' }] });
    assert.deepEqual(Object.keys(report).sort(), ['artifacts', 'changes', 'commands_run', 'details', 'findings', 'next_steps', 'protocol', 'questions', 'status', 'summary', 'task_id', 'usage']);
    assert.deepEqual(report.commands_run, [{ exit_code: null, note: '', command: 'ls' }]);
  });
});

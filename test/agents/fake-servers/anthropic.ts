import { resolve, sseFrame, startServer, type Answer, type Dialect, type FakeServer, type ModelRequest, type Turn } from './core';

/**
 * Anthropic Messages (POST /v1/messages), as claude and copilot (COPILOT_PROVIDER_TYPE=anthropic) call it: SSE when
 * `stream` is true, plain JSON otherwise — claude retries a broken stream with `stream: false`.
 */
const ERROR_TYPES: Record<number, string> = { 401: 'authentication_error', 403: 'permission_error', 429: 'rate_limit_error', 500: 'api_error', 529: 'overloaded_error' };

type Block = Record<string, unknown>;

function blocksOf(turn: Turn | undefined, request: ModelRequest, seq: number): { blocks: Block[]; stop: string } {
  if (!turn || turn.kind === 'error' || turn.kind === 'break-then' || turn.kind === 'dynamic') return { blocks: [{ type: 'text', text: 'Done.' }], stop: 'end_turn' };
  const blocks: Block[] = [];
  if (turn.thinking) blocks.push({ type: 'thinking', thinking: turn.thinking, signature: 'ZmFrZS1zaWduYXR1cmU=' });
  if (turn.kind === 'text') {
    blocks.push({ type: 'text', text: resolve(turn.text, request) });
    return { blocks, stop: 'end_turn' };
  }
  if (turn.text) blocks.push({ type: 'text', text: turn.text });
  turn.calls.forEach((call, i) => blocks.push({ type: 'tool_use', id: anthropicDialect.callId(seq, i), name: call.name, input: resolve(call.args, request) }));
  return { blocks, stop: 'tool_use' };
}

export const anthropicDialect: Dialect = {
  name: 'anthropic',
  callId: (seq, index) => `toolu_fake${seq}_${index}`,
  classify(path, body) {
    if (path.startsWith('/v1/messages/count_tokens')) return 'side';
    if (!path.startsWith('/v1/messages')) return undefined;
    return Array.isArray(body.tools) && body.tools.length ? 'model' : 'side';
  },
  answer(turn, request, seq): Answer {
    if (turn?.kind === 'error') {
      const message = turn.message ?? `fake ${turn.status} from the test server`;
      return { status: turn.status, json: { type: 'error', error: { type: ERROR_TYPES[turn.status] ?? 'api_error', message } } };
    }
    const model = typeof request.body.model === 'string' ? request.body.model : 'claude-fake';
    const { blocks, stop } = blocksOf(turn, request, seq);
    const id = `msg_fake${seq}`;
    const usage = { input_tokens: 100, output_tokens: 20, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
    if (request.body.stream !== true) {
      return { status: 200, json: { id, type: 'message', role: 'assistant', model, content: blocks, stop_reason: stop, stop_sequence: null, usage } };
    }
    const sse = [
      sseFrame({ type: 'message_start', message: { id, type: 'message', role: 'assistant', model, content: [], stop_reason: null, stop_sequence: null, usage: { ...usage, output_tokens: 1 } } }, 'message_start'),
    ];
    blocks.forEach((block, index) => {
      if (block.type === 'thinking') {
        sse.push(sseFrame({ type: 'content_block_start', index, content_block: { type: 'thinking', thinking: '', signature: '' } }, 'content_block_start'));
        sse.push(sseFrame({ type: 'content_block_delta', index, delta: { type: 'thinking_delta', thinking: block.thinking } }, 'content_block_delta'));
        sse.push(sseFrame({ type: 'content_block_delta', index, delta: { type: 'signature_delta', signature: block.signature } }, 'content_block_delta'));
      } else if (block.type === 'text') {
        sse.push(sseFrame({ type: 'content_block_start', index, content_block: { type: 'text', text: '' } }, 'content_block_start'));
        sse.push(sseFrame({ type: 'content_block_delta', index, delta: { type: 'text_delta', text: block.text } }, 'content_block_delta'));
      } else {
        sse.push(sseFrame({ type: 'content_block_start', index, content_block: { type: 'tool_use', id: block.id, name: block.name, input: {} } }, 'content_block_start'));
        sse.push(sseFrame({ type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: JSON.stringify(block.input) } }, 'content_block_delta'));
      }
      sse.push(sseFrame({ type: 'content_block_stop', index }, 'content_block_stop'));
    });
    sse.push(sseFrame({ type: 'message_delta', delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: usage.output_tokens } }, 'message_delta'));
    sse.push(sseFrame({ type: 'message_stop' }, 'message_stop'));
    return { status: 200, sse };
  },
  sideAnswer(request): Answer {
    if (request.path.startsWith('/v1/messages/count_tokens')) return { status: 200, json: { input_tokens: 10 } };
    const side: Turn = { kind: 'text', text: 'Fake side answer' };
    return anthropicDialect.answer(side, request, 9999);
  },
};

export function startAnthropicServer(script: Turn[]): Promise<FakeServer> {
  return startServer(anthropicDialect, script);
}

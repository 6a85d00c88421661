import { playable, resolve, sseFrame, startServer, type Answer, type Dialect, type FakeServer, type ModelRequest, type Turn } from './core';

/**
 * OpenAI Chat Completions (POST /v1/chat/completions, SSE), as opencode calls an `@ai-sdk/openai-compatible`
 * provider. A request without tools is opencode's title call: answered, not scripted.
 */
export const chatDialect: Dialect = {
  callId: (seq, index) => `call_${seq}_${index}`,
  name: 'openai-chat',
  classify(path, body) {
    if (!path.startsWith('/v1/chat/completions')) return undefined;
    return Array.isArray(body.tools) && body.tools.length ? 'model' : 'side';
  },
  answer(turn, request, seq): Answer {
    if (turn?.kind === 'error') {
      const message = turn.message ?? (turn.status === 401 ? 'Incorrect API key provided (fake)' : `fake ${turn.status} from the test server`);
      return { status: turn.status, json: { error: { message, type: turn.status === 401 ? 'invalid_request_error' : 'server_error', code: turn.status === 401 ? 'invalid_api_key' : null } } };
    }
    const effective = playable(turn);
    const model = typeof request.body.model === 'string' ? request.body.model : 'fake-model';
    const chunk = (delta: Record<string, unknown>, finish: string | null) => ({
      id: `chatcmpl-${seq}`, object: 'chat.completion.chunk', created: Math.floor(Date.now() / 1000), model,
      choices: [{ index: 0, delta, finish_reason: finish }],
    });
    const sse: string[] = [];
    if (effective.thinking) sse.push(sseFrame(chunk({ role: 'assistant', reasoning_content: effective.thinking }, null)));
    let finish = 'stop';
    if (effective.kind === 'text') sse.push(sseFrame(chunk({ role: 'assistant', content: resolve(effective.text, request) }, null)));
    else {
      if (effective.text) sse.push(sseFrame(chunk({ role: 'assistant', content: effective.text }, null)));
      const toolCalls = effective.calls.map((call, index) => ({
        index, id: chatDialect.callId(seq, index), type: 'function', function: { name: call.name, arguments: JSON.stringify(resolve(call.args, request)) },
      }));
      sse.push(sseFrame(chunk({ role: 'assistant', tool_calls: toolCalls }, null)));
      finish = 'tool_calls';
    }
    sse.push(sseFrame(chunk({}, finish)));
    sse.push(sseFrame({ id: `chatcmpl-${seq}`, object: 'chat.completion.chunk', created: Math.floor(Date.now() / 1000), model, choices: [], usage: { prompt_tokens: 100, completion_tokens: 20, total_tokens: 120 } }));
    sse.push('data: [DONE]\n\n');
    return { status: 200, sse };
  },
  sideAnswer(request: ModelRequest): Answer {
    return chatDialect.answer({ kind: 'text', text: 'Fake title' }, request, 9999);
  },
};

export function startChatServer(script: Turn[]): Promise<FakeServer> {
  return startServer(chatDialect, script);
}

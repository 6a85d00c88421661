import { playable, resolve, sseFrame, startServer, type Answer, type Dialect, type FakeServer, type Turn } from './core';

/** OpenAI Responses (POST /v1/responses, SSE), as codex calls it with `wire_api = "responses"`. */
export const responsesDialect: Dialect = {
  callId: (seq, index) => `call_${seq}_${index}`,
  name: 'openai-responses',
  classify(path) {
    return path.startsWith('/v1/responses') ? 'model' : undefined;
  },
  answer(turn, request, seq): Answer {
    if (turn?.kind === 'error') {
      const message = turn.message ?? (turn.status === 401 ? 'Incorrect API key provided (fake)' : `fake ${turn.status} from the test server`);
      return { status: turn.status, json: { error: { message, type: turn.status === 401 ? 'invalid_request_error' : 'server_error', code: turn.status === 401 ? 'invalid_api_key' : null } } };
    }
    const items: Record<string, unknown>[] = [];
    const effective = playable(turn);
    if (effective.thinking) items.push({ type: 'reasoning', id: `rs_${seq}`, summary: [{ type: 'summary_text', text: effective.thinking }] });
    const message = (text: string) => ({ type: 'message', id: `msg_${seq}`, role: 'assistant', status: 'completed', content: [{ type: 'output_text', text, annotations: [] }] });
    if (effective.kind === 'text') items.push(message(resolve(effective.text, request)));
    else {
      if (effective.text) items.push(message(effective.text));
      effective.calls.forEach((call, i) => {
        const callId = responsesDialect.callId(seq, i);
        if (call.custom !== undefined) items.push({ type: 'custom_tool_call', id: `ctc_${seq}_${i}`, call_id: callId, name: call.name, input: resolve(call.custom, request), status: 'completed' });
        else items.push({ type: 'function_call', id: `fc_${seq}_${i}`, call_id: callId, name: call.name, ...(call.namespace ? { namespace: call.namespace } : {}), arguments: JSON.stringify(resolve(call.args, request)), status: 'completed' });
      });
    }
    const id = `resp_${seq}`;
    const sse = [sseFrame({ type: 'response.created', response: { id } }, 'response.created')];
    items.forEach((item, output_index) => sse.push(sseFrame({ type: 'response.output_item.done', output_index, item }, 'response.output_item.done')));
    const usage = { input_tokens: 100, input_tokens_details: { cached_tokens: 0 }, output_tokens: 20, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 120 };
    sse.push(sseFrame({ type: 'response.completed', response: { id, usage } }, 'response.completed'));
    return { status: 200, sse };
  },
  sideAnswer(): Answer {
    return { status: 404, json: {} };
  },
};

export function startResponsesServer(script: Turn[]): Promise<FakeServer> {
  return startServer(responsesDialect, script);
}

import { playable, resolve, startServer, type Answer, type Dialect, type FakeServer, type ModelRequest, type Turn } from './core';

/**
 * Gemini API (POST /v1beta/models/<model>:streamGenerateContent?alt=sse), as gemini-cli calls it with
 * GOOGLE_GEMINI_BASE_URL. Non-streaming `:generateContent` calls (its routing / next-speaker checks) are side calls.
 */
const STATUS_NAMES: Record<number, string> = { 400: 'INVALID_ARGUMENT', 401: 'UNAUTHENTICATED', 403: 'PERMISSION_DENIED', 429: 'RESOURCE_EXHAUSTED', 500: 'INTERNAL', 503: 'UNAVAILABLE' };

function frame(data: unknown): string {
  return `data: ${JSON.stringify(data)}\r\n\r\n`;
}

const usageMetadata = { promptTokenCount: 200, candidatesTokenCount: 20, totalTokenCount: 220 };

export const geminiDialect: Dialect = {
  name: 'gemini',
  callId: (seq, index) => `fc_${seq}_${index}`,
  classify(path) {
    if (!path.startsWith('/v1beta/models/')) return undefined;
    if (path.includes(':streamGenerateContent')) return 'model';
    return 'side';
  },
  answer(turn, request, seq): Answer {
    if (turn?.kind === 'error') {
      const message = turn.message ?? `fake ${STATUS_NAMES[turn.status] ?? 'ERROR'} from test server`;
      return { status: turn.status, json: { error: { code: turn.status, message, status: STATUS_NAMES[turn.status] ?? 'UNKNOWN' } } };
    }
    const effective = playable(turn);
    const modelVersion = /models\/([^:]+):/.exec(request.path)?.[1] ?? 'gemini-fake';
    const candidate = (parts: unknown[], finishReason?: string) => ({
      candidates: [{ content: { role: 'model', parts }, index: 0, ...(finishReason ? { finishReason } : {}) }],
      ...(finishReason ? { usageMetadata } : {}),
      modelVersion,
    });
    const sse: string[] = [];
    if (effective.kind === 'text') {
      sse.push(frame(candidate([{ text: resolve(effective.text, request) }], 'STOP')));
    } else {
      if (effective.text) sse.push(frame(candidate([{ text: effective.text }])));
      const parts = effective.calls.map((call, i) => ({ functionCall: { id: geminiDialect.callId(seq, i), name: call.name, args: resolve(call.args, request) } }));
      sse.push(frame(candidate(parts, 'STOP')));
    }
    return { status: 200, sse };
  },
  sideAnswer(request: ModelRequest): Answer {
    if (request.path.includes(':countTokens')) return { status: 200, json: { totalTokens: 10 } };
    const text = JSON.stringify({ reasoning: 'fake', next_speaker: 'user', model_choice: 'flash' });
    return { status: 200, json: { candidates: [{ content: { role: 'model', parts: [{ text }] }, finishReason: 'STOP', index: 0 }], usageMetadata } };
  },
};

export function startGeminiServer(script: Turn[]): Promise<FakeServer> {
  return startServer(geminiDialect, script);
}

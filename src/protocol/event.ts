import { z } from './zod';
import { ChangeActionSchema, ReportStatusSchema } from './report';
import { ProtocolError, formatIssues, parseJsonBounded, MAX_BYTES } from './errors';
import { DOCUMENT_IDS, assertKnownVersion } from './version';

const base = {
  protocol: z.literal(DOCUMENT_IDS.event),
  seq: z.number().int().nonnegative(),
  at: z.iso.datetime({ offset: true }),
  task_id: z.string(),
};

export const ToolStatusSchema = z.enum(['started', 'succeeded', 'failed']);
export type ToolStatus = z.infer<typeof ToolStatusSchema>;

export const StartedEventSchema = z.object({ ...base, type: z.literal('started'), agent: z.string(), command: z.string().default('') });
export const ThinkingEventSchema = z.object({ ...base, type: z.literal('thinking'), text: z.string() });
export const MessageEventSchema = z.object({ ...base, type: z.literal('message'), text: z.string() });
export const ToolUseEventSchema = z.object({
  ...base,
  type: z.literal('tool_use'),
  /** May be "" — claude's tool close names no tool, only the id. */
  tool: z.string(),
  input_summary: z.string().default(''),
  status: ToolStatusSchema.default('started'),
  /** The agent's native call id; pairs a start with its end. Added after v1 shipped, hence the default. */
  id: z.string().default(''),
  /**
   * When the call really started, for agents that report a tool only once it has finished (opencode): their
   * `started` event is written late, so its `at` is not the start. Absent when `at` is the truth.
   */
  started_at: z.iso.datetime({ offset: true }).optional(),
});
export const FileChangedEventSchema = z.object({ ...base, type: z.literal('file_changed'), path: z.string(), action: ChangeActionSchema });
export const ProgressEventSchema = z.object({ ...base, type: z.literal('progress'), message: z.string(), pct: z.number().min(0).max(100).optional() });
export const QuestionEventSchema = z.object({
  ...base,
  type: z.literal('question'),
  id: z.string(),
  question: z.string(),
  options: z.array(z.string()).default([]),
});
export const AnswerEventSchema = z.object({ ...base, type: z.literal('answer'), id: z.string(), answer: z.string() });
export const ErrorEventSchema = z.object({ ...base, type: z.literal('error'), message: z.string(), fatal: z.boolean().default(false) });
export const FinishedEventSchema = z.object({
  ...base,
  type: z.literal('finished'),
  status: ReportStatusSchema,
  summary: z.string().default(''),
  exit_code: z.number().int().nullable().optional(),
});

export const EventSchema = z.discriminatedUnion('type', [
  StartedEventSchema,
  ThinkingEventSchema,
  MessageEventSchema,
  ToolUseEventSchema,
  FileChangedEventSchema,
  ProgressEventSchema,
  QuestionEventSchema,
  AnswerEventSchema,
  ErrorEventSchema,
  FinishedEventSchema,
]);

export type ProtocolEvent = z.infer<typeof EventSchema>;
export type EventInput = z.input<typeof EventSchema>;
export type EventType = ProtocolEvent['type'];
export const EVENT_TYPES: readonly EventType[] = [
  'started', 'thinking', 'message', 'tool_use', 'file_changed', 'progress', 'question', 'answer', 'error', 'finished',
];

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;
/**
 * What an adapter or the engine produces before the single writer stamps it: protocol, seq, at and task_id are
 * filled in by the events writer only, which is what keeps `seq` unique (reference §8.18 fixed).
 */
export type EventDraft = DistributiveOmit<EventInput, 'protocol' | 'seq' | 'at' | 'task_id'>;

export type ToolUseEvent = z.infer<typeof ToolUseEventSchema>;
export type FinishedEvent = z.infer<typeof FinishedEventSchema>;
export type QuestionEvent = z.infer<typeof QuestionEventSchema>;

/** Validates one parsed event. Refuses unknown versions by name. */
export function parseEvent(doc: unknown): ProtocolEvent {
  assertKnownVersion('event', doc);
  const result = EventSchema.safeParse(doc);
  if (!result.success) throw new ProtocolError('Invalid event', formatIssues(result.error));
  return result.data;
}

/** Parses one events.jsonl line (bounded). */
export function readEventLine(line: string): ProtocolEvent {
  return parseEvent(parseJsonBounded(line, 'event line', MAX_BYTES.eventLine));
}

export type EventLineResult = { ok: true; event: ProtocolEvent } | { ok: false; line: number; error: string };

/**
 * Parses a whole events.jsonl text. Unlike the reference (which skips bad lines silently), every unreadable line is
 * returned with its line number and reason, so viewers can count and show them.
 */
export function readEventsText(text: string): EventLineResult[] {
  const out: EventLineResult[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.trim();
    if (!line) continue;
    try {
      out.push({ ok: true, event: readEventLine(line) });
    } catch (err) {
      out.push({ ok: false, line: i + 1, error: (err as Error).message });
    }
  }
  return out;
}

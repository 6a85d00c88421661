import { z } from './zod';
import { ProtocolError, formatIssues, parseJsonBounded, MAX_BYTES } from './errors';
import { DOCUMENT_IDS, assertKnownVersion } from './version';

export const ModeSchema = z.enum(['read-only', 'write']);
export type Mode = z.infer<typeof ModeSchema>;

/** `auto` is resolved before a task is written: a task.json only ever holds one of these two. */
export const IsolationSchema = z.enum(['inplace', 'worktree']);
export type Isolation = z.infer<typeof IsolationSchema>;

export const ChannelSchema = z.object({
  transport: z.literal('mcp-stdio'),
  command: z.string().min(1),
  args: z.array(z.string()).default([]),
  server_name: z.string().min(1).default('caesar'),
});
export type Channel = z.infer<typeof ChannelSchema>;

/** caesar.task/v1 — written by the orchestrator, read by the agent. Unknown keys are stripped (not strict). */
export const TaskSchema = z.object({
  protocol: z.literal(DOCUMENT_IDS.task),
  id: z.string().min(1),
  created_at: z.iso.datetime({ offset: true }),
  role: z.string().optional(),
  agent: z.string().min(1),
  objective: z.string().min(1),
  context: z.string().default(''),
  constraints: z.array(z.string()).default([]),
  acceptance_criteria: z.array(z.string()).default([]),
  mode: ModeSchema,
  isolation: IsolationSchema,
  /** A resolved fact, not a request: false only when the orchestrator knows the network is cut. */
  network: z.boolean().default(true),
  workspace: z.string().refine((p) => p.startsWith('/') || /^[A-Za-z]:[\\/]/.test(p), 'must be an absolute path'),
  base_ref: z.string().min(1).optional(),
  deadline_ms: z.number().int().positive(),
  depth: z.number().int().nonnegative().default(0),
  report_path: z.string().min(1),
  events_path: z.string().min(1),
  channel: ChannelSchema.nullable().optional(),
});

export type Task = z.infer<typeof TaskSchema>;
export type TaskInput = z.input<typeof TaskSchema>;

/** Validates an already-parsed task object. Refuses unknown versions by name. */
export function parseTask(doc: unknown): Task {
  assertKnownVersion('task', doc);
  const result = TaskSchema.safeParse(doc);
  if (!result.success) throw new ProtocolError('Invalid task.json', formatIssues(result.error));
  return result.data;
}

/** Reads task.json text: bounded size, valid JSON, known version, valid fields. */
export function readTaskText(text: string): Task {
  return parseTask(parseJsonBounded(text, 'task.json', MAX_BYTES.task));
}

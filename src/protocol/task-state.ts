import { z } from './zod';
import { ReportStatusSchema, UsageSchema } from './report';
import { IsolationSchema, ModeSchema } from './task';

/**
 * Lifecycle of a task as the orchestrator sees it (independent of the report's own status).
 * pending: directory created, supervisor not yet running the agent (waiting for a slot, preparing the worktree).
 * lost: never written; the store reports it when the supervisor died without concluding (pid gone, state active).
 * queued: never written; the store reports it while a job system holds a task whose supervisor has not started.
 */
export const TaskStatusSchema = z.enum(['pending', 'running', 'succeeded', 'failed', 'cancelled', 'timed_out']);
export type TaskStatus = z.infer<typeof TaskStatusSchema>;
/** `unverified`: state.json does not carry Caesar's seal (record-seal.ts); its status is nobody's word. */
export type ObservedStatus = TaskStatus | 'lost' | 'queued' | 'unverified';
export const ACTIVE_STATUSES: readonly TaskStatus[] = ['pending', 'running'];

export const ReportSourceSchema = z.enum(['channel', 'schema', 'file', 'extracted', 'synthesized']);
export type ReportSource = z.infer<typeof ReportSourceSchema>;

/**
 * `<taskDir>/state.json`. Written by delegate() once (pending), then only by the task's supervisor (principle 2).
 * Everything needed to show, review and apply the task later lives here or in task.json / result.json.
 */
/** What an agent CLI's own session id may look like: letters, digits and `._:-`, no leading `-`, at most 128. */
export const NATIVE_SESSION_ID = /^[A-Za-z0-9_][A-Za-z0-9._:-]{0,127}$/;

export const TaskStateSchema = z.object({
  id: z.string(),
  status: TaskStatusSchema,
  agent: z.string(),
  role: z.string().optional(),
  objective: z.string(),
  mode: ModeSchema,
  /** The requested isolation may be "auto"; it is resolved by the supervisor, which rewrites this field. */
  isolation: z.union([IsolationSchema, z.literal('auto')]),
  network: z.boolean(),
  model: z.string().optional(),
  timeout_ms: z.number().int().positive(),
  depth: z.number().int().nonnegative(),
  /** The task whose agent delegated this one, when it was delegated from inside a task. */
  parent_task_id: z.string().optional(),
  created_at: z.string(),
  started_at: z.string().optional(),
  ended_at: z.string().optional(),
  /** The caesar root (holds .caesar/) and the user's workspace the task was delegated from. */
  root: z.string(),
  workspace: z.string(),
  /** Under worktree isolation: where the agent works, its branch and the frozen starting commit. */
  worktree: z.string().optional(),
  branch: z.string().optional(),
  base_ref: z.string().optional(),
  /** Paths laid down by [worktree] copy/link, excluded from every diff with prefix semantics. */
  excluded_paths: z.array(z.string()).default([]),
  supervisor_pid: z.number().int().optional(),
  /** os.hostname() of the supervisor: a pid is only checked for liveness on the host that recorded it. */
  supervisor_host: z.string().optional(),
  agent_pid: z.number().int().optional(),
  /**
   * Whether the agent ran inside the operating-system sandbox (src/engine/sandbox/): `confined` true, or false with
   * the reason (configured off, or what the machine lacks and its fix). Absent for tasks from before it existed.
   */
  sandbox: z.object({ confined: z.boolean(), reason: z.string().optional() }).optional(),
  /**
   * The agent CLI's own session (claude's session_id, codex's thread_id, an ACP sessionId…), recorded as soon as its
   * stream names it: what a follow-up or a recovery resumes. Its shape is checked, since it may be passed on argv.
   */
  agent_session: z.object({ id: z.string().regex(NATIVE_SESSION_ID) }).optional(),
  /** Free text shown while pending, e.g. "waiting for a slot (2 ahead)" or "creating worktree". */
  phase: z.string().optional(),
  /** When the agent ended and the supervisor began concluding (diff, report): `caesar watch` counts from here. */
  concluding_since: z.string().optional(),
  exit_code: z.number().int().nullable().optional(),
  signal: z.string().nullable().optional(),
  report_status: ReportStatusSchema.optional(),
  report_source: ReportSourceSchema.optional(),
  changes_verified_by: z.enum(['git', 'declaration']).optional(),
  usage: UsageSchema.optional(),
  /** How the checks Caesar ran itself went (result.json has each one): the lists show "checks failed" from this. */
  checks: z.object({ total: z.number().int().nonnegative(), failed: z.number().int().nonnegative() }).optional(),
  /** A fatal orchestration error (worktree impossible, setup failed, agent not found), with its remedy. */
  error: z.string().optional(),
  /**
   * Order, sealed with the record (record-order.ts): `seq` counts this task's state.json writes (absent = 0, the first),
   * `events_written` how many events its log held when it was written (a final state counts its `finished` to come).
   * An earlier state put back, or a log cut short, is then told by its readers. Absent in records from before.
   */
  seq: z.number().int().nonnegative().optional(),
  events_written: z.number().int().nonnegative().optional(),
});
export type TaskState = z.infer<typeof TaskStateSchema>;

/** " · checks failed" when a check Caesar ran failed (the agent may still have said it succeeded), else "". */
export function checksSuffix(state: Pick<TaskState, 'checks'>): string {
  return state.checks && state.checks.failed > 0 ? ' · checks failed' : '';
}

/**
 * `<taskDir>/discarded.json`: written when a task's worktree is removed, by `caesar discard` or by gc. Like
 * applied.json it sits beside state.json, which only the supervisor writes (principle 2).
 */
export const DiscardedDocSchema = z.object({
  discarded_at: z.string(),
  worktree: z.string(),
  branch: z.string().optional(),
  by: z.enum(['discard', 'gc']),
  /** Why gc removed it (gc's reason: clean, applied, or modified when forced). */
  reason: z.string().optional(),
});
export type DiscardedDoc = z.infer<typeof DiscardedDocSchema>;

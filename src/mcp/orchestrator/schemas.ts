import { z } from '../../protocol/zod';

/** Shapes shared by several tools' input and output schemas (zod; the SDK publishes them as JSON Schema). */

export const TaskIdInput = z.string().min(1).describe('A task id as returned by caesar_delegate (t_ followed by 32 hex digits).');

export const QuestionShape = z.object({
  id: z.string(),
  question: z.string(),
  options: z.array(z.string()),
  asked_at: z.string(),
});

export const FileChangeShape = z.object({
  path: z.string(),
  old_path: z.string().optional(),
  action: z.enum(['created', 'modified', 'deleted', 'renamed']),
  additions: z.number(),
  deletions: z.number(),
  binary: z.boolean(),
});

export const ReportSummaryShape = z
  .object({
    status: z.string(),
    summary: z.string(),
    changes: z.array(z.object({ path: z.string(), action: z.string() }).loose()),
    changes_verified_by: z.enum(['git', 'declaration']),
    report_source: z.string(),
    findings: z.array(z.object({ severity: z.string(), title: z.string() }).loose()),
    questions: z.array(z.unknown()),
    next_steps: z.array(z.string()),
    files: z.array(FileChangeShape),
    usage: z.record(z.string(), z.unknown()).optional(),
    commands_claimed: z.array(z.object({ command: z.string(), exit_code: z.number().nullable() })).optional().describe('What the agent says it ran: its claim, not verified.'),
    checks: z
      .array(z.object({ name: z.string(), command: z.string(), exit_code: z.number().nullable(), duration_ms: z.number(), output_tail: z.string() }).loose())
      .optional()
      .describe('The checks Caesar ran itself after the agent ended: observed exit codes and the end of their output.'),
  })
  .describe('The reconciled report: the agent\'s claims checked against git.');

/** What caesar_await and caesar_status say about one task. */
export const TaskOutcomeShape = z.object({
  task_id: z.string(),
  status: z.string().describe('pending | queued (held by Slurm) | running | succeeded | failed | cancelled | timed_out | lost, unverified (its state.json is not Caesar\'s), or unknown / invalid for an id that names no task, refused for a task folder copied in from another root'),
  pending: z.boolean().describe('true while the task is still running (or waiting for a slot, or queued by Slurm)'),
  agent: z.string().optional(),
  role: z.string().optional(),
  phase: z.string().optional(),
  job: z.string().optional().describe('The Slurm job that runs the task, with its queue state while active, e.g. "Slurm job 42 (PENDING: Priority)"'),
  error: z.string().optional(),
  checks_failed: z.boolean().optional().describe('true when a check Caesar ran itself failed, whatever the agent said'),
  status_label: z.string().optional().describe('The status as shown to people, e.g. "succeeded · checks failed"'),
  pending_questions: z.array(QuestionShape).optional(),
  report: ReportSummaryShape.nullable().optional(),
  next_actions: z
    .array(z.object({ id: z.string(), label: z.string(), how: z.string(), primary: z.boolean().optional() }))
    .optional()
    .describe('What can be done with the task next, in order, each with the tool that does it (how); the editor and the CLI offer the same'),
  unverified: z.array(z.string()).optional().describe("Caesar's records of the task that do not verify (changed by someone else, or from before records were sealed): what they say is not the truth"),
  message: z.string().optional(),
});

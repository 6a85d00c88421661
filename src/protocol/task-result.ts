import { z } from './zod';
import { ChangeActionSchema, ReportSchema, UsageSchema } from './report';
import { ReportSourceSchema } from './task-state';

/** One file of a task's diff, as git sees it. */
export const FileChangeSchema = z.object({
  path: z.string(),
  old_path: z.string().optional(),
  action: ChangeActionSchema,
  additions: z.number().int().nonnegative(),
  deletions: z.number().int().nonnegative(),
  binary: z.boolean(),
  /** Too large to read into a patch (engine/git/large-files.ts): listed with its size, left out of the patch. */
  too_large: z.boolean().optional(),
  size: z.number().int().nonnegative().optional(),
});
export type FileChangeRecord = z.infer<typeof FileChangeSchema>;

/** What Caesar observed running one check (src/engine/run/checks.ts): exit_code null when killed or never started. */
export const CheckResultSchema = z.object({
  name: z.string(),
  command: z.string(),
  exit_code: z.number().int().nullable(),
  duration_ms: z.number().int().nonnegative(),
  /** The last bytes of its stdout and stderr (the whole output is in checks/<n>.log). */
  output_tail: z.string(),
  timed_out: z.boolean().optional(),
  /** Why it could not run or was stopped (timeout, cancel, spawn error). */
  error: z.string().optional(),
});
export type CheckResult = z.infer<typeof CheckResultSchema>;

/** A check passed when it ran to the end and exited 0. */
export function checkPassed(check: CheckResult): boolean {
  return check.exit_code === 0 && !check.timed_out && !check.error;
}

/**
 * `<taskDir>/result.json`, written once by the supervisor: the normalized, git-reconciled report with its provenance.
 * The agent's own report.json stays untouched beside it (reference §8.16 fixed).
 */
export const ResultDocSchema = z.object({
  report: ReportSchema,
  report_source: ReportSourceSchema,
  changes_verified_by: z.enum(['git', 'declaration']),
  agent_report_valid: z.boolean(),
  /** Why the agent's report.json was not used: malformed, too large, unknown version (named). */
  agent_report_error: z.string().optional(),
  usage: UsageSchema.optional(),
  /** The diff's files (at most 1,000 listed: the rest is counted in files_total, the diff itself is whole in git). */
  diff: z.object({ files: z.array(FileChangeSchema), is_empty: z.boolean(), files_total: z.number().int().nonnegative().optional() }).optional(),
  /**
   * What changed in the shared git dir during the task (hooks, config, info/, refs), one named line each; present
   * (possibly empty) when the repository was watched. Apply refuses a non-empty list until the user accepts it.
   */
  repository_changes: z.array(z.string()).optional(),
  /** How many changes and findings the report had when its lists were cut (result-caps.ts); absent when whole. */
  changes_total: z.number().int().nonnegative().optional(),
  findings_total: z.number().int().nonnegative().optional(),
  /** The checks Caesar ran itself after the agent ended, in order; absent when the task had none. */
  checks: z.array(CheckResultSchema).optional(),
  /**
   * A worktree task's worktree as it concluded, as a git tree (sealed with the record): apply applies the diff from
   * base_ref to it, so a later write into the worktree (another task's) is never applied as this task's work.
   */
  worktree_tree: z.string().regex(/^[0-9a-f]{40}([0-9a-f]{24})?$/).optional(),
  /** The `seq` of the final state.json written right after this record (record-order.ts); absent in older records. */
  state_seq: z.number().int().nonnegative().optional(),
});
export type ResultDoc = z.infer<typeof ResultDocSchema>;

/** `<taskDir>/applied.json`, written by apply(): keeps state.json single-writer. */
export const AppliedDocSchema = z.object({
  applied_at: z.string(),
  patch_digest: z.string(),
  files: z.array(z.string()),
  /** What wrote the change into the workspace: `caesar apply` (or the editor's Apply), or the landing queue. */
  by: z.enum(['apply', 'land']).optional(),
});
export type AppliedDoc = z.infer<typeof AppliedDocSchema>;

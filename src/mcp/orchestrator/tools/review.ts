import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from '../../../protocol/zod';
import { answerQuestion, applyTaskById, diffTask, isActive, requestCancel, requireTaskView } from '../../../engine/tasks';
import { askToAcceptRepositoryChanges } from '../approval';
import { guarded, ok, toolError } from '../results';
import { FileChangeShape, TaskIdInput } from '../schemas';
import type { OrchestratorContext } from '../context';

/** A patch past this many characters is cut (patch_truncated says so): it must fit in a model's context. */
const PATCH_MAX_CHARS = 100_000;

/** Acting on a task: caesar_cancel, caesar_diff, caesar_apply, caesar_answer. */
export function registerReviewTools(server: McpServer, ctx: OrchestratorContext): void {
  server.registerTool(
    'caesar_cancel',
    {
      title: 'Cancel a task',
      description:
        "Ask a running or queued task to stop. Returns at once (it never waits, not even for a task queued for a slot): the task's supervisor stops the agent and its whole process group and records the task as cancelled. A finished task is left as it is. Call caesar_await to see it end.",
      inputSchema: { task_id: TaskIdInput },
      outputSchema: { task_id: z.string(), requested: z.boolean(), status: z.string(), message: z.string() },
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    },
    (args) =>
      guarded(async () => {
        const view = await requireTaskView(ctx.root, args.task_id);
        if (view.observed === 'lost') {
          const message = `Task ${view.id} is lost: its supervisor died and nothing is running. Nothing to cancel.`;
          return ok({ task_id: view.id, requested: false, status: 'lost', message }, message);
        }
        const outcome = await requestCancel(ctx.root, view.id, 'mcp');
        const message = outcome.requested
          ? `Cancel requested for ${view.id}; its supervisor stops the agent and records the task as cancelled.`
          : `Task ${view.id} already ended (${outcome.status}): nothing to cancel.`;
        return ok({ task_id: view.id, requested: outcome.requested, status: outcome.status, message }, message);
      }),
  );

  server.registerTool(
    'caesar_diff',
    {
      title: "A task's changes",
      description:
        "The files a task changed and the unified patch, computed by git against the commit the task started from (not the agent's claims). Review this before caesar_apply. The patch is cut at 100 000 characters (patch_truncated tells).",
      inputSchema: { task_id: TaskIdInput },
      outputSchema: {
        task_id: z.string(),
        worktree: z.string().nullable(),
        base_ref: z.string().nullable(),
        files: z.array(FileChangeShape),
        is_empty: z.boolean(),
        patch: z.string().nullable(),
        patch_truncated: z.boolean(),
        patch_digest: z.string().optional().describe('sha256 of the whole patch: two tasks with the same digest made the very same change.'),
        message: z.string().optional(),
      },
      annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    },
    (args) =>
      guarded(async () => {
        const diff = await diffTask(ctx.root, args.task_id);
        const truncated = diff.patch !== null && diff.patch.length > PATCH_MAX_CHARS;
        const structured = { ...diff, patch: truncated ? diff.patch!.slice(0, PATCH_MAX_CHARS) : diff.patch, patch_truncated: truncated };
        const text = diff.message ?? (diff.is_empty ? 'No changes.' : `${diff.files.length} file(s) changed: ${diff.files.map((f) => `${f.action} ${f.path}`).join(', ')}.`);
        return ok(structured, text);
      }),
  );

  server.registerTool(
    'caesar_apply',
    {
      title: "Apply a task's changes",
      description:
        "Bring a finished worktree task's changes into the workspace, all or nothing: if any file does not apply cleanly to the workspace as it is now, nothing is written and the conflicting files are listed. `files` applies only those paths. The user's own uncommitted edits to other files are kept. Review with caesar_diff first. When the repository's shared git dir (hooks, config, refs) changed during the task, the user is asked to accept it (elicitation); without their yes nothing is applied.",
      inputSchema: {
        task_id: TaskIdInput,
        files: z.array(z.string().min(1)).optional().describe('Repository-relative paths to apply (default: every changed file).'),
      },
      outputSchema: {
        task_id: z.string(),
        applied: z.boolean(),
        empty: z.boolean().optional(),
        files: z.array(z.string()),
        conflicts: z.array(z.string()),
        reason: z.string().optional(),
        message: z.string(),
        applied_at: z.string().optional(),
        patch_digest: z.string().optional(),
        repository_changes: z.array(z.string()).optional(),
      },
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
    },
    (args, extra) =>
      guarded(async () => {
        let outcome = await applyTaskById(ctx.root, args.task_id, args.files);
        if (outcome.reason === 'repository_changed') {
          // Only the person accepts a changed git dir (approval.ts): asked here, never taken from the call's arguments.
          const approval = await askToAcceptRepositoryChanges(
            server.server,
            { action: 'apply', changes: new Map([[args.task_id, outcome.repository_changes ?? []]]), command: `caesar apply ${args.task_id} --accept-repository-changes` },
            extra.signal,
          );
          outcome = approval.approved
            ? await applyTaskById(ctx.root, args.task_id, args.files, { acceptRepositoryChanges: true })
            : { ...outcome, message: `${outcome.message}\n${approval.message}` };
        }
        return ok({ task_id: args.task_id, ...outcome }, outcome.message);
      }),
  );

  server.registerTool(
    'caesar_answer',
    {
      title: "Answer an agent's question",
      description:
        "Answer a question a delegated agent asked (listed in pending_questions by caesar_await / caesar_status). The first answer wins, from any client; the agent goes on with it. An unknown task or question, an expired question or one already answered is an error saying which.",
      inputSchema: {
        task_id: TaskIdInput,
        question_id: z.string().min(1),
        answer: z.string().min(1),
      },
      outputSchema: { task_id: z.string(), question_id: z.string(), answered: z.literal(true), answered_at: z.string() },
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    },
    (args) =>
      guarded(async () => {
        const view = await requireTaskView(ctx.root, args.task_id);
        if (!isActive(view.observed)) return toolError(`Task ${view.id} has ended (${view.observed}): nobody is waiting for an answer any more.`);
        const written = await answerQuestion(ctx.root, view.id, args.question_id, args.answer, 'mcp');
        return ok({ task_id: view.id, question_id: written.id, answered: true, answered_at: written.answered_at }, `Answered ${written.id} of ${view.id}.`);
      }),
  );
}

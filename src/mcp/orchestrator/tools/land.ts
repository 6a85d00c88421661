import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from '../../../protocol/zod';
import { landTasks, shellCommand, unacceptedRepositoryChanges, type LandOutcome } from '../../../engine/tasks';
import { askToAcceptRepositoryChanges } from '../approval';
import { guarded, ok } from '../results';
import { TaskIdInput } from '../schemas';
import type { OrchestratorContext } from '../context';

const CheckShape = z.object({ name: z.string(), command: z.string(), exit_code: z.number().nullable(), duration_ms: z.number(), output_tail: z.string(), timed_out: z.boolean().optional(), error: z.string().optional() });
const ConflictShape = z.object({ path: z.string(), messages: z.array(z.string()), hunks: z.array(z.object({ start: z.number(), end: z.number() })) });
const TaskOutcomeShape = z.object({
  task_id: z.string(),
  status: z.enum(['landed', 'empty', 'already_landed', 'conflict', 'check_failed', 'refused', 'failed', 'not_landed']),
  reason: z.string().optional(),
  files: z.array(z.string()),
  conflicts: z.array(ConflictShape).optional(),
  checks: z.array(CheckShape).optional(),
  checks_log_dir: z.string().optional(),
  follow_up: z.object({ base_commit: z.string(), feedback: z.string(), command: z.array(z.string()) }).optional(),
  message: z.string(),
});

/** caesar_land: the landing queue (engine/tasks/land.ts), the same outcome `caesar land --json` prints. */
export function registerLandTool(server: McpServer, ctx: OrchestratorContext): void {
  server.registerTool(
    'caesar_land',
    {
      title: 'Land tasks in order',
      description:
        "Land finished worktree tasks one after another, in the order given, onto the checkout's CURRENT HEAD (not the commit each started from): each task's change is replayed three-way, its checks are re-run on the combined result in a scratch worktree, and only then is it written to the workspace (all or nothing, like caesar_apply). Stops at the first conflict or failed check: tasks landed before stay landed, the stopping one and those after are untouched. A conflict names the files and line ranges and gives follow_up: a caesar continue command that sends the conflict back to the same agent from the new HEAD. Refuses, before landing anything, a task still running, already applied, or one changing files the user has uncommitted edits in. When the repository's shared git dir changed during a task, the user is asked to accept it (elicitation); without their yes nothing lands.",
      inputSchema: {
        task_ids: z.array(TaskIdInput).min(1).max(50).describe('The tasks to land, in order.'),
      },
      outputSchema: {
        checkout: z.string(),
        head: z.string(),
        landed: z.array(z.string()),
        stopped_at: z.string().optional(),
        tasks: z.array(TaskOutcomeShape),
        message: z.string(),
      },
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
    },
    (args, extra) =>
      guarded(async () => {
        const outcome = await landWithApproval(server, ctx, args.task_ids, extra.signal);
        const followUp = outcome.tasks.find((t) => t.follow_up)?.follow_up;
        const text = followUp ? `${outcome.message}\nFollow-up: ${shellCommand(followUp.command)}` : outcome.message;
        return ok({ ...outcome }, text);
      }),
  );
}

/**
 * Lands; when the only refusals are shared git dirs that changed during tasks, asks the person (approval.ts) and lands
 * again with their yes. Landing refuses before it writes anything, so the first try changed nothing.
 */
async function landWithApproval(server: McpServer, ctx: OrchestratorContext, ids: string[], signal: AbortSignal): Promise<LandOutcome> {
  const first = await landTasks(ctx.root, ids);
  const refusals = first.tasks.filter((t) => t.status === 'refused');
  if (!refusals.length || refusals.some((t) => t.reason !== 'repository_changed')) return first;
  const changes = new Map<string, string[]>();
  for (const t of refusals) changes.set(t.task_id, (await unacceptedRepositoryChanges(ctx.root, t.task_id)) ?? []);
  const approval = await askToAcceptRepositoryChanges(server.server, { action: 'land', changes, command: `caesar land ${ids.join(' ')} --accept-repository-changes` }, signal);
  if (approval.approved) return landTasks(ctx.root, ids, { acceptRepositoryChanges: true });
  return { ...first, message: `${first.message}\n${approval.message}` };
}

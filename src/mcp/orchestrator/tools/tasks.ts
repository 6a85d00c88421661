import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from '../../../protocol/zod';
import { ISOLATIONS, LAUNCHER_KINDS, MODES, NETWORK_REQUESTS, TRANSPORTS } from '../../../config';
import { delegateTask, isActive, readEventPage, readRawLogPage, requireTaskView } from '../../../engine/tasks';
import { awaitTasks } from '../await';
import type { ElicitationRelay } from '../elicitation';
import { guarded, nextActionHints, nextActionsText, ok, pendingQuestionsOf, reportSummaryOf, toolError } from '../results';
import { TaskIdInput, TaskOutcomeShape } from '../schemas';
import type { OrchestratorContext } from '../context';

/** The bounds that keep an answer small enough for a model's context. */
const RAW_LOG_MAX_BYTES = 20_000;
const DEFAULT_AWAIT_MS = 30_000;
const MAX_AWAIT_MS = 600_000;

/** Starting and following tasks: caesar_delegate, caesar_await, caesar_status, caesar_logs. */
export function registerTaskTools(server: McpServer, ctx: OrchestratorContext, relay: ElicitationRelay): void {
  server.registerTool(
    'caesar_delegate',
    {
      title: 'Delegate a coding task',
      description:
        'Hand a coding task to another agent CLI (codex, claude, opencode, copilot, gemini, or a configured one), run by Caesar in the background, by default in its own git worktree so your checkout is untouched. ' +
        'Returns at once with the task_id and the settings it resolved (agent, mode, isolation, network, model, timeout); it never waits for the agent. ' +
        'Name an `agent` or a `role` (see caesar_list_agents / caesar_list_roles). Next: caesar_await with the task_id to get the result, caesar_diff to review, caesar_apply to bring the changes into the workspace.',
      inputSchema: {
        objective: z.string().min(1).describe('What the agent must do, as a self-contained instruction.'),
        agent: z.string().min(1).optional().describe('Agent id, e.g. "codex" (caesar_list_agents).'),
        role: z.string().min(1).optional().describe('A configured role that picks the agent and its defaults (caesar_list_roles).'),
        mode: z.enum(MODES).optional().describe('read-only: look and report; write: change files.'),
        isolation: z.enum(ISOLATIONS).optional().describe('worktree (separate checkout, review before apply), inplace, or auto.'),
        network: z.enum(NETWORK_REQUESTS).optional(),
        context: z.string().optional().describe('Background the agent needs: relevant files, decisions, constraints.'),
        constraints: z.array(z.string()).optional(),
        acceptance_criteria: z.array(z.string()).optional(),
        model: z.string().min(1).optional(),
        timeout: z.string().min(1).optional().describe('Deadline as a duration, e.g. "90s", "10m".'),
        channel: z.boolean().optional().describe('Offer the agent the return channel (ask_orchestrator, submit_report).'),
        transport: z
          .enum(TRANSPORTS)
          .optional()
          .describe("acp: the agent asks before running commands (permission requests come back as questions); stream: its own headless JSON stream. Default from the configuration."),
        launcher: z
          .enum(LAUNCHER_KINDS)
          .optional()
          .describe('Where the task runs: local (a process on this machine) or slurm (a batch job of the configured cluster; caesar_await shows its queue state). Default from the configuration.'),
        checks: z
          .array(z.string().min(1))
          .max(20)
          .optional()
          .describe('Shell commands Caesar itself runs in the task\'s workspace after the agent ends, e.g. "npm test": their exit codes (not the agent\'s word) decide "checks failed" in caesar_await. Run after any configured [[check]].'),
      },
      outputSchema: {
        task_id: z.string(),
        status: z.literal('pending'),
        agent: z.string(),
        role: z.string().optional(),
        mode: z.enum(MODES),
        isolation: z.string(),
        network: z.boolean(),
        model: z.string().optional(),
        timeout_ms: z.number(),
        depth: z.number(),
        parent_task_id: z.string().optional(),
        workspace: z.string(),
        channel: z.boolean(),
        launcher: z.string(),
        checks: z.array(z.object({ name: z.string(), command: z.string(), timeout_ms: z.number() })),
        job_id: z.string().optional(),
        warnings: z.array(z.string()),
        skipped: z.array(z.object({ agent: z.string(), reason: z.string() })),
      },
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
    },
    (args) =>
      guarded(async () => {
        if (!args.agent && !args.role) return toolError('Name an agent or a role: call caesar_list_agents or caesar_list_roles to see what is available.');
        const delegated = await delegateTask(ctx.root, { ...args }, { env: ctx.env });
        const { launch } = delegated;
        return ok(
          {
            task_id: delegated.id,
            status: 'pending',
            agent: launch.agent,
            ...(launch.role ? { role: launch.role } : {}),
            mode: launch.mode,
            isolation: launch.isolation,
            network: launch.network,
            ...(launch.model ? { model: launch.model } : {}),
            timeout_ms: launch.timeout_ms,
            depth: launch.depth,
            ...(launch.parent_task_id ? { parent_task_id: launch.parent_task_id } : {}),
            workspace: launch.workspace,
            channel: launch.channel,
            launcher: launch.launcher.kind,
            checks: launch.checks,
            ...(delegated.jobId ? { job_id: delegated.jobId } : {}),
            warnings: delegated.warnings,
            skipped: delegated.skipped,
          },
          `Task ${delegated.id} delegated to ${launch.agent} (${launch.mode}, ${launch.isolation}${delegated.jobId ? `, Slurm job ${delegated.jobId}` : ''}). Call caesar_await with this task_id for its result.` +
            (delegated.warnings.length ? ` Warnings: ${delegated.warnings.join(' ')}` : ''),
        );
      }),
  );

  server.registerTool(
    'caesar_await',
    {
      title: 'Wait for delegated tasks',
      description:
        'Wait for one or several delegated tasks, up to timeout_ms (default 30 s, at most 10 min), and return each one: finished tasks with their reconciled report (status, summary, files changed according to git, findings), still-running ones with pending: true and their pending_questions. ' +
        'A pending question blocks its agent: answer it with caesar_answer (or, if your client supports it, the question is put to the user directly). Call again to keep waiting; the tasks go on whether or not anyone waits.',
      inputSchema: {
        task_ids: z.array(z.string().min(1)).min(1).describe('Ids returned by caesar_delegate.'),
        timeout_ms: z.number().int().positive().max(MAX_AWAIT_MS).optional(),
      },
      outputSchema: {
        tasks: z.record(z.string(), TaskOutcomeShape),
        all_finished: z.boolean(),
      },
      annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    },
    (args, extra) =>
      guarded(async () => {
        const ids = [...new Set(args.task_ids)];
        const progressToken = extra._meta?.progressToken;
        const outcomes = await awaitTasks(ctx.root, ids, {
          timeoutMs: args.timeout_ms ?? DEFAULT_AWAIT_MS,
          signal: extra.signal,
          onChange: (current) => {
            relay.offer(current);
            if (progressToken === undefined) return;
            const done = current.filter((o) => !o.pending).length;
            const asking = current.reduce((n, o) => n + (o.pending_questions?.length ?? 0), 0);
            void extra
              .sendNotification({
                method: 'notifications/progress',
                params: {
                  progressToken,
                  progress: done,
                  total: ids.length,
                  message: `${done}/${ids.length} finished${asking ? `, ${asking} question(s) waiting for an answer` : ''}`,
                },
              })
              .catch(() => undefined);
          },
        });
        const tasks = Object.fromEntries(outcomes.map((o) => [o.task_id, o]));
        const running = outcomes.filter((o) => o.pending);
        const questions = running.reduce((n, o) => n + (o.pending_questions?.length ?? 0), 0);
        const text = running.length
          ? `${outcomes.length - running.length}/${outcomes.length} finished; still running: ${running.map((o) => o.task_id).join(', ')}${questions ? ` (${questions} question(s) to answer with caesar_answer)` : ''}.`
          : outcomes.map((o) => `${o.task_id}: ${o.status_label ?? o.status}${o.report ? ` — ${o.report.status}: ${o.report.summary}` : ''}${nextActionsText(o.next_actions)}`).join('\n');
        return ok({ tasks, all_finished: running.length === 0 }, text);
      }),
  );

  server.registerTool(
    'caesar_status',
    {
      title: 'Task status',
      description:
        'The current state of one task without waiting: status, phase (e.g. waiting for a slot), agent, timestamps, last event, pending questions, and the report once finished. Use caesar_await to wait instead.',
      inputSchema: { task_id: TaskIdInput },
      outputSchema: {
        ...TaskOutcomeShape.shape,
        mode: z.string(),
        isolation: z.string(),
        depth: z.number(),
        parent_task_id: z.string().optional(),
        created_at: z.string(),
        started_at: z.string().optional(),
        ended_at: z.string().optional(),
        worktree: z.string().optional(),
        base_ref: z.string().optional(),
        applied_at: z.string().optional(),
        last_event: z.record(z.string(), z.unknown()).nullable(),
      },
      annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    },
    (args) =>
      guarded(async () => {
        const view = await requireTaskView(ctx.root, args.task_id);
        const { state } = view;
        const pending = isActive(view.observed);
        const structured = {
          task_id: view.id,
          status: view.observed,
          pending,
          agent: state.agent,
          ...(state.role ? { role: state.role } : {}),
          ...(state.phase && pending ? { phase: state.phase } : {}),
          ...(state.error ? { error: state.error } : {}),
          pending_questions: pendingQuestionsOf(view),
          report: reportSummaryOf(view),
          mode: state.mode,
          isolation: state.isolation,
          depth: state.depth,
          ...(state.parent_task_id ? { parent_task_id: state.parent_task_id } : {}),
          created_at: state.created_at,
          ...(state.started_at ? { started_at: state.started_at } : {}),
          ...(state.ended_at ? { ended_at: state.ended_at } : {}),
          ...(state.worktree ? { worktree: state.worktree } : {}),
          ...(state.base_ref ? { base_ref: state.base_ref } : {}),
          ...(view.applied ? { applied_at: view.applied.applied_at } : {}),
          ...(view.unverified.length ? { unverified: view.unverified } : {}),
          last_event: (view.lastEvent as Record<string, unknown> | undefined) ?? null,
        };
        const warning = view.unverified.length ? ` Not Caesar's record, not the truth: ${view.unverified.join('; ')}.` : '';
        const next = nextActionHints(view);
        return ok(
          { ...structured, next_actions: next },
          `Task ${view.id}: ${view.observed}${state.phase && pending ? ` (${state.phase})` : ''}${view.pendingQuestions.length ? `, ${view.pendingQuestions.length} question(s) waiting` : ''}.${warning}${nextActionsText(next)}`,
        );
      }),
  );

  server.registerTool(
    'caesar_logs',
    {
      title: 'Task events or raw output',
      description:
        "What a task's agent has been doing: its normalized events (tool calls, messages, file changes, questions), or with raw: true the agent's own output. Bounded: events come `limit` at a time (default 50, the latest ones unless you pass `cursor`); raw output at most 20 000 bytes. Pass next_cursor back as `cursor` to read what follows.",
      inputSchema: {
        task_id: TaskIdInput,
        raw: z.boolean().optional(),
        limit: z.number().int().min(1).max(500).optional(),
        cursor: z.number().int().nonnegative().optional().describe('An event index (events) or a byte offset (raw) from a previous next_cursor.'),
      },
      outputSchema: {
        task_id: z.string(),
        raw: z.boolean(),
        events: z.array(z.record(z.string(), z.unknown())).optional(),
        total_events: z.number().optional(),
        bad_lines: z.number().optional(),
        text: z.string().optional(),
        total_bytes: z.number().optional(),
        truncated: z.boolean().optional(),
        next_cursor: z.number(),
      },
      annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    },
    (args) =>
      guarded(async () => {
        if (args.raw) {
          const page = await readRawLogPage(ctx.root, args.task_id, { maxBytes: RAW_LOG_MAX_BYTES, ...(args.cursor !== undefined ? { cursor: args.cursor } : {}) });
          return ok({ ...page, raw: true }, page.text === '' ? 'No raw output yet.' : `${page.text.length} characters of raw output${page.truncated ? ' (more available: page with cursor)' : ''}.`);
        }
        const page = await readEventPage(ctx.root, args.task_id, { limit: args.limit ?? 50, ...(args.cursor !== undefined ? { cursor: args.cursor } : {}) });
        return ok(
          { ...page, events: page.events as unknown as Record<string, unknown>[], raw: false },
          `${page.events.length} of ${page.total_events} event(s); next_cursor ${page.next_cursor}.`,
        );
      }),
  );
}

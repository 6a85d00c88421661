import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { ConfigError } from '../../config';
import { DelegationRefusedError, ForeignTaskError, RequestError, type TaskSummary } from '../../engine/tasks';
import { taskLifecycle } from '../../common/lifecycle';
import { actionHints, mcpAdvice, nextActions, type ActionHint } from '../../common/next-actions';

/**
 * How every orchestrator tool answers: `structuredContent` (checked against the tool's outputSchema by the SDK) plus
 * one short line of text for clients that show text only. Failures are tool errors (`isError`) with a message a model
 * can act on; nothing a client sends may turn into an exception or a protocol error.
 */

export function ok(structured: Record<string, unknown>, text: string): CallToolResult {
  return { structuredContent: structured, content: [{ type: 'text', text }] };
}

export function toolError(message: string): CallToolResult {
  return { isError: true, content: [{ type: 'text', text: message }] };
}

/** Runs a handler; refusals and request errors keep their own message, anything else is named as unexpected. */
export async function guarded(handler: () => Promise<CallToolResult>): Promise<CallToolResult> {
  try {
    return await handler();
  } catch (err) {
    if (err instanceof DelegationRefusedError || err instanceof RequestError || err instanceof ConfigError || err instanceof ForeignTaskError) return toolError(err.message);
    process.stderr.write(`caesar mcp: ${(err as Error)?.stack ?? String(err)}\n`);
    return toolError(`Caesar could not complete the call: ${(err as Error)?.message ?? String(err)}`);
  }
}

export interface PendingQuestionView {
  id: string;
  question: string;
  options: string[];
  asked_at: string;
}

export function pendingQuestionsOf(summary: TaskSummary): PendingQuestionView[] {
  return summary.pendingQuestions.map((q) => ({ id: q.id, question: q.question, options: q.options, asked_at: q.asked_at }));
}

/** The reconciled report without what a model rarely needs (details, commands, artifacts): keeps answers short. */
export function reportSummaryOf(summary: TaskSummary): Record<string, unknown> | null {
  const result = summary.result;
  if (!result) return null;
  const { report } = result;
  return {
    status: report.status,
    summary: report.summary,
    changes: report.changes,
    changes_verified_by: result.changes_verified_by,
    report_source: result.report_source,
    findings: report.findings,
    questions: report.questions,
    next_steps: report.next_steps,
    files: result.diff?.files ?? [],
    ...(result.usage ? { usage: result.usage } : {}),
    // What the agent says it ran (its claim) beside what Caesar observed running the checks itself.
    ...(report.commands_run.length ? { commands_claimed: report.commands_run.map((c) => ({ command: c.command, exit_code: c.exit_code ?? null })) } : {}),
    ...(result.checks?.length ? { checks: result.checks } : {}),
  };
}

/** The actions open to the task that a tool can do, each with its tool: the same list the CLI and the editor offer. */
export function nextActionHints(summary: TaskSummary): ActionHint[] {
  return actionHints(nextActions(taskLifecycle(summary)), 'mcp', summary.id);
}

/** " Next: caesar_diff (Review All Changes), caesar_apply (Apply)." for a tool's text, or ''. */
export function nextActionsText(hints: readonly ActionHint[] | undefined): string {
  const advice = mcpAdvice(hints ?? []);
  return advice ? ` ${advice}` : '';
}

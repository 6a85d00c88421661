import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { ShapeOutput, ZodRawShapeCompat } from '@modelcontextprotocol/sdk/server/zod-compat.js';
import type { GetPromptResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from '../../protocol/zod';

/*
 * The orchestrator's prompts (issue 25): chat clients list them as slash commands (/race, /fanout, /review, /land).
 * Each one is a recipe written for how the caesar_* tools behave: which to call, in which order, with which
 * arguments, and what to check before anything reaches the user's checkout. Prompt arguments are strings (the MCP
 * prompt protocol has no other type): lists are comma-separated.
 */

export const ORCHESTRATOR_PROMPT_NAMES = ['race', 'fanout', 'review', 'land'] as const;
type OrchestratorPromptName = (typeof ORCHESTRATOR_PROMPT_NAMES)[number];

/** "a, b ,,c" → ["a", "b", "c"]. */
export function splitList(text: string | undefined): string[] {
  return (text ?? '').split(',').map((s) => s.trim()).filter((s) => s.length > 0);
}

function userMessage(text: string): GetPromptResult {
  return { messages: [{ role: 'user', content: { type: 'text', text } }] };
}

/** The --check advice shared by the recipes that delegate: the exit code, not the agent's word, decides. */
function checksLine(check: string | undefined): string {
  const checks = splitList(check);
  return checks.length > 0
    ? `Pass \`checks: ${JSON.stringify(checks)}\` to every caesar_delegate call: Caesar runs them itself in each task's worktree after the agent ends.`
    : 'If the project has a test command, pass it as `checks: ["<command>"]` to every caesar_delegate call (configured [[check]] entries run anyway): Caesar runs them itself after the agent ends.';
}

export function racePrompt(args: { objective: string; agents?: string; check?: string }): GetPromptResult {
  const agents = splitList(args.agents);
  const who = agents.length > 0 ? `these agents: ${agents.join(', ')}` : 'two or three different agents that caesar_list_agents reports as available (skip any whose status is not ready)';
  return userMessage(
    [
      `Race several coding agents on the same objective and keep only the best result.`,
      ``,
      `Objective: ${args.objective}`,
      ``,
      `1. ${agents.length > 0 ? 'Call caesar_list_agents and confirm each named agent is available.' : 'Call caesar_list_agents.'} Use ${who}.`,
      `2. Call caesar_delegate once per agent with the same \`objective\`, \`mode: "write"\` and \`isolation: "worktree"\` (each gets its own checkout; nothing touches the workspace). ${checksLine(args.check)}`,
      `3. Call caesar_await with all the task_ids together; repeat while \`all_finished\` is false. Answer any \`pending_questions\` with caesar_answer (ask the user when the answer is theirs to give).`,
      `4. Rank the finished tasks on evidence, not on their reports: first those whose checks all passed (\`checks_failed\` false and every \`report.checks[].exit_code\` 0; \`commands_claimed\` is only the agent's claim), then the smaller diff (caesar_diff: sum of additions and deletions), then the shorter run and lower cost.`,
      `5. Read the winner's caesar_diff in full. Show the user the ranking, one line per task saying why, and the winner's patch.`,
      `6. Only after the user agrees: caesar_apply the winner (all or nothing; a conflict lists the files and writes nothing). Never apply two racers: they solve the same thing.`,
    ].join('\n'),
  );
}

export function fanoutPrompt(args: { objective: string; parts?: string; check?: string }): GetPromptResult {
  const parts = splitList(args.parts);
  return userMessage(
    [
      `Split one job into independent parts and run them in parallel, each by its own agent in its own worktree.`,
      ``,
      `Job: ${args.objective}`,
      parts.length > 0 ? `Parts (one task each): ${parts.map((p) => `"${p}"`).join(', ')}` : `First split it into parts that touch different files (say which files each part owns); parts that must edit the same file belong in one task.`,
      ``,
      `1. Call caesar_list_agents (or caesar_list_roles, to delegate by role) and pick an available agent for each part.`,
      `2. Call caesar_delegate once per part with a self-contained \`objective\` (the agent sees nothing else), the files it owns and must not leave in \`constraints\`, \`mode: "write"\` and \`isolation: "worktree"\`. ${checksLine(args.check)}`,
      `3. Call caesar_await with all the task_ids; repeat while \`all_finished\` is false, answering \`pending_questions\` with caesar_answer.`,
      `4. For each finished task: caesar_diff, and check that it changed only the files its part owns and that its checks passed. A task that failed or whose checks failed is reported, not applied.`,
      `5. Apply the good ones one at a time with caesar_apply, or land them in order with caesar_land (which replays each onto the current HEAD and re-runs its checks on the combination). Stop at the first conflict and tell the user which files.`,
    ].join('\n'),
  );
}

export function reviewPrompt(args: { task_id: string }): GetPromptResult {
  return userMessage(
    [
      `Review the work of Caesar task ${args.task_id} before anything of it reaches the workspace.`,
      ``,
      `1. Call caesar_status with \`task_id: "${args.task_id}"\`. If it is still pending or running, call caesar_await with \`task_ids: ["${args.task_id}"]\` until it finishes.`,
      `2. Call caesar_diff with \`task_id: "${args.task_id}"\`: git's view of what changed, against the commit the task started from. If \`patch_truncated\` is true, say the review covers only part of the patch.`,
      `3. Compare the agent's report (\`report.summary\`, \`report.changes\`) with the diff: name any file it changed but did not mention, and any claim the diff does not back.`,
      `4. Compare \`report.commands_claimed\` (the agent's word) with \`report.checks\` (what Caesar ran and observed). A non-zero exit code in checks outweighs any claim.`,
      `5. Read the patch for correctness, security (secrets, shell or path injection, disabled checks), tests touched or deleted, and files outside the objective.`,
      `6. Give a verdict: apply, follow up (what to ask for), or discard, with the reasons. Do not call caesar_apply yourself unless the user asks.`,
    ].join('\n'),
  );
}

export function landPrompt(args: { task_ids: string }): GetPromptResult {
  const ids = splitList(args.task_ids);
  return userMessage(
    [
      `Land these Caesar tasks into the checkout, in this order: ${ids.join(', ')}.`,
      ``,
      `1. For each task: caesar_status must say succeeded (not "checks failed", not pending). caesar_await any that still run. Do not land a failed task or one whose checks failed; tell the user instead.`,
      `2. For each task: read caesar_diff, so the user knows what lands.`,
      `3. Call caesar_land with \`task_ids: ${JSON.stringify(ids)}\` in that order. It replays each change onto the checkout's current HEAD, re-runs the task's checks on the combined result, and applies it; it stops at the first conflict or failed check with nothing of that task applied.`,
      `4. If it stopped: report which task, the files and hunks that conflicted or the check that failed, and which tasks did land. A conflicting task can go back to its agent as a follow-up; do not force it with caesar_apply.`,
      `5. Report the tasks landed and the checks that ran on the result.`,
    ].join('\n'),
  );
}

/** Registers one prompt on a server: what a client lists and asks the user for, and the recipe its arguments fill. */
type PromptEntry = (server: McpServer, name: OrchestratorPromptName) => void;

/**
 * Types the recipe by its argument schema, so the table below checks each recipe against the arguments it gets. The
 * server validates a call's arguments against `argsSchema` before the callback runs: hence the one narrowing cast.
 */
function prompt<Args extends ZodRawShapeCompat>(title: string, description: string, argsSchema: Args, recipe: (args: ShapeOutput<Args>) => GetPromptResult): PromptEntry {
  return (server, name) => server.registerPrompt<ZodRawShapeCompat>(name, { title, description, argsSchema }, (args) => recipe(args as ShapeOutput<Args>));
}

const OBJECTIVE = z.string().min(1).describe('What the agents must do, as a self-contained instruction.');
const CHECK = z.string().optional().describe('Check commands Caesar runs after each agent, comma-separated (e.g. "npm test").');

/** The four prompts, by name. Their arguments are described so a client can ask the user for them. */
const PROMPTS: Record<OrchestratorPromptName, PromptEntry> = {
  race: prompt(
    'Race agents on one objective',
    'Run the same objective on several agents in separate worktrees, rank the results by checks passed and diff size, apply the best.',
    { objective: OBJECTIVE, agents: z.string().optional().describe('Agent ids, comma-separated (default: two or three available ones).'), check: CHECK },
    racePrompt,
  ),
  fanout: prompt(
    'Fan a job out to parallel agents',
    'Split a job into independent parts, delegate each to its own agent and worktree, review each diff, apply or land the good ones.',
    { objective: OBJECTIVE, parts: z.string().optional().describe('The parts, comma-separated (default: the model splits the job).'), check: CHECK },
    fanoutPrompt,
  ),
  review: prompt(
    'Review a task before applying',
    "Check a task's git diff against its report and its observed checks, and give a verdict.",
    { task_id: z.string().min(1).describe('The task id (t_…) to review.') },
    reviewPrompt,
  ),
  land: prompt(
    'Land tasks in order',
    'Verify each task succeeded with its checks, then caesar_land them in order onto the current HEAD, stopping at the first conflict.',
    { task_ids: z.string().min(1).describe('Task ids in landing order, comma-separated.') },
    landPrompt,
  ),
};

/** Registers the four prompts. */
export function registerOrchestratorPrompts(server: McpServer): void {
  for (const name of ORCHESTRATOR_PROMPT_NAMES) PROMPTS[name](server, name);
}

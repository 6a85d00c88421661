import { displayCommand } from './stream';
import type { BuildContext, SpawnPlan } from './types';

/**
 * The plan of an agent's ACP entry point (AgentAdapter.acp): argv as given (the user's extra args last), run in the
 * task's workspace, no stdin — the brief travels as `session/prompt`, and the return channel as an MCP server of
 * `session/new` (src/engine/acp/session.ts), so no MCP configuration is written for it.
 */
export function acpPlan(command: string, args: string[], ctx: BuildContext, extra: Pick<SpawnPlan, 'env' | 'files'> = {}): SpawnPlan {
  const argv = [...args, ...ctx.extraArgs];
  const plan: SpawnPlan = { command, args: argv, cwd: ctx.task.workspace, display: displayCommand(command, argv) };
  if (extra.env) plan.env = extra.env;
  if (extra.files?.length) plan.files = extra.files;
  return plan;
}

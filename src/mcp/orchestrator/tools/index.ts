import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { OrchestratorContext } from '../context';
import { ElicitationRelay } from '../elicitation';
import { registerCatalogueTools } from './catalogue';
import { registerLandTool } from './land';
import { registerReviewTools } from './review';
import { registerTaskTools } from './tasks';
import { resolvingTaskIds } from '../task-id-args';

export type { OrchestratorContext };


export const ORCHESTRATOR_TOOL_NAMES = [
  'caesar_delegate',
  'caesar_await',
  'caesar_status',
  'caesar_logs',
  'caesar_cancel',
  'caesar_diff',
  'caesar_apply',
  'caesar_land',
  'caesar_list_agents',
  'caesar_list_roles',
  'caesar_answer',
] as const;

/** The eleven tools, each a thin adapter over src/engine/tasks. */
export function registerOrchestratorTools(server: McpServer, ctx: OrchestratorContext): void {
  // Each tool's task_id / task_ids arrive whole: any unambiguous start of an id is taken (task-id-args.ts).
  const tools = resolvingTaskIds(server, ctx.root);
  registerTaskTools(tools, ctx, new ElicitationRelay(server.server, ctx.root));
  registerReviewTools(tools, ctx);
  registerLandTool(tools, ctx);
  registerCatalogueTools(tools, ctx);
}

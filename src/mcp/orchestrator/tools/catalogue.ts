import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from '../../../protocol/zod';
import { loadConfig, untrustedMessage } from '../../../config';
import { agentCatalogue, agentStatuses, listRoles } from '../../../engine/tasks';
import { guarded, ok } from '../results';
import type { OrchestratorContext } from '../context';

/** What can run: caesar_list_agents, caesar_list_roles. */
export function registerCatalogueTools(server: McpServer, ctx: OrchestratorContext): void {
  server.registerTool(
    'caesar_list_agents',
    {
      title: 'Available agents',
      description:
        'Every agent Caesar knows (built-in CLIs and configured ones): whether its program is installed, whether the policy allows it (or why not), its capabilities (network control, model choice, native read-only…) and its default model. Use it to choose the `agent` of caesar_delegate.',
      inputSchema: {},
      outputSchema: {
        agents: z.array(
          z
            .object({
              id: z.string(),
              display_name: z.string(),
              installed: z.boolean(),
              allowed: z.boolean(),
              capabilities: z.record(z.string(), z.unknown()).optional(),
            })
            .loose(),
        ),
      },
      annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    },
    () =>
      guarded(async () => {
        const loaded = await loadConfig({ root: ctx.root, env: ctx.env });
        const agents = await agentStatuses(loaded, agentCatalogue(loaded, { env: ctx.env, root: ctx.root }));
        const usable = agents.filter((a) => a.installed && a.allowed).map((a) => a.id);
        // An untrusted repository config is left out (and caesar_delegate refuses): say so rather than list as if whole.
        const untrusted = loaded.untrusted.length ? `\n${untrustedMessage(loaded.untrusted, ctx.root)}` : '';
        return ok({ agents: agents as unknown as Record<string, unknown>[] }, `Usable now: ${usable.join(', ') || 'none'}.${untrusted}`);
      }),
  );

  server.registerTool(
    'caesar_list_roles',
    {
      title: 'Configured roles',
      description:
        "Every role (a named list of agents in fallback order with a mode and defaults, e.g. reviewer or implementer) with the agent it would pick right now, and why others were skipped. Use it to choose the `role` of caesar_delegate.",
      inputSchema: {},
      outputSchema: {
        roles: z.array(
          z
            .object({
              name: z.string(),
              mode: z.string(),
              agents: z.array(z.string()),
              would_pick: z.string().nullable(),
              skipped: z.array(z.object({ agent: z.string(), reason: z.string() })),
            })
            .loose(),
        ),
      },
      annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    },
    () =>
      guarded(async () => {
        const loaded = await loadConfig({ root: ctx.root, env: ctx.env });
        const roles = await listRoles(loaded, agentCatalogue(loaded, { env: ctx.env, root: ctx.root }));
        const structured = roles.map((r) => ({
          ...r.role,
          origin: r.origin,
          would_pick: r.picks ?? null,
          ...(r.reason ? { reason: r.reason } : {}),
          skipped: r.skipped,
        }));
        return ok({ roles: structured }, roles.map((r) => `${r.role.name} → ${r.picks ?? 'no agent available'}`).join('\n') || 'No roles.');
      }),
  );
}

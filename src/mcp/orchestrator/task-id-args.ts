import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { RequestError, resolveTaskIdPrefix } from '../../engine/tasks';
import { toolError } from './results';

/*
 * Every tool that takes a task takes what a person or a model was shown: the whole id or any start of it that names
 * one task of this root (`t_b9b484f9`, as `caesar ps` and the editor show it). Resolved once, here, for every tool's
 * `task_id` and `task_ids`, before its handler runs; a start shared by several tasks is refused naming them.
 */

type ToolCallback = (args: unknown, extra: unknown) => unknown;

/** `server`, except that each tool registered through it receives whole task ids. */
export function resolvingTaskIds(server: McpServer, root: string): McpServer {
  return new Proxy(server, {
    get(target, property, receiver) {
      if (property !== 'registerTool') return Reflect.get(target, property, receiver) as unknown;
      const register = target.registerTool.bind(target) as (n: string, c: unknown, cb: ToolCallback) => unknown;
      return (name: string, config: { inputSchema?: unknown }, callback: ToolCallback) =>
        // A tool without an input schema is called with `extra` alone: it takes no task, and is registered as it is.
        config.inputSchema === undefined
          ? register(name, config, callback)
          : register(name, config, async (args, extra) => {
              const resolved = await resolveTaskIdArgs(root, args).catch((error: unknown) => error);
              if (resolved instanceof RequestError) return toolError(resolved.message);
              if (resolved instanceof Error) throw resolved;
              return callback(resolved, extra);
            });
    },
  });
}

async function resolveTaskIdArgs(root: string, args: unknown): Promise<unknown> {
  if (!args || typeof args !== 'object') return args;
  const { task_id, task_ids } = args as { task_id?: unknown; task_ids?: unknown };
  const resolved: Record<string, unknown> = { ...(args as Record<string, unknown>) };
  if (typeof task_id === 'string') resolved.task_id = await resolveTaskIdPrefix(root, task_id);
  if (Array.isArray(task_ids)) resolved.task_ids = await Promise.all(task_ids.map((id: unknown) => (typeof id === 'string' ? resolveTaskIdPrefix(root, id) : id)));
  return resolved;
}

import { DOCUMENT_IDS, parseTask, type LaunchSpec, type ReportTier, type Task, type TaskPaths } from '../../protocol';
import type { AgentAdapter } from '../../agents/types';
import { channelCoordinates, channelLauncher } from './channel-launcher';
import type { Placement } from './isolation';

/** What the agent is told: the report tier it gets, and task.json (OACP v1) from the launch and where it works. */

/** Channel > schema > file (reference §2.2.8): the channel when the task asked for it and the agent can load it. */
export function pickTier(launch: Pick<LaunchSpec, 'channel'>, adapter: Pick<AgentAdapter, 'capabilities'>): ReportTier {
  if (launch.channel && adapter.capabilities.channel && channelAvailable()) return 'channel';
  return adapter.capabilities.schemaTier ? 'schema' : 'file';
}

/** The channel server can be started (Node and dist/caesar.js found); otherwise the task runs on a lower tier. */
function channelAvailable(): boolean {
  return channelLauncher() !== undefined;
}

export function buildTask(launch: LaunchSpec, placement: Placement, paths: TaskPaths, network: boolean): Task {
  return parseTask({
    protocol: DOCUMENT_IDS.task,
    id: launch.id,
    created_at: launch.created_at,
    ...(launch.role ? { role: launch.role } : {}),
    agent: launch.agent,
    objective: launch.objective,
    context: launch.context,
    constraints: launch.constraints,
    acceptance_criteria: launch.acceptance_criteria,
    mode: launch.mode,
    isolation: placement.isolation,
    network,
    workspace: placement.workspace,
    ...(placement.worktree ? { base_ref: placement.worktree.base_ref } : {}),
    deadline_ms: launch.timeout_ms,
    depth: launch.depth,
    report_path: paths.report,
    // The agent's outbox, not events.jsonl: that file has one writer, this supervisor, which relays the outbox.
    events_path: paths.agentEvents,
    // Requested → the coordinates, for every agent: adapters that can load MCP inject them (the `channel` tier), and
    // an OACP agent of its own (a [[agent]] template) may start the server from task.json itself.
    channel: launch.channel ? (channelCoordinates(paths.dir) ?? null) : null,
  });
}

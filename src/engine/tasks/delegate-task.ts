import * as path from 'node:path';
import { loadConfig, untrustedMessage, type LoadedConfig } from '../../config';
import { delegate, type DelegateOptions } from '../launch/delegate';
import { DelegationRefusedError, resolveDelegation, type DelegationRequest, type LaunchDraft, type RefusalCode } from '../resolve/resolve';
import { DELEGATION_SOCKET_ENV, SupervisorRefusal, askSupervisor, delegationSocket, markRelayed } from '../store/delegation-socket';
import type { SkippedAgent } from '../../config';
import { agentCatalogue } from './agents';

/** What a front end asks for: the delegation request; the workspace defaults to the root. */
export type DelegateTaskRequest = Omit<DelegationRequest, 'workspace'> & { workspace?: string };

export interface DelegateTaskOptions {
  /** The caller's environment: $CAESAR_DEPTH / $CAESAR_TASK_ID (recursion), PATH (agent lookup), $HOME (config). */
  env?: NodeJS.ProcessEnv;
  /** Added to the supervisor's environment only (tests: CAESAR_KILL_GRACE_MS). */
  supervisorEnv?: NodeJS.ProcessEnv;
  /** The CLI bundle the supervisor runs from (default: see delegate()). */
  cliScript?: string;
  /**
   * Who vouches for the repository's config (see LoadOptions.trusted): unset = the user's trust store (the CLI, the
   * MCP server: an untrusted file naming programs refuses the delegation); false = an untrusted workspace (its
   * programs are left out); true = the editor's Workspace Trust, which records the same trust.
   */
  trusted?: boolean;
  /** Set on the launch after resolution (Continue with Feedback: the commit to start from and the task continued). */
  launch?: Pick<LaunchDraft, 'base_commit' | 'parent_task_id'>;
  /** Applied to the resolved launch before the task is created; may refuse (the delegation server: never looser than the parent). */
  tighten?: (launch: LaunchDraft) => Promise<LaunchDraft>;
}

export interface DelegatedTask {
  id: string;
  taskDir: string;
  root: string;
  /** The settings the task runs with, as resolved from the request, its role and the policy. */
  launch: LaunchDraft;
  /** Things to tell the user (network not closable, model not applied…); also info findings in the report. */
  warnings: string[];
  /** Agents of the role passed over, with why. */
  skipped: SkippedAgent[];
  /** The Slurm job that runs the task's supervisor, when it runs as one. */
  jobId?: string;
}

/**
 * The "delegate" use case every front end calls (CLI `run`, MCP `caesar_delegate`, the extension's Delegate flow):
 * load the configuration layers → build the agent catalogue → resolve the delegation (policy, role, mode, isolation,
 * network, model, timeout) → create the task directory (state `pending`, visible at once everywhere) and start its
 * detached supervisor. Returns as soon as the supervisor is started; it never waits for the agent.
 * Refusals (bad configuration included) are DelegationRefusedError, raised before anything is written.
 */
export async function delegateTask(root: string, request: DelegateTaskRequest, options: DelegateTaskOptions = {}): Promise<DelegatedTask> {
  const env = options.env ?? process.env;
  const absoluteRoot = path.resolve(root);
  // Inside a sandboxed task, `.caesar/` is read-only: the task's supervisor starts the sub-task (delegation-socket.ts).
  const socket = delegationSocket(env);
  if (socket) {
    // What a follow-up carries (a commit to start from) is no part of what the supervisor lets an agent ask for.
    if (options.launch) throw new DelegationRefusedError('usage', 'Continuing a task is not available from inside a sandboxed task: delegate a new task instead (caesar run).');
    return delegateThroughSupervisor(socket, absoluteRoot, request);
  }
  // Inside the sandbox without the socket (an MCP server whose CLI thinned its environment): say so, not EROFS.
  if (env.CAESAR_SANDBOXED) throw new DelegationRefusedError('usage', `This runs inside a sandboxed task, where .caesar/ is read-only, but without $${DELEGATION_SOCKET_ENV}, through which its supervisor delegates: keep that variable in the environment of the process that delegates (an MCP server's configuration may have to pass it on).`);
  let loaded: LoadedConfig;
  try {
    loaded = await loadConfig({ root: absoluteRoot, env, ...(options.trusted !== undefined ? { trusted: options.trusted } : {}) });
  } catch (err) {
    throw new DelegationRefusedError('config', (err as Error).message);
  }
  // Programs named by a repository file the user has not trusted never run, and neither does the rest of the task:
  // without them it would not be the task that configuration describes.
  if (loaded.untrusted.length) throw new DelegationRefusedError('untrusted', untrustedMessage(loaded.untrusted, absoluteRoot));
  const catalogue = agentCatalogue(loaded, { env, root: absoluteRoot });
  const workspace = path.resolve(request.workspace ?? absoluteRoot);
  const resolution = await resolveDelegation({ ...request, workspace }, { loaded, catalogue, root: absoluteRoot, env });
  const delegateOptions: DelegateOptions = {
    ...(options.supervisorEnv ? { env: options.supervisorEnv } : {}),
    ...(options.cliScript ? { cliScript: options.cliScript } : {}),
  };
  const resolved: LaunchDraft = { ...resolution.launch, ...options.launch };
  const launch = options.tighten ? await options.tighten(resolved) : resolved;
  const pool = loaded.config.worktree.pool;
  const { id, taskDir, jobId } = await delegate({ ...launch, ...(pool ? { worktree_pool: pool } : {}), root: absoluteRoot }, delegateOptions);
  return { id, taskDir, root: absoluteRoot, launch, warnings: resolution.warnings, skipped: resolution.skipped, ...(jobId ? { jobId } : {}) };
}

/** The delegation sent to this task's supervisor, which decides it and starts the sub-task; its refusal is ours. */
async function delegateThroughSupervisor(socket: string, root: string, request: DelegateTaskRequest): Promise<DelegatedTask> {
  const { workspace, ...fields } = request;
  let task: DelegatedTask;
  try {
    task = (await askSupervisor(socket, { op: 'delegate', root, workspace: path.resolve(workspace ?? root), request: fields })) as DelegatedTask;
  } catch (err) {
    if (err instanceof SupervisorRefusal) throw new DelegationRefusedError(err.code as RefusalCode, err.message);
    throw err;
  }
  markRelayed(task.root, task.id);
  return task;
}

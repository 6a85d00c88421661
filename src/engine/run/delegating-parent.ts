import type { LaunchSpec, TaskPaths } from '../../protocol';
import type { Mount } from '../sandbox/policy';
import type { Placement } from './isolation';

/*
 * Delegation from inside the sandbox, as the supervisor sees it: the task whose agent may ask (built from its own
 * launch) and the offer of a socket to ask through. The server that answers, and the policy it applies, are use cases
 * of engine/tasks (they start tasks): engine/tasks/supervise.ts hands the supervisor `offerDelegation`.
 */

/** The task whose agent asks, as its supervisor knows it. */
export interface DelegatingParent {
  root: string;
  id: string;
  launch: LaunchSpec;
  /** Its worktree, when it has one: a `caesar` run there resolves its root and workspace inside it. */
  worktree?: string;
  /** Its network is cut (task.json says `network: false`): a child's must be too. */
  networkCut: boolean;
  /** It writes the user's checkout in place: only then may a child do the same. */
  writesInPlace: boolean;
}

export function delegatingParent(paths: Pick<TaskPaths, 'root'>, launch: LaunchSpec, placement: Placement, networkCut: boolean): DelegatingParent {
  return {
    root: paths.root,
    id: launch.id,
    launch,
    ...(placement.worktree ? { worktree: placement.worktree.path } : {}),
    networkCut,
    writesInPlace: launch.mode === 'write' && !placement.worktree,
  };
}

/** Opens the socket for a sandboxed agent and names it in the agent's environment (tasks/delegation-server.ts). */
export type OfferDelegation = (parent: DelegatingParent, env: NodeJS.ProcessEnv, log: (message: string) => void) => Promise<DelegationOffer>;

export interface DelegationOffer {
  /** For the sandbox: the socket's folder, read-only at its own path. */
  mounts: Mount[];
  /** Keeps the offer for a confined agent; an unconfined one writes `.caesar/` itself and gets none. */
  settle(confined: boolean): Promise<void>;
  close(): Promise<void>;
}

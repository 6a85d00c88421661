import type { AgentAdapter, SpawnPlan } from '../../agents/types';
import type { LaunchSpec, TaskPaths } from '../../protocol';
import { guardCheckout } from '../git/checkout-guard';
import type { Mount } from '../sandbox/policy';
import { prepareSandbox, type NetworkDecision, type PreparedSandbox } from '../sandbox/sandbox';
import { findingsOnceConfined, type Placement } from './isolation';
import { agentCannotBeSandboxed, cutNetwork, insidePlanOf } from './task-network';

export interface ConfineInput {
  plan: SpawnPlan;
  env: NodeJS.ProcessEnv;
  launch: LaunchSpec;
  adapter: AgentAdapter;
  placement: Placement;
  paths: TaskPaths;
  /** The agent's own run; false for a check Caesar runs after it (confined all the same, its findings not repeated). */
  forAgent: boolean;
  network?: NetworkDecision;
  /** What the agent is shown of its supervisor's delegation socket (delegating-parent.ts). */
  delegationMounts?: Mount[];
}

/**
 * The plan inside the operating-system sandbox (src/engine/sandbox/), or as is with a finding saying why not;
 * `[sandbox] mode = "required"` on a machine without it throws, and the task fails before the agent starts. Its
 * record reaches state.json with the `running` update (no write of its own).
 */
export async function confineRun(input: ConfineInput): Promise<PreparedSandbox> {
  const { plan, launch, adapter, placement, forAgent, network } = input;
  const cannotBeSandboxed = forAgent ? agentCannotBeSandboxed(launch, adapter) : undefined;
  const sandbox = await prepareSandbox({
    settings: launch.sandbox,
    plan,
    env: input.env,
    agentId: adapter.id,
    mode: launch.mode,
    workspace: placement.worktree?.path ?? placement.workspace,
    worktree: placement.worktree?.path,
    gitRoot: placement.gitRoot,
    paths: input.paths,
    // That reason is the agent's (its own sandbox cannot nest in ours): a check is confined all the same.
    ...(cannotBeSandboxed ? { cannotBeSandboxed } : {}),
    ...(forAgent ? insidePlanOf(plan, launch, adapter) : {}),
    ...(forAgent ? { mounts: input.delegationMounts } : { check: true }),
    // The agent's network only: a check is the user's own command, on the host's network.
    ...(network?.cut ? { network: cutNetwork(network) } : {}),
  });
  // task.json already says `network: false`: a sandbox that did not confine would make it a lie.
  if (network?.cut && !sandbox.record.confined) throw new Error(`The network was to be cut in the sandbox, but the agent is not confined (${sandbox.record.reason ?? 'unknown reason'}).`);
  // A check's sandbox repeats the agent's findings (not sandboxed, and why): recorded once, for the agent.
  if (!forAgent) return sandbox;
  placement.findings.push(...sandbox.findings);
  // Read-only is now the kernel's fact: the findings that said it rested on the agent's word no longer hold.
  if (sandbox.record.confined) placement.findings.splice(0, placement.findings.length, ...findingsOnceConfined(placement.findings, launch.mode));
  return sandbox;
}

/**
 * The checkout guard's snapshot, when preparePlacement left it out (the sandbox was to confine the agent) and the
 * sandbox leaves the checkout writable after all (a `[sandbox] read_write` folder above or inside it): taken before
 * the agent starts, as an unconfined task's is.
 */
export async function guardCheckoutIfWritable(placement: Placement, sandbox: PreparedSandbox, taskDir: string): Promise<void> {
  if (!placement.worktree || !placement.gitRoot || placement.checkout) return;
  if (sandbox.keepsCheckoutReadOnly(placement.gitRoot)) return;
  placement.checkout = await guardCheckout(placement.gitRoot, undefined, taskDir);
}

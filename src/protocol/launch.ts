import { z } from './zod';
import { FindingSchema } from './report';
import { IsolationSchema, ModeSchema } from './task';
import { isSafeId } from './task-dir';

/**
 * A `[[agent]]` template definition as resolved from the configuration (reference §3.6), carried inside the launch
 * so the supervisor needs no configuration of its own: the task directory is a self-contained work order.
 */
export const GenericAgentDefSchema = z.object({
  id: z.string().min(1),
  bin: z.string().min(1),
  args: z.array(z.string()).default([]),
  network_args: z.array(z.string()).optional(),
  display_name: z.string().optional(),
  cwd_mode: z.enum(['process', 'flag']).optional(),
  native_read_only: z.boolean().optional(),
});
export type GenericAgentDef = z.infer<typeof GenericAgentDefSchema>;

/**
 * Where a task's supervisor runs: a detached local process (the default), or a job of a Slurm cluster that runs
 * `caesar supervise <taskDir>` on a node seeing the same file system. The Slurm fields map to sbatch's options.
 */
export const SlurmLauncherSchema = z.object({
  kind: z.literal('slurm'),
  partition: z.string().min(1).optional(),
  /** sbatch --time, e.g. "30" (minutes) or "1:00:00". */
  time: z.string().min(1).optional(),
  cpus: z.number().int().positive().optional(),
  /** sbatch --mem, e.g. "4G". */
  mem: z.string().min(1).optional(),
  /** Further sbatch options, each `--name=value` (or a bare `--name`) from an allow-list (src/engine/launch/slurm.ts). */
  extra_args: z.array(z.string()).default([]),
});
export const LauncherSchema = z.discriminatedUnion('kind', [z.object({ kind: z.literal('local') }), SlurmLauncherSchema]);
export type Launcher = z.infer<typeof LauncherSchema>;
export type SlurmLauncher = z.infer<typeof SlurmLauncherSchema>;

/** `<taskDir>/launcher.json`: what the job system said when it took the task. Written once by delegate(). */
export const LauncherRecordSchema = z.object({
  kind: z.literal('slurm'),
  job_id: z.string().regex(/^[0-9]+(_[0-9]+)?$/, 'not a Slurm job id'),
  submitted_at: z.string(),
  /** The cluster's name when sbatch --parsable printed one ("<id>;<cluster>"). */
  cluster: z.string().optional(),
});
export type LauncherRecord = z.infer<typeof LauncherRecordSchema>;

/** One check of a task: what it is called, the shell command Caesar runs, and when it is killed. */
export const CheckSpecSchema = z.object({
  name: z.string().min(1),
  command: z.string().min(1),
  timeout_ms: z.number().int().positive(),
});
export type CheckSpec = z.infer<typeof CheckSpecSchema>;

/**
 * `<taskDir>/launch.json`: the resolved delegation, written once by delegate() before the supervisor starts and never
 * modified afterwards. Everything the supervisor does is decided from this file (plus the repository it points at).
 */
export const LaunchSpecSchema = z.object({
  id: z.string().refine(isSafeId, 'not a safe task id'),
  root: z.string().min(1),
  workspace: z.string().min(1),
  agent: z.string().min(1),
  role: z.string().optional(),
  objective: z.string().min(1),
  context: z.string().default(''),
  constraints: z.array(z.string()).default([]),
  acceptance_criteria: z.array(z.string()).default([]),
  mode: ModeSchema,
  isolation: z.union([IsolationSchema, z.literal('auto')]),
  network: z.boolean(),
  /**
   * The delegation asked for the network closed (`off`, or `auto` for a read-only task): the supervisor cuts it in the
   * sandbox where it can (src/engine/sandbox/network.ts), and only then does task.json say `network: false`.
   */
  network_cut: z.boolean().default(false),
  model: z.string().optional(),
  timeout_ms: z.number().int().positive(),
  depth: z.number().int().nonnegative().default(0),
  /** The task whose agent delegated this one ($CAESAR_TASK_ID at delegation), so UIs can nest sub-tasks. */
  parent_task_id: z.string().refine(isSafeId, 'not a safe task id').optional(),
  /**
   * Continue with Feedback: the worktree starts from this commit (a snapshot of an earlier task's worktree, whose
   * first parent is that task's base_ref) instead of HEAD. base_ref stays that parent, so the new task's diff, and
   * so Apply, carries the earlier task's changes plus the new ones.
   */
  base_commit: z.string().regex(/^[0-9a-f]{40,64}$/, 'not a commit id').optional(),
  channel: z.boolean().default(false),
  extra_args: z.array(z.string()).default([]),
  allow_inplace_write: z.boolean().default(false),
  worktree_setup: z
    .object({
      copy: z.array(z.string()).default([]),
      link: z.array(z.string()).default([]),
      setup: z.array(z.string()).default([]),
    })
    .default({ copy: [], link: [], setup: [] }),
  /**
   * Checks Caesar runs itself after the agent ended (`[[check]]`, a role's `checks`, `--check`): each a shell command
   * run in the task's workspace inside its sandbox, killed at its timeout (src/engine/run/checks.ts).
   */
  checks: z.array(CheckSpecSchema).default([]),
  /** `[worktree] pool` of the configuration: warm worktrees the supervisor keeps for this repository (0 = none). */
  worktree_pool: z.number().int().min(0).max(16).optional(),
  generic_agent: GenericAgentDefSchema.optional(),
  findings: z.array(FindingSchema).default([]),
  /** Slots shared by every task of this root; resolved from policy at delegation time. Default 4. */
  max_parallel: z.number().int().positive().optional(),
  /**
   * The agent's environment (`[policy] env`, or the request's `minimal`): `inherit` passes the supervisor's whole
   * environment on; `minimal` the base set, caesar's variables, the adapter's documented keys and `env_allow`. Names
   * only: no value of the environment is ever written to the task directory.
   */
  env_policy: z.enum(['inherit', 'minimal']).default('inherit'),
  env_allow: z.array(z.string()).default([]),
  /** How the agent is driven: its own JSON stream (`stream`) or the Agent Client Protocol over stdio (`acp`). */
  transport: z.enum(['stream', 'acp']).default('stream'),
  /**
   * ACP permission requests (`[policy] permissions`): `ask` puts each to the user as a question; `allow-in-worktree`
   * allows them when the task runs in a worktree; `deny` rejects them all. Read-only tasks never allow a write.
   */
  permissions: z.enum(['ask', 'allow-in-worktree', 'deny']).default('ask'),
  /** Where the supervisor runs (`[launcher]`, a role's `launcher`, or the delegation's): local unless said. */
  launcher: LauncherSchema.default({ kind: 'local' }),
  /**
   * `[sandbox]` of the configuration (src/engine/sandbox/): confine the agent with bubblewrap (`auto`: where it runs,
   * else a high finding; `required`: or refuse; `off`), extra paths hidden and extra paths writable. Absent: `auto`.
   */
  sandbox: z
    .object({
      mode: z.enum(['auto', 'required', 'off']).optional(),
      hide: z.array(z.string()).default([]),
      read_write: z.array(z.string()).default([]),
      /** What a task whose network is cut may still reach, besides its agent's model endpoint: `host:port` or URLs. */
      allow_hosts: z.array(z.string()).default([]),
    })
    .optional(),
  created_at: z.string(),
});
export type LaunchSpec = z.infer<typeof LaunchSpecSchema>;
export type LaunchSpecInput = z.input<typeof LaunchSpecSchema>;

export function parseLaunchSpec(value: unknown): LaunchSpec {
  const result = LaunchSpecSchema.safeParse(value);
  if (!result.success) {
    const issues = result.error.issues.map((i) => `${i.path.join('.') || '(document)'}: ${i.message}`).join('; ');
    throw new Error(`Invalid launch spec: ${issues}`);
  }
  return result.data;
}

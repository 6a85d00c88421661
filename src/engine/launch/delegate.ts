import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { CAESAR_DIR, assertSafeId, newTaskId, taskPaths, tasksDir } from '../../protocol';
import { resolveAdapter } from '../../agents/registry';
import { createExclusive } from '../../base/atomic';
import { writeSealedJson } from '../store/record-seal';
import { writeLaunchSpec } from '../store/launch-spec';
import { submitSupervisorJob } from './slurm-launcher';
import { locateSupervisor, spawnSupervisor, supervisorEnv, takeStandby } from './supervisor-process';
import { handOffToIdle, startIdleSupervisor } from './warm-client';
import { LaunchSpecSchema, parseLaunchSpec, type LaunchSpec, type LaunchSpecInput } from '../../protocol';
import type { TaskState } from '../../protocol';

/** A resolved delegation (see resolve.ts) plus where it runs; the id is generated unless imposed. */
export type DelegateInput = Omit<LaunchSpecInput, 'id' | 'created_at'> & { id?: string; created_at?: string };

export interface DelegateOptions {
  /** Added to the supervisor's environment (and so the agent's), e.g. CAESAR_KILL_GRACE_MS in tests. */
  env?: NodeJS.ProcessEnv;
  /**
   * The CLI bundle (default: $CAESAR_CLI_JS, beside the running bundle, or the package's dist/). The supervisor runs
   * from the lean supervisor.js beside it when that exists, else from this bundle itself (`caesar supervise`).
   */
  cliScript?: string;
}

export interface Delegated {
  id: string;
  taskDir: string;
  supervisorPid?: number;
  /** The Slurm job that will run the supervisor (`[launcher] kind = "slurm"`). */
  jobId?: string;
}

export class TaskExistsError extends Error {
  override readonly name = 'TaskExistsError';
}

/**
 * Starts a task: validates the launch, creates `.caesar/tasks/<id>/` with state.json `pending` AT ONCE (so every
 * process sees the task from this moment, reference §8.13 fixed) and launch.json, then spawns the task's detached
 * supervisor (`caesar supervise <taskDir>`) and returns. The task outlives the caller: closing the window or the
 * terminal that delegated it does not stop it (DESIGN.md principle 3).
 */
export async function delegate(input: DelegateInput, options: DelegateOptions = {}): Promise<Delegated> {
  const id = input.id ?? newTaskId();
  assertSafeId(id, 'task id');
  const spec = parseLaunchSpec({ ...input, id, created_at: input.created_at ?? new Date().toISOString() });
  spec.root = path.resolve(spec.root);
  spec.workspace = path.resolve(spec.workspace);
  // Refuse an unknown agent before anything is written: a refusal leaves no directory behind.
  resolveAdapter(spec.agent, spec.generic_agent ? [spec.generic_agent] : []);
  const supervisorScript = locateSupervisor(options);

  const paths = taskPaths(spec.root, id);
  await fs.mkdir(tasksDir(spec.root), { recursive: true });
  await ensureCaesarGitignore(spec.root);
  try {
    await fs.mkdir(paths.dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') throw new TaskExistsError(`Task "${id}" already exists (${paths.dir}).`);
    throw err;
  }
  await writeSealedJson(paths.state, 'state', initialState(spec));
  await writeLaunchSpec(spec.root, LaunchSpecSchema.parse(spec));
  if (spec.launcher.kind === 'slurm') {
    try {
      const job = await submitSupervisorJob({ spec, launcher: spec.launcher, paths, supervisorScript, ...(options.env ? { extraEnv: options.env } : {}) });
      return { id, taskDir: paths.dir, jobId: job.job_id };
    } catch (err) {
      // No job exists, so this is still the only writer of state.json: record why the task cannot run.
      const error = (err as Error).message;
      await writeSealedJson(paths.state, 'state', { ...initialState(spec), status: 'failed', ended_at: new Date().toISOString(), error, phase: undefined });
      throw err;
    }
  }
  const supervisorPid = await startSupervisor(supervisorScript, paths.dir, paths.supervisorLog, spec.root, options.env);
  if (supervisorPid === undefined) {
    // No supervisor exists, so this is still the only writer of state.json: record why the task cannot run.
    const error = `Could not start the task's supervisor (${process.execPath} ${supervisorScript}); see ${paths.supervisorLog}.`;
    await writeSealedJson(paths.state, 'state', { ...initialState(spec), status: 'failed', ended_at: new Date().toISOString(), error, phase: undefined });
    throw new Error(error);
  }
  return { id, taskDir: paths.dir, ...(supervisorPid ? { supervisorPid } : {}) };
}

/**
 * Task folders, worktrees and slot files are machine-local: a `.caesar/.gitignore` keeps them out of `git status` and
 * out of commits from the first delegation on, without touching the user's own .gitignore. The project config
 * (`.caesar/config.toml`) and role prompts stay committable. An existing file is the user's and is left alone.
 */
export async function ensureCaesarGitignore(root: string): Promise<void> {
  const file = path.join(root, CAESAR_DIR, '.gitignore');
  const content = '# Written by Caesar: machine-local task state. config.toml and roles/ are meant to be committed.\n.gitignore\ntasks/\nwt/\nstate/\nconfig.local.toml\n';
  // Present after the first delegation: one lstat then, instead of a temp file written, linked and removed each time.
  if (await fs.lstat(file).then(() => true, () => false)) return;
  await createExclusive(file, content).catch(() => false);
}

export function initialState(spec: LaunchSpec): TaskState {
  return {
    id: spec.id,
    status: 'pending',
    agent: spec.agent,
    ...(spec.role ? { role: spec.role } : {}),
    objective: spec.objective,
    mode: spec.mode,
    isolation: spec.isolation,
    network: spec.network,
    ...(spec.model ? { model: spec.model } : {}),
    timeout_ms: spec.timeout_ms,
    depth: spec.depth,
    ...(spec.parent_task_id ? { parent_task_id: spec.parent_task_id } : {}),
    created_at: spec.created_at,
    root: spec.root,
    workspace: spec.workspace,
    excluded_paths: [],
    phase: spec.launcher.kind === 'slurm' ? 'submitted to Slurm' : 'starting',
  };
}

/**
 * The task's supervisor, the first of: the user's idle warm supervisor (warm-client.ts: no Node start at all), the
 * standby the CLI's loader started for it (`caesar run`: its start-up overlapped the CLI's), a fresh process. A
 * standby or idle one that cannot take the task is ended first, so a task never gets two supervisors. Then the next
 * idle supervisor is started in the background for the next task (detached; it is on no task's critical path).
 */
async function startSupervisor(script: string, taskDir: string, logFile: string, cwd: string, extraEnv?: NodeJS.ProcessEnv): Promise<number | undefined> {
  const standby = takeStandby(script);
  const assignment = { taskDir, cwd, env: supervisorEnv(extraEnv) };
  let pid = await handOffToIdle(script, assignment);
  if (pid !== undefined) standby?.dispose();
  else if (standby) pid = await standby.assign(assignment);
  pid ??= spawnSupervisor(script, taskDir, logFile, cwd, extraEnv);
  startIdleSupervisor(script);
  return pid;
}

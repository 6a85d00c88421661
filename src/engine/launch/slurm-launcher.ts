import { promises as fs } from 'node:fs';
import { resolveAdapter } from '../../agents/registry';
import { writeJsonAtomic } from '../../base/atomic';
import { sbatchArgProblem } from '../../config/launcher';
import type { LaunchSpec, LauncherRecord, SlurmLauncher, TaskPaths } from '../../protocol';
import { forgetSlurmQueue, parseSubmission, runSlurm } from '../cluster/slurm';
import { channelLauncher } from '../run/channel-launcher';
import { minimalEnv } from '../sandbox/agent-env';
import { SUPERVISOR_V8_FLAGS } from './supervisor-process';

/*
 * The Slurm launcher: the task's supervisor becomes a batch job. The task directory is the bus, so the job needs
 * nothing but a node that sees the same file system (the repository with its .caesar/): it runs `caesar supervise
 * <taskDir>` like a local supervisor, writes the same files, and every reader follows it the same way.
 * Only what the task needs crosses into the job (`--export=NONE` plus names): Slurm's default, --export=ALL, would
 * hand every secret of the submitting shell to it.
 */

export class SlurmSubmitError extends Error {
  override readonly name = 'SlurmSubmitError';
}

/** Writes the job script, submits it, records the job id in launcher.json (its one writer), and returns the record. */
export async function submitSupervisorJob(input: {
  spec: LaunchSpec;
  launcher: SlurmLauncher;
  paths: TaskPaths;
  supervisorScript: string;
  extraEnv?: NodeJS.ProcessEnv;
}): Promise<LauncherRecord> {
  const { spec, launcher, paths } = input;
  // launch.json is in a folder an agent can write: the arguments are checked again where they are used.
  const problem = sbatchArgProblem(launcher.extra_args);
  if (problem) throw new SlurmSubmitError(`Not submitted: ${problem}.`);
  const node = channelLauncher()?.node ?? process.execPath;
  await fs.writeFile(paths.jobScript, jobScript(node, input.supervisorScript, paths.dir), { mode: 0o700, flag: 'wx' });
  const env = jobEnvironment(spec, input.extraEnv);
  const args = sbatchArguments(spec, launcher, paths, Object.keys(env));
  const run = await runSlurm('sbatch', args, { ...process.env, ...env });
  forgetSlurmQueue();
  if (run.missing) throw new SlurmSubmitError('Not submitted: sbatch is not installed here (Slurm\'s client commands must be on PATH), or use [launcher] kind = "local".');
  const submitted = run.code === 0 ? parseSubmission(run.stdout) : undefined;
  if (!submitted) throw new SlurmSubmitError(`sbatch refused the task's job (exit ${run.code ?? 'none'}): ${(run.stderr || run.stdout).trim().slice(0, 2000)}`);
  const record: LauncherRecord = { kind: 'slurm', ...submitted, submitted_at: new Date().toISOString() };
  await writeJsonAtomic(paths.launcher, record);
  return record;
}

/**
 * The job script. The node must see the task directory (the shared file system): when it does not, the job says so
 * in its output and fails at once, and the submitting side reports the task lost with that reason.
 */
export function jobScript(node: string, supervisorScript: string, taskDir: string): string {
  const q = shellQuote;
  return [
    '#!/bin/sh',
    '# Written by caesar: this task\'s supervisor, as a Slurm job. The task directory is its whole work order.',
    `if [ ! -d ${q(taskDir)} ]; then`,
    `  echo ${q(`caesar: this node (\`hostname\`) cannot see the task directory ${taskDir}: the repository, with its .caesar/, must be on a file system every node of the cluster sees.`)} >&2`,
    '  exit 97',
    'fi',
    `exec ${[node, ...SUPERVISOR_V8_FLAGS, supervisorScript, 'supervise', taskDir].map(q).join(' ')}`,
    '',
  ].join('\n');
}

export function sbatchArguments(spec: LaunchSpec, launcher: SlurmLauncher, paths: TaskPaths, exported: string[]): string[] {
  return [
    '--parsable',
    `--job-name=caesar-${spec.id}`,
    `--chdir=${spec.root}`,
    `--output=${paths.supervisorLog}`,
    '--open-mode=append',
    // Names only: each value is taken from sbatch's own environment, so none appears on a command line.
    `--export=${['NONE', ...exported].join(',')}`,
    ...(launcher.partition ? [`--partition=${launcher.partition}`] : []),
    ...(launcher.time ? [`--time=${launcher.time}`] : []),
    ...(launcher.cpus ? [`--cpus-per-task=${launcher.cpus}`] : []),
    ...(launcher.mem ? [`--mem=${launcher.mem}`] : []),
    ...launcher.extra_args,
    paths.jobScript,
  ];
}

/**
 * What the job's environment holds: the minimal set (whatever `[policy] env` says: under Slurm, inherit would mean
 * the submitting shell's secrets on another machine), the agent's documented keys, the policy's env_allow, and what
 * the delegation itself added. Names with a comma cannot be passed to --export and are left out.
 */
export function jobEnvironment(spec: LaunchSpec, extraEnv: NodeJS.ProcessEnv = {}): Record<string, string> {
  const adapter = resolveAdapter(spec.agent, spec.generic_agent ? [spec.generic_agent] : []);
  const chosen = { ...minimalEnv({ ...process.env, ...extraEnv }, adapter.envKeys ?? [], spec.env_allow), ...extraEnv };
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(chosen)) {
    if (value !== undefined && /^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) env[name] = value;
  }
  return env;
}

function shellQuote(text: string): string {
  return `'${text.replaceAll("'", `'\\''`)}'`;
}

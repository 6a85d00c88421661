import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import type { SpawnPlan } from '../../agents/types';
import type { CheckResult, CheckSpec } from '../../protocol';
import { runAgentProcess } from '../process/spawn';

/*
 * Checks: shell commands Caesar runs itself in the task's workspace once the agent has ended (`[[check]]`, a role's
 * `checks`, `--check`). The agent's `commands_run` is its claim; a check's exit code is what Caesar observed. Each
 * runs in its own process group (runAgentProcess), killed at its timeout, its output in `checks/<n>.log` and the
 * last bytes of it in result.json.
 */

/** How much of a check's output result.json keeps: the end, where a test runner prints its verdict. */
export const CHECK_TAIL_BYTES = 4096;

export interface RunChecksOptions {
  checks: CheckSpec[];
  /** Where each runs: the worktree, or the workspace of an in-place task. */
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** The task folder: the logs go to its `checks/` folder. */
  taskDir: string;
  graceMs: number;
  signal?: AbortSignal;
  /** The check's plan as it is spawned: inside the task's sandbox, like the agent (sandbox.ts). */
  confine(plan: SpawnPlan): Promise<{ plan: SpawnPlan; finish(): Promise<void> }>;
  onStart?(check: CheckSpec, index: number): void;
  onEnd?(result: CheckResult, index: number): void;
}

/** Runs every check in order (a failed one does not stop the next: each is evidence of its own). */
export async function runChecks(options: RunChecksOptions): Promise<CheckResult[]> {
  const results: CheckResult[] = [];
  if (!options.checks.length) return results;
  const dir = path.join(options.taskDir, 'checks');
  await fs.mkdir(dir, { recursive: true, mode: 0o700 });
  for (const [index, check] of options.checks.entries()) {
    options.onStart?.(check, index);
    const result = options.signal?.aborted
      ? { name: check.name, command: check.command, exit_code: null, duration_ms: 0, output_tail: '', error: 'not run: the task was cancelled' }
      : await runOne(check, path.join(dir, `${index + 1}.log`), options);
    results.push(result);
    options.onEnd?.(result, index);
  }
  return results;
}

async function runOne(check: CheckSpec, logPath: string, options: RunChecksOptions): Promise<CheckResult> {
  const plan: SpawnPlan = { command: '/bin/sh', args: ['-c', check.command], cwd: options.cwd, display: `sh -c ${JSON.stringify(check.command)}` };
  let confined: Awaited<ReturnType<RunChecksOptions['confine']>>;
  try {
    confined = await options.confine(plan);
  } catch (err) {
    // No sandbox for it (e.g. `[sandbox] mode = "required"` and bwrap gone since the agent started): not run, failed.
    return { name: check.name, command: check.command, exit_code: null, duration_ms: 0, output_tail: '', error: `not run: ${err instanceof Error ? err.message : String(err)}` };
  }
  const run = await runAgentProcess({
    plan: confined.plan,
    env: options.env,
    rawLogPath: logPath,
    timeoutMs: check.timeout_ms,
    graceMs: options.graceMs,
    ...(options.signal ? { signal: options.signal } : {}),
    onStdoutLines: () => undefined,
  }).finally(() => confined.finish());
  const error = run.spawnError
    ? `could not start: ${run.spawnError}`
    : run.timedOut
      ? `killed at its timeout (${formatMs(check.timeout_ms)})`
      : run.cancelled
        ? 'stopped: the task was cancelled'
        : run.writeError
          ? `its output could not be written: ${run.writeError}`
          : run.exitCode === null
            ? `ended by ${run.signal ?? 'a signal'}`
            : undefined;
  return {
    name: check.name,
    command: check.command,
    exit_code: run.timedOut || run.cancelled ? null : run.exitCode,
    duration_ms: Math.max(0, Math.round(run.durationMs)),
    output_tail: await readTail(logPath, CHECK_TAIL_BYTES),
    ...(run.timedOut ? { timed_out: true } : {}),
    ...(error ? { error } : {}),
  };
}

/** The last `bytes` of a file, as text starting at a line boundary where one is near; '' when unreadable. */
export async function readTail(file: string, bytes: number): Promise<string> {
  const handle = await fs.open(file, 'r').catch(() => undefined);
  if (!handle) return '';
  try {
    const { size } = await handle.stat();
    const length = Math.min(size, bytes);
    const buffer = Buffer.alloc(length);
    await handle.read(buffer, 0, length, size - length);
    let text = buffer.toString('utf8');
    if (length < size) {
      const newline = text.indexOf('\n');
      if (newline >= 0 && newline < 200) text = text.slice(newline + 1);
    }
    return text;
  } finally {
    await handle.close();
  }
}

function formatMs(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`;
}

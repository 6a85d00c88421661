import type { CheckResult, LaunchSpec } from '../../protocol';
import { materialize } from '../git/workshop';
import { runChecks } from '../run/checks';
import { minimalEnv } from '../sandbox/agent-env';
import { prepareSandbox } from '../sandbox/sandbox';

/** How long a check's process group gets between SIGTERM and SIGKILL (as the supervisor's default grace). */
const CHECK_GRACE_MS = 2_000;

/**
 * Runs the task's own checks (launch.json's: `[[check]]`, its role's, `--check`) on the combined result in the
 * scratch worktree, each inside a sandbox like the task's (its [sandbox] settings, its read-only or write mode) when
 * the sandbox is on, with the environment its env policy allows. The workshop's copied and linked folders
 * (node_modules…) are laid down first so a test runner finds them; its setup commands are not run again.
 * Logs go to `<logDir>/checks/<n>.log`, never over the task's own check logs.
 */
export async function runLandChecks(options: {
  root: string;
  checkout: string;
  scratch: string;
  launch: LaunchSpec;
  logDir: string;
  signal?: AbortSignal;
  onCheck?(message: string): void;
}): Promise<CheckResult[]> {
  const { launch, scratch } = options;
  if (!launch.checks.length) return [];
  const setup = launch.worktree_setup;
  if (setup.copy.length || setup.link.length) {
    await materialize({ workspace: launch.workspace, worktree: scratch, copy: setup.copy, link: setup.link, setup: [] });
  }
  const env = launch.env_policy === 'minimal' ? minimalEnv(process.env, [], launch.env_allow) : { ...process.env };
  return runChecks({
    checks: launch.checks,
    cwd: scratch,
    env,
    taskDir: options.logDir,
    graceMs: CHECK_GRACE_MS,
    ...(options.signal ? { signal: options.signal } : {}),
    confine: async (plan) => {
      const sandbox = await prepareSandbox({
        settings: launch.sandbox,
        plan: { ...plan, cwd: scratch },
        env,
        agentId: launch.agent,
        mode: launch.mode,
        workspace: scratch,
        worktree: scratch,
        gitRoot: options.checkout,
        paths: { root: options.root, dir: options.logDir },
        check: true,
      });
      return { plan: sandbox.wrap(), finish: async () => void (await sandbox.finish().catch(() => [])) };
    },
    onStart: (check, index) => options.onCheck?.(`check ${index + 1}/${launch.checks.length} "${check.name}": ${check.command}`),
  });
}

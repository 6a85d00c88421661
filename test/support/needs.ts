/**
 * What a mocha test needs from this machine beyond Node and git. `await needs(this, 'bubblewrap', 'socat')` in a
 * test, or in a `before` for a whole describe: when all of it is here the test runs; when not, it is reported as
 * "not run: <reason>" and counted (test/support/not-run-hooks.ts), and under CI (any truthy CI) it fails instead.
 * Never call `this.skip()` directly: a bare skip carries no reason and reads as "skipped without a reason".
 */
import { spawnSync } from 'node:child_process';
import type { Context } from 'mocha';
import { findExecutable, sandboxPreflight } from '../../src/engine/sandbox/preflight';
import { underCi } from './ci-guard.mjs';
import { missingPackageReason, refusedUnderCi } from './not-run.mjs';

export type Need = 'bubblewrap' | 'socat' | 'curl' | 'script' | 'root';

/** Where the reason is kept on a mocha Test or Suite, for the report at the end of the run. */
export const NOT_RUN_REASON = Symbol.for('caesar.test.notRunReason');

/** Why `need` is missing on this machine; undefined when it is here. */
export async function missingNeed(need: Need, env: NodeJS.ProcessEnv = process.env): Promise<string | undefined> {
  switch (need) {
    case 'bubblewrap': {
      const sandbox = await sandboxPreflight(env);
      if (sandbox.available) return undefined;
      // An installed bwrap that cannot run here (user namespaces off) is not "bubblewrap is not installed".
      return sandbox.cause.includes('not installed') ? missingPackageReason('bubblewrap', 'bubblewrap (bwrap)') : `the sandbox cannot run here: ${sandbox.cause} (fix: ${sandbox.fix})`;
    }
    case 'socat':
      return findExecutable('socat', env, 'CAESAR_SOCAT') ? undefined : missingPackageReason('socat');
    case 'curl':
      return findExecutable('curl', env, 'CAESAR_TEST_CURL') ? undefined : missingPackageReason('curl');
    case 'script':
      return spawnSync('script', ['--version'], { env, stdio: 'ignore' }).status === 0 ? undefined : missingPackageReason('bsdutils', 'script (a pty for terminal tests)');
    case 'root':
      return process.getuid?.() === 0 ? undefined : 'it needs root (unshare -n makes a network namespace only as root; CI runs as root)';
  }
}

/** Runs the caller's test (or describe, from a `before`) only when every need is met; see the file's comment. */
export async function needs(ctx: Context, ...what: Need[]): Promise<void> {
  const reasons = (await Promise.all(what.map((need) => missingNeed(need)))).filter((r): r is string => !!r);
  if (reasons.length) notRun(ctx, reasons.join('; '));
}

/**
 * Ends the caller's test (or its describe, from a `before`) as not run for `reason`; under CI it throws instead, so
 * the test or hook fails with the reason.
 */
export function notRun(ctx: Context, reason: string): never {
  if (underCi()) throw new Error(refusedUnderCi(reason));
  const runnable = ctx.test as (Mocha.Runnable & { type?: 'test' | 'hook' }) | undefined;
  // In a test: that test. In `beforeEach`: the test about to run. In `before`: every test of its describe (mocha sets
  // currentTest there too, to the first test).
  const inBeforeAll = runnable?.type === 'hook' && runnable.title.startsWith('"before all" hook');
  const target = runnable?.type === 'test' ? runnable : inBeforeAll ? runnable?.parent : (ctx.currentTest ?? runnable?.parent);
  if (target) (target as unknown as Record<symbol, string>)[NOT_RUN_REASON] = reason;
  ctx.skip();
}

/**
 * Whether a live task must have run confined: under CI always (CI installs bubblewrap, and test/agents/live/run.mjs
 * refuses CAESAR_SANDBOX=off there), elsewhere wherever bwrap is and the run did not turn the sandbox off.
 */
export function expectConfined(env: NodeJS.ProcessEnv = process.env): boolean {
  return underCi(env) || (!!findExecutable('bwrap', env, 'CAESAR_BWRAP') && env.CAESAR_SANDBOX !== 'off');
}

/** Whether a confined task's network cut must have worked: under CI always, elsewhere wherever socat is. */
export function expectNetworkCut(env: NodeJS.ProcessEnv = process.env): boolean {
  return underCi(env) || !!findExecutable('socat', env, 'CAESAR_SOCAT');
}

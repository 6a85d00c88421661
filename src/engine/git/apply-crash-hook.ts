import { testSwitch } from '../../base/test-switches';

/*
 * Test hook of the apply transaction: CAESAR_TEST_APPLY_CRASH=<step>[:<n>] SIGKILLs this process's group (or, with the
 * prefix `self:`, only this process) at that step of apply.ts and apply-journal.ts. Used by
 * test/reliability/apply-crash.test.ts to crash at chosen moments; unset, every call here does nothing.
 */

function crashSpec(): { step: string; n: number; self: boolean } | undefined {
  const raw = testSwitch('applyCrash');
  if (!raw) return undefined;
  const self = raw.startsWith('self:');
  const [step = '', n = '0'] = (self ? raw.slice(5) : raw).split(':');
  return { step, n: Number(n), self };
}

export function crashNow(self: boolean): void {
  if (!self) {
    try {
      process.kill(-process.pid, 'SIGKILL');
    } catch {
      /* not a group leader: the process alone */
    }
  }
  process.kill(process.pid, 'SIGKILL');
}

/** Crashes at `step` (after the n-th occurrence for counted steps) when the test hook asks for it. */
export function testCrashPoint(step: string, count = 0): void {
  const spec = crashSpec();
  if (spec && spec.step === step && spec.n === count) crashNow(spec.self);
}

/** `git:<ms>`: the delay after git apply's start at which to crash, if asked. */
export function testCrashDelay(step: string): { ms: number; self: boolean } | undefined {
  const spec = crashSpec();
  return spec && spec.step === step ? { ms: spec.n, self: spec.self } : undefined;
}

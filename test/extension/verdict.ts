// What the in-editor runner (index.ts) makes of its mocha outcomes. Kept free of `vscode` so mocha can test it.

export interface Outcome {
  title: string;
  state: 'passed' | 'failed' | 'pending';
  error?: string;
  ms?: number;
}

/**
 * Set by driver.mjs when the run is under CI=true. CI itself stays out of the editor's environment (the agents the
 * tests start must not think they run in CI), so the runner learns it from this variable instead.
 */
export const FORBID_PENDING_VARIABLE = 'CAESAR_TEST_FORBID_PENDING';

export function forbidsPending(env: NodeJS.ProcessEnv = process.env): boolean {
  return env[FORBID_PENDING_VARIABLE] === '1';
}

/**
 * The summary line, and the reason the run fails (undefined: it passes). `expected` is how many tests mocha
 * registered (after a grep): each must have reported passed, failed or pending, or the run fails (a test that never
 * reported did not run). Under CI a pending test is a failure; so is a run where no test passed, unless a grep chose
 * the tests (a grep may match nothing in one of the suite folders).
 */
export function verdict(outcomes: Outcome[], forbidPending: boolean, grep = false, expected?: number): { summary: string; failure?: string } {
  const count = (state: Outcome['state']) => outcomes.filter((o) => o.state === state).length;
  const [passed, failed, pending] = [count('passed'), count('failed'), count('pending')];
  const summary = `in-editor tests: ${passed} passed, ${failed} failed, ${pending} pending${expected === undefined ? '' : ` of ${expected} registered`}`;
  if (failed) return { summary, failure: `${failed} in-editor test(s) failed` };
  if (expected !== undefined && outcomes.length !== expected) {
    return { summary, failure: `${expected} in-editor test(s) registered but ${outcomes.length} reported: the others never ran` };
  }
  if (pending && forbidPending) {
    const titles = outcomes.filter((o) => o.state === 'pending').map((o) => o.title);
    return { summary, failure: `${pending} in-editor test(s) pending, which CI=true does not allow: ${titles.join('; ')}` };
  }
  if (passed === 0 && !grep) return { summary, failure: 'no in-editor test ran' };
  return { summary };
}

/** Under CI the runner takes no grep: a subset would pass for the whole suite. */
export function grepRefusal(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const grep = env.CAESAR_TEST_GREP;
  if (!grep || !forbidsPending(env)) return undefined;
  return `REFUSED under CI: CAESAR_TEST_GREP=${grep} narrows the suite, which CI=true does not allow`;
}

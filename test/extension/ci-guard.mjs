// Under CI=true the editor suite must prove everything: a switch that runs only part of it (one part of the driver,
// a grep over the in-editor tests, one step of the UI scenario) would let CI pass without running the rest. The
// editor's runners (run.mjs, the scenario) ask here before they narrow. Locally the switches stay free.
// (Same shape as test/support/ci-guard.mjs's refuseNarrowingUnderCi: the two are meant to become one.)

/** The switches the editor suite knows that run part of it only. */
export const EDITOR_NARROWING_SWITCHES = ['CAESAR_EDITOR_ONLY', 'CAESAR_TEST_GREP', 'CAESAR_UI_STEPS'];

/** CI as the runners understand it: exactly `CI=true` (what .ci/run exports). */
export function underCi(env = process.env) {
  return env.CI === 'true';
}

/** One line per switch of `switches` set (non-empty) under CI=true; empty when none is, or when not under CI. */
export function narrowingUnderCi(switches, env = process.env) {
  if (!underCi(env)) return [];
  return switches
    .filter((name) => env[name] !== undefined && env[name] !== '')
    .map((name) => `REFUSED under CI: ${name}=${env[name]} runs part of the editor suite only, which CI=true does not allow (unset it, or run without CI=true)`);
}

/** Prints every narrowing switch set under CI=true and exits 1 (a failure, never the skip code 77). */
export function refuseNarrowingUnderCi(switches, env = process.env) {
  const problems = narrowingUnderCi(switches, env);
  if (!problems.length) return;
  console.error(problems.join('\n'));
  process.exit(1);
}

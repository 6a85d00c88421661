// Under CI=true the suite must prove everything: a switch that runs only part of it (an env var naming a subset, a
// scale that cuts the case counts, a list of files on the command line) would let CI pass without running the rest.
// Every runner asks here before it narrows, so the rule and its message are one. Locally the switches stay free.

/** The editor suite's switches that run part of it only (one part of the driver, a grep, one UI step). */
export const EDITOR_NARROWING_SWITCHES = ['CAESAR_EDITOR_ONLY', 'CAESAR_TEST_GREP', 'CAESAR_UI_STEPS'];

/**
 * CI as the runners understand it: any truthy CI (`true`, `1`, `True`, `yes`, …; CI services differ). Only unset,
 * empty, `0`, `false`, `no` and `off` mean "not CI": a value no guard recognised would otherwise relax them all.
 */
export function underCi(env = process.env) {
  const value = (env.CI ?? '').trim().toLowerCase();
  return value !== '' && !['0', 'false', 'no', 'off'].includes(value);
}

/**
 * The switches among `switches` that would shrink the suite under CI=true, as one line each; empty when none does
 * (or when not under CI). A switch is an env var name (any non-empty value narrows), or `{ name, allowed(value) }`
 * for one whose some values only grow the suite (a fuzz scale of 1 or more).
 */
export function narrowingUnderCi(switches, env = process.env) {
  if (!underCi(env)) return [];
  const problems = [];
  for (const entry of switches) {
    const { name, allowed } = typeof entry === 'string' ? { name: entry, allowed: undefined } : entry;
    const value = env[name];
    if (value === undefined || value === '') continue;
    if (allowed?.(value)) continue;
    problems.push(`${name}=${value} narrows the suite, which CI=true does not allow (unset it, or run without CI=true)`);
  }
  return problems;
}

/** As narrowingUnderCi, for arguments that pick part of a suite (file or suite names): each one is refused. */
export function narrowingArgsUnderCi(args, what, env = process.env) {
  if (!underCi(env) || args.length === 0) return [];
  return [`${what} ${args.join(' ')} runs part of the suite only, which CI=true does not allow (run it without arguments)`];
}

/** The text a runner prints before it exits 1: every problem on its own line, prefixed so a CI log's grep finds it. */
export function refusalText(problems) {
  return problems.map((p) => `REFUSED under CI: ${p}`).join('\n');
}

/**
 * For runner scripts: prints every switch of `switches` that narrows the suite under CI=true and exits 1 (a failure,
 * never the skip code 77). Returns quietly otherwise. `args`, when given, are the runner's own narrowing arguments.
 */
export function refuseNarrowingUnderCi(switches, { env = process.env, args = [], argsWhat = 'the arguments' } = {}) {
  const problems = [...narrowingUnderCi(switches, env), ...narrowingArgsUnderCi(args, argsWhat, env)];
  if (!problems.length) return;
  console.error(refusalText(problems));
  process.exit(1);
}

/** For modules loaded inside mocha (where exiting would hide the reporter): throws the same refusal instead. */
export function assertNoNarrowingUnderCi(switches, env = process.env) {
  const problems = narrowingUnderCi(switches, env);
  if (problems.length) throw new Error(refusalText(problems));
}

/**
 * mocha's own honesty flags: `--forbid-only` always (an `it.only` left in would silently run one test), and
 * `--forbid-pending` under CI=true (a `this.skip()` or `it.skip` there is a failure: CI must prove everything).
 */
export function mochaHonestyFlags(env = process.env) {
  return ['--forbid-only', ...(underCi(env) ? ['--forbid-pending'] : [])];
}

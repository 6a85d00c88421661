/**
 * The suite's default sandbox mode, for the tasks whose test does not set [sandbox] mode: `off` unless
 * $CAESAR_SANDBOX says otherwise. The product's default is `auto` (src/engine/sandbox/mode.ts); many older tests pass
 * files through the host's /tmp or read the agent's pids, which a sandbox hides by design. The sandbox's own tests
 * (test/engine/sandbox/, test/reliability/sandbox-*.test.ts) set the mode on each task. `CAESAR_SANDBOX=auto npm test`
 * runs the rest sandboxed.
 */
process.env.CAESAR_SANDBOX ??= 'off';

/**
 * No warm supervisor (issue 27) unless a test asks for one: an idle supervisor would outlive its test by minutes and
 * take the next test's task; the warm supervisor's own tests (test/engine/runtime/warm-supervisor.test.ts) set it.
 */
process.env.CAESAR_WARM_SUPERVISOR ??= '0';

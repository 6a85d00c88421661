/**
 * No warm supervisor (issue 27) unless a test asks for one: an idle supervisor would outlive its test by minutes and
 * take the next test's task; the warm supervisor's own tests (test/engine/runtime/warm-supervisor.test.ts) set it.
 *
 * The sandbox mode is left alone: every test runs in the product's default (`auto`: confined where bwrap runs), as
 * users' tasks do. A test that needs the host's view sets `[sandbox] mode = "off"` on its task and says why.
 */
process.env.CAESAR_WARM_SUPERVISOR ??= '0';

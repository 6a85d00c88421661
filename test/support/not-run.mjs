// "Not run", the same way in every suite. A test that needs something this machine lacks (bubblewrap, socat, Slurm,
// a browser, root) is reported as "not run: <reason>" and counted; under CI (any truthy CI) it is a failure instead,
// because CI must prove everything. Mocha tests ask through test/support/needs.ts; the suite runners (live, slurm,
// editor, start) through suiteNotRun() when the whole suite cannot run. Each suite process writes what it ran and what
// it did not to $CAESAR_TEST_REPORT (a JSON file scripts/test.mjs names), and scripts/test.mjs prints it per suite.
import { writeFileSync } from 'node:fs';
import { installCommand, SYSTEM_PACKAGES } from '../../scripts/system-packages.mjs';
import { underCi } from './ci-guard.mjs';

/** The exit code of a suite runner that could not run at all (scripts/test.mjs: "not run", a failure under CI). */
export const NOT_RUN_CODE = 77;

/** The variable naming the report file of one suite process. */
export const REPORT_VARIABLE = 'CAESAR_TEST_REPORT';

/**
 * Why a piece from Debian packages (one name or several) is missing, with the one command that installs them (what
 * each is for: scripts/system-packages.mjs).
 */
export function missingPackageReason(names, what = [names].flat().join(' and ')) {
  const pkgs = [names].flat().map((name) => {
    const pkg = SYSTEM_PACKAGES.find((p) => p.name === name);
    if (!pkg) throw new Error(`unknown system package ${name} (scripts/system-packages.mjs lists them)`);
    return pkg;
  });
  return `${what} is not installed; install it: ${installCommand(pkgs, process.getuid?.() === 0)}`;
}

/** The text a test or suite that cannot run here fails with under CI. */
export function refusedUnderCi(reason) {
  return `not run under CI, which must run everything: ${reason}`;
}

/**
 * Writes a suite's report: `ran` tests run (passed or failed), `notRun` [{ title, reason }]. `wholeSuite` says the
 * suite did not start at all (its test count is then unknown). Nothing is written when no report was asked for.
 */
export function writeReport({ ran, notRun, wholeSuite = false }, env = process.env) {
  const file = env[REPORT_VARIABLE];
  if (file) writeFileSync(file, `${JSON.stringify({ ran, notRun, wholeSuite }, null, 2)}\n`);
}

/**
 * For suite runners: the whole suite cannot run here. Prints "NOT RUN: <reason>", records it, and exits with
 * NOT_RUN_CODE; under CI it prints the refusal and exits 1 (a failure, whoever runs the suite).
 */
export function suiteNotRun(reason, env = process.env) {
  writeReport({ ran: 0, notRun: [{ title: '(the whole suite)', reason }], wholeSuite: true }, env);
  if (underCi(env)) {
    console.log(`FAILED: ${refusedUnderCi(reason)}`);
    process.exit(1);
  }
  console.log(`NOT RUN: ${reason}`);
  process.exit(NOT_RUN_CODE);
}

/** Groups not-run entries by reason: [{ reason, titles }], the most frequent first. */
export function byReason(notRun) {
  const groups = new Map();
  for (const { title, reason } of notRun) groups.set(reason, [...(groups.get(reason) ?? []), title]);
  return [...groups].map(([reason, titles]) => ({ reason, titles })).sort((a, b) => b.titles.length - a.titles.length);
}

/** The lines a suite prints at its end about what it did not run (none when it ran everything). */
export function notRunLines(notRun) {
  return byReason(notRun).map(({ reason, titles }) => `not run: ${titles.length} test${titles.length === 1 ? '' : 's'}: ${reason}\n${titles.map((t) => `    - ${t}`).join('\n')}`);
}

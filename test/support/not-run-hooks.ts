/**
 * A mocha root hook (loaded by .mocharc and by the live and launcher runners): at the end of the run, every test that
 * did not run is printed with its reason (test/support/needs.ts), counted, and written to $CAESAR_TEST_REPORT for
 * scripts/test.mjs's summary.
 */
import type { Context, Suite, Test } from 'mocha';
import { NOT_RUN_REASON } from './needs';
import { underCi } from './ci-guard.mjs';
import { notRunLines, refusedUnderCi, writeReport, type NotRun } from './not-run.mjs';

const NO_REASON = 'skipped without a reason (it.skip, describe.skip or a bare this.skip(): use test/support/needs.ts)';

function reasonOf(test: Test): string {
  for (let at: Test | Suite | undefined = test; at; at = at.parent) {
    const reason = (at as unknown as Record<symbol, string | undefined>)[NOT_RUN_REASON];
    if (reason) return reason;
  }
  return NO_REASON;
}

function allTests(suite: Suite): Test[] {
  return [...suite.tests, ...suite.suites.flatMap(allTests)];
}

/**
 * What the run did: tests run (passed or failed), and the pending ones with why. A test with neither was not chosen
 * (a --grep) or was stopped by a failed hook, which mocha reports as a failure already.
 */
export function runReport(root: Suite): { ran: number; notRun: NotRun[] } {
  let ran = 0;
  const notRun: NotRun[] = [];
  for (const test of allTests(root)) {
    if (test.state === 'passed' || test.state === 'failed') ran++;
    else if (test.isPending()) notRun.push({ title: test.fullTitle(), reason: reasonOf(test) });
  }
  return { ran, notRun };
}

export const mochaHooks = {
  afterAll(this: Context) {
    let root = this.test?.parent;
    while (root?.parent) root = root.parent;
    if (!root) return;
    const report = runReport(root);
    for (const line of notRunLines(report.notRun)) console.log(line);
    console.log(`tests: ${report.ran} ran, ${report.notRun.length} not run`);
    writeReport(report);
    // Under CI a test not run fails the run, even one skipped bare (mocha's --forbid-pending says so too, where given).
    if (underCi() && report.notRun.length) throw new Error(refusedUnderCi(`${report.notRun.length} test(s): ${report.notRun.map((n) => n.title).join('; ')}`));
  },
};

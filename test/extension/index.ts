// The in-editor test entry: VS Code's extension host loads this module (extensionTestsPath) and awaits run().
// Works under @vscode/test-electron and under code-server's `payload` URL (test/extension/run.mjs).
//
// Re-attachment after a window reload needs two runs of this module: code-server reloads the whole workbench, which
// restarts the extension host and calls run() again. A phase file (CAESAR_TEST_STATE_DIR/phase.json) tells the second
// run to execute the "after reload" suite; the first run never settles, so only the second one reports the exit code.
import { appendFileSync, existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import Mocha from 'mocha';
import * as vscode from 'vscode';
import { forbidsPending, grepRefusal, verdict, type Outcome } from './verdict';

const stateDir = process.env.CAESAR_TEST_STATE_DIR;

function logLine(line: string): void {
  if (stateDir) appendFileSync(path.join(stateDir, 'mocha.log'), `${line}\n`);
  console.log(line);
}

/** The outcomes of `files`, and how many tests mocha registered there (after a grep): the verdict compares the two. */
function runMocha(files: string[]): Promise<{ outcomes: Outcome[]; expected: number }> {
  const grep = process.env.CAESAR_TEST_GREP; // run a subset while developing
  // forbidOnly: an `it.only` left in would run that test alone and pass for the whole suite.
  const mocha = new Mocha({ ui: 'bdd', timeout: 60_000, color: false, reporter: 'spec', forbidOnly: true, ...(grep ? { grep } : {}) });
  for (const f of files) mocha.addFile(f);
  const outcomes: Outcome[] = [];
  return new Promise((resolve, reject) => {
    try {
      const runner = mocha.run(() => resolve({ outcomes, expected: runner.total }));
      runner.on('pass', (t) => {
        outcomes.push({ title: t.fullTitle(), state: 'passed', ms: t.duration });
        logLine(`  ✓ ${t.fullTitle()} (${t.duration} ms)`);
      });
      runner.on('fail', (t, err: Error) => {
        outcomes.push({ title: t.fullTitle(), state: 'failed', error: String(err?.stack ?? err) });
        logLine(`  ✗ ${t.fullTitle()}\n${String(err?.stack ?? err)}`);
      });
      runner.on('pending', (t) => {
        outcomes.push({ title: t.fullTitle(), state: 'pending' });
        logLine(`  - ${t.fullTitle()} (pending)`);
      });
    } catch (err) {
      reject(err);
    }
  });
}

export async function run(): Promise<void> {
  const refused = grepRefusal();
  if (refused) {
    logLine(refused);
    throw new Error(refused);
  }
  // CAESAR_TEST_SUITE picks another suite folder (suite-untrusted: the run without Workspace Trust).
  const suiteDir = path.join(__dirname, process.env.CAESAR_TEST_SUITE ?? 'suite');
  const files = readdirSync(suiteDir).filter((f) => f.endsWith('.test.js')).sort().map((f) => path.join(suiteDir, f));
  const mainFiles = files.filter((f) => !f.endsWith('reattach.test.js'));
  const reattachFile = files.filter((f) => f.endsWith('reattach.test.js'));

  if (!stateDir) {
    // @vscode/test-electron: a reload would end the run, so the reload suite is not run here (reported, not passed).
    const { outcomes, expected } = await runMocha(mainFiles);
    logLine(`  - re-attachment after reload: not run under @vscode/test-electron (run test/extension/run.mjs)`);
    const notRun = reattachFile.map((f) => ({ title: `${path.basename(f)} (needs a reload)`, state: 'pending' as const }));
    finish([...outcomes, ...notRun], expected + notRun.length);
    return;
  }

  mkdirSync(stateDir, { recursive: true });
  const phaseFile = path.join(stateDir, 'phase.json');
  const phase = existsSync(phaseFile) ? (JSON.parse(readFileSync(phaseFile, 'utf8')) as { phase: string }).phase : 'main';
  const resultsFile = path.join(stateDir, 'results.json');
  const expectedFile = path.join(stateDir, 'expected.json');
  const previous: Outcome[] = existsSync(resultsFile) ? JSON.parse(readFileSync(resultsFile, 'utf8')) : [];
  const expectedBefore: number = existsSync(expectedFile) ? JSON.parse(readFileSync(expectedFile, 'utf8')) : 0;

  if (phase === 'main') {
    logLine('--- in-editor suite (before reload)');
    const { outcomes, expected } = await runMocha(mainFiles);
    writeFileSync(resultsFile, JSON.stringify(outcomes, null, 2));
    writeFileSync(expectedFile, JSON.stringify(expected));
    if (outcomes.some((o) => o.state === 'failed') || reattachFile.length === 0) {
      finish(outcomes, expected);
      return;
    }
    writeFileSync(phaseFile, JSON.stringify({ phase: 'after-reload', at: new Date().toISOString() }));
    logLine('--- reloading the window (workbench.action.reloadWindow)');
    await vscode.commands.executeCommand('workbench.action.reloadWindow');
    return new Promise<void>(() => undefined); // the reload ends this extension host; the next run() reports
  }

  logLine('--- in-editor suite (after reload)');
  const after = await runMocha(reattachFile);
  const outcomes = [...previous, ...after.outcomes];
  writeFileSync(resultsFile, JSON.stringify(outcomes, null, 2));
  writeFileSync(expectedFile, JSON.stringify(expectedBefore + after.expected));
  writeFileSync(phaseFile, JSON.stringify({ phase: 'done' }));
  finish(outcomes, expectedBefore + after.expected);
}

/** Throws (the workbench then exits non-zero) on a failure, and under CI (driver.mjs says so) on a pending test. */
function finish(outcomes: Outcome[], expected: number): void {
  const { summary, failure } = verdict(outcomes, forbidsPending(), !!process.env.CAESAR_TEST_GREP, expected);
  logLine(summary);
  if (failure) {
    logLine(failure);
    throw new Error(failure);
  }
}

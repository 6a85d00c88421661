// The whole test suite, as `npm test` runs it (after the build and the typecheck). Each suite is its own process.
// First the Debian packages the chosen suites need (scripts/system-packages.mjs: installed when this user may, else
// the run stops before anything else with the one command to run), then what npm can bring (Node 24 + code-server for
// the editor, the pinned agent CLIs) into the versioned cache outside the clone. A test that needs what this machine
// lacks is "not run" with its reason, and a suite that cannot run at all exits NOT_RUN_CODE after "NOT RUN: <reason>"
// (test/support/not-run.mjs); the summary counts ran and not run per suite. Leaving a suite out is an explicit
// opt-out (CAESAR_TEST_SKIP=live,editor), printed in the summary. Under CI (any truthy CI) anything not run is a
// failure, because CI must prove everything.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { editorPaths, installEditor } from './setup-editor.mjs';
import { ensureSystemPackages } from './system-packages.mjs';
import { mochaHonestyFlags, refuseNarrowingUnderCi, underCi } from '../test/support/ci-guard.mjs';
import { NOT_RUN_CODE, REPORT_VARIABLE, byReason } from '../test/support/not-run.mjs';

const suites = [
  // An `it.only` always fails the run, and under CI a pending (skipped) mocha test does too: CI must prove everything.
  { key: 'mocha', name: 'unit and integration (mocha)', command: ['npx', 'mocha', ...mochaHonestyFlags(), '--ignore', 'test/reliability/**', 'test/**/*.test.ts'] },
  // Fault injection on real processes, property-based fuzzing, hostile repositories (docs/reliability.md).
  { key: 'reliability', name: 'reliability (faults, fuzzing, hostile repositories)', command: ['npx', 'mocha', ...mochaHonestyFlags(), 'test/reliability/**/*.test.ts'] },
  { key: 'live', name: 'agent CLIs, live (real binaries, fake model servers, no network)', command: ['node', 'test/agents/live/run.mjs'] },
  // A real one-node Slurm cluster (munged, slurmctld, slurmd) started and stopped by the suite itself.
  { key: 'slurm', name: 'launchers: tasks as Slurm jobs (a real one-node cluster, no network)', command: ['node', 'test/launch/run.mjs'] },
  { key: 'editor', name: 'editor (extension host tests + Playwright UI in code-server)', command: ['node', 'test/extension/run.mjs'] },
  // The README's first command, for real: build, install into code-server, start it, run a demo task.
  { key: 'start', name: 'npm start (smoke)', command: ['node', 'scripts/start-smoke.mjs'] },
];

// `--packages-only`: the Debian package check alone (package.json runs it before the build, so a missing package stops
// `npm test` before anything else).
const packagesOnly = process.argv.includes('--packages-only');
const only = process.argv.slice(2).filter((a) => a !== '--packages-only');
// Naming suites runs the others not at all: fine while developing, a failure under CI=true (test/support/ci-guard.mjs).
refuseNarrowingUnderCi([], { args: only, argsWhat: 'scripts/test.mjs' });
const ci = underCi();
const optedOut = (process.env.CAESAR_TEST_SKIP ?? '').split(',').map((s) => s.trim()).filter(Boolean);
const unknown = optedOut.filter((key) => !suites.some((s) => s.key === key));
if (unknown.length) {
  console.error(`CAESAR_TEST_SKIP names unknown suites: ${unknown.join(', ')} (known: ${suites.map((s) => s.key).join(', ')})`);
  process.exit(2);
}
const selected = suites.filter((suite) => !only.length || only.some((o) => suite.name.includes(o) || suite.key === o));
const wanted = (key) => selected.some((s) => s.key === key) && !optedOut.includes(key);
let passed = 0;
let failed = 0;
let skipped = 0;
const notes = [];
/** What each failed suite said about its failures, printed again at the very end: a CI log is often read from its tail. */
const failureDigests = [];
/** One row per suite for the summary: { name, outcome, seconds, report }. */
const rows = [];

// Before anything else: the Debian packages of the suites that will run.
const running = selected.filter((s) => wanted(s.key)).map((s) => s.key);
try {
  if (running.length) ensureSystemPackages(running);
} catch (err) {
  console.error(`npm test: ${err.message}`);
  process.exit(1);
}
if (packagesOnly) process.exit(0);
const reports = mkdtempSync(path.join(tmpdir(), 'caesar-test-reports-'));
prepare();

for (const suite of selected) {
  if (optedOut.includes(suite.key)) {
    if (ci) {
      failed++;
      console.log(`\n=== FAILED: ${suite.name} (opted out with CAESAR_TEST_SKIP=${suite.key}, which CI=true does not allow)`);
      rows.push({ name: suite.name, outcome: 'FAILED (opted out)' });
    } else {
      skipped++;
      notes.push(`${suite.name}: opted out (CAESAR_TEST_SKIP=${suite.key})`);
      console.log(`\n=== SKIPPED: ${suite.name} (opted out with CAESAR_TEST_SKIP=${suite.key})`);
      rows.push({ name: suite.name, outcome: `opted out (CAESAR_TEST_SKIP=${suite.key})` });
    }
    continue;
  }
  const script = suite.command[0] === 'node' ? suite.command[1] : undefined;
  console.log(`\n=== ${suite.name}`);
  if (script && !existsSync(script)) {
    console.log(`FAILED: ${script} is missing`);
    failed++;
    continue;
  }
  const reportFile = path.join(reports, `${suite.key}.json`);
  const started = Date.now();
  const result = await runEchoed(suite.command, { ...process.env, [REPORT_VARIABLE]: reportFile });
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  const report = readReport(reportFile);
  const notRun = report?.notRun.length ?? 0;
  let outcome;
  if (result.status === 0 && !(ci && notRun)) {
    passed++;
    outcome = 'passed';
    console.log(`=== passed: ${suite.name} (${seconds} s)`);
  } else if (result.status === NOT_RUN_CODE && !ci) {
    skipped++;
    outcome = 'NOT RUN';
    console.log(`=== NOT RUN: ${suite.name} (${report?.notRun[0]?.reason ?? 'the reason is printed above'})`);
  } else {
    failed++;
    outcome = 'FAILED';
    const why = result.status === NOT_RUN_CODE ? 'not run, which CI=true does not allow' : result.status === 0 ? `${notRun} test(s) not run, which CI does not allow` : `exit ${result.status ?? result.signal}`;
    console.log(`=== FAILED: ${suite.name} (${why}, ${seconds} s)`);
    failureDigests.push({ name: suite.name, digest: failureDigest(result.tail) });
  }
  rows.push({ name: suite.name, outcome, seconds, report });
}
rmSync(reports, { recursive: true, force: true });

for (const { name, digest } of failureDigests) console.log(`\n=== what failed in ${name}:\n${digest}`);
for (const note of notes) console.log(`note: ${note}`);
console.log(`\n${summaryLines(rows).join('\n')}`);
console.log(`\nsuites: ${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}`);
process.exitCode = failed ? 1 : 0;

/** A suite's report (test/support/not-run.mjs), or undefined when it wrote none (it died, or it counts nothing). */
function readReport(file) {
  try {
    return JSON.parse(readFileSync(file, 'utf8'));
  } catch {
    return undefined;
  }
}

/** Per suite: its outcome, tests ran and not run, wall time; then each reason for tests not run, with their count. */
function summaryLines(suiteRows) {
  const lines = ['=== summary: ran / not run per suite'];
  for (const { name, outcome, seconds, report } of suiteRows) {
    const counts = !report ? (seconds === undefined ? '' : 'no test count') : report.wholeSuite ? 'whole suite not run' : `${report.ran} ran, ${report.notRun.length} not run`;
    lines.push(`  ${name}: ${[outcome, counts, seconds === undefined ? '' : `${seconds} s`].filter(Boolean).join(', ')}`);
    for (const { reason, titles } of byReason(report?.notRun ?? [])) {
      lines.push(`      not run${report.wholeSuite ? '' : ` (${titles.length})`}: ${reason}`);
    }
  }
  return lines;
}

/** Runs a suite with its output passed straight through, keeping the last part of it for the failure digest. */
function runEchoed([command, ...args], env) {
  const keep = 256 * 1024;
  let tail = '';
  const child = spawn(command, args, { stdio: ['inherit', 'pipe', 'pipe'], env });
  const echo = (out) => (chunk) => {
    out.write(chunk);
    tail = (tail + chunk.toString('utf8')).slice(-keep);
  };
  child.stdout.on('data', echo(process.stdout));
  child.stderr.on('data', echo(process.stderr));
  return new Promise((resolve) => child.on('close', (status, signal) => resolve({ status, signal, tail })));
}

/**
 * The failures section of a mocha report ("N failing" and what follows), or the suite's last lines when it has none
 * (the editor and smoke runners print their own summaries), bounded so the digest stays readable.
 */
function failureDigest(output) {
  const lines = output.split('\n');
  const failing = lines.findLastIndex((line) => /^\s*\d+ failing\b/.test(line));
  const chosen = failing >= 0 ? lines.slice(failing) : lines.slice(-40);
  return chosen.slice(0, 120).join('\n');
}

/**
 * Installs, into the versioned cache, what the selected suites need and npm can bring; idempotent and quick when
 * everything is there. A failed install is reported here, and the suite concerned then says NOT RUN with its reason.
 * (The Debian packages were seen to before: scripts/system-packages.mjs.)
 */
function prepare() {
  const started = Date.now();
  const paths = editorPaths();
  if ((wanted('editor') || wanted('start')) && (!existsSync(paths.node) || !existsSync(paths.codeServer))) {
    console.log(`\n=== installing the editor test tools into ${paths.cache} (first run only, a few minutes)`);
    try {
      installEditor(paths);
    } catch (err) {
      console.log(`could not install the editor: ${err.message}`);
    }
  }
  if (wanted('live')) {
    console.log('\n=== the pinned agent CLIs (installed into the cache when missing; ~1.5 GB the first time)');
    const install = spawnSync(process.execPath, ['test/agents/live/install.mjs'], { stdio: 'inherit' });
    if (install.status !== 0) console.log('some agent CLIs could not be installed: the live suite will say which');
  }
  console.log(`=== prepared in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}

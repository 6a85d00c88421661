// The whole test suite, as `npm test` runs it (after the build and the typecheck). Each suite is its own process.
// First it installs what the suites need and npm can bring (Node 24 + code-server for the editor, the pinned agent
// CLIs) into the versioned cache outside the clone, so a newcomer's first `npm test` runs everything it can; what npm
// cannot bring (Debian's chromium) is named with the exact command. A suite that still cannot run exits with
// SKIP_CODE after printing "SKIPPED: <reason>". Leaving a suite out is an explicit opt-out (CAESAR_TEST_SKIP=live,editor),
// printed in the summary. Under CI=true any skip is a failure, because CI must prove everything.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { editorPaths, installEditor, missingPieces } from './setup-editor.mjs';
import { mochaHonestyFlags, refuseNarrowingUnderCi } from '../test/support/ci-guard.mjs';

export const SKIP_CODE = 77;

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

const only = process.argv.slice(2);
// Naming suites runs the others not at all: fine while developing, a failure under CI=true (test/support/ci-guard.mjs).
refuseNarrowingUnderCi([], { args: only, argsWhat: 'scripts/test.mjs' });
const ci = process.env.CI === 'true';
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

prepare();

for (const suite of selected) {
  if (optedOut.includes(suite.key)) {
    if (ci) {
      failed++;
      console.log(`\n=== FAILED: ${suite.name} (opted out with CAESAR_TEST_SKIP=${suite.key}, which CI=true does not allow)`);
    } else {
      skipped++;
      notes.push(`${suite.name}: opted out (CAESAR_TEST_SKIP=${suite.key})`);
      console.log(`\n=== SKIPPED: ${suite.name} (opted out with CAESAR_TEST_SKIP=${suite.key})`);
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
  const started = Date.now();
  const result = await runEchoed(suite.command);
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  if (result.status === 0) {
    passed++;
    console.log(`=== passed: ${suite.name} (${seconds} s)`);
  } else if (result.status === SKIP_CODE && !ci) {
    skipped++;
    notes.push(`${suite.name}: skipped (the reason is printed above its result)`);
    console.log(`=== SKIPPED: ${suite.name} (see the reason above)`);
  } else {
    failed++;
    const why = result.status === SKIP_CODE ? 'skipped, which CI=true does not allow' : `exit ${result.status ?? result.signal}`;
    console.log(`=== FAILED: ${suite.name} (${why}, ${seconds} s)`);
    failureDigests.push({ name: suite.name, digest: failureDigest(result.tail) });
  }
}

for (const { name, digest } of failureDigests) console.log(`\n=== what failed in ${name}:\n${digest}`);
for (const note of notes) console.log(`note: ${note}`);
console.log(`\nsuites: ${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}`);
process.exitCode = failed ? 1 : 0;

/** Runs a suite with its output passed straight through, keeping the last part of it for the failure digest. */
function runEchoed([command, ...args]) {
  const keep = 256 * 1024;
  let tail = '';
  const child = spawn(command, args, { stdio: ['inherit', 'pipe', 'pipe'], env: process.env });
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
 * everything is there. A failed install is reported here and the suite concerned then says SKIPPED with its reason.
 */
function prepare() {
  const started = Date.now();
  const paths = editorPaths();
  if (wanted('editor') || wanted('start')) {
    const missing = missingPieces(paths);
    if (missing.some((m) => !m.includes('chromium'))) {
      console.log(`\n=== installing the editor test tools into ${paths.cache} (first run only, a few minutes)`);
      try {
        installEditor(paths);
      } catch (err) {
        if (!String(err.message).includes('chromium')) console.log(`could not install the editor: ${err.message}`);
      }
    }
    if (!existsSync(paths.chromium) && wanted('editor')) {
      console.log(
        `\nThe editor suite drives Debian's Chromium, which npm cannot install. Install it with:\n` +
          `  apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y chromium libkrb5-dev\n` +
          `or leave the suite out: CAESAR_TEST_SKIP=editor npm test`,
      );
    }
  }
  if (wanted('live')) {
    console.log('\n=== the pinned agent CLIs (installed into the cache when missing; ~1.5 GB the first time)');
    const install = spawnSync(process.execPath, ['test/agents/live/install.mjs'], { stdio: 'inherit' });
    if (install.status !== 0) console.log('some agent CLIs could not be installed: the live suite will say which');
    if (spawnSync('sh', ['-c', 'command -v bwrap']).status !== 0) {
      console.log(
        `\nThe live suite runs codex over ACP, which needs Debian's bubblewrap (npm cannot install it). Install it with:\n` +
          `  apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y bubblewrap\n` +
          `or leave the suite out: CAESAR_TEST_SKIP=live npm test`,
      );
    }
  }
  if (wanted('slurm') && spawnSync('sh', ['-c', 'command -v slurmctld && command -v munged']).status !== 0) {
    console.log(
      `\nThe launcher suite runs a one-node Slurm cluster, from Debian's slurm-wlm and munge (npm cannot install them):\n` +
        `  apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y slurm-wlm munge\n` +
        `or leave the suite out: CAESAR_TEST_SKIP=slurm npm test`,
    );
  }
  console.log(`=== prepared in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}

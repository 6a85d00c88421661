// The whole test suite, as `npm test` runs it (after the build and the typecheck). Each suite is its own process.
// A suite that cannot run on this machine exits with SKIP_CODE after printing "SKIPPED: <reason>"; under CI=true a
// skip is a failure, because CI must prove everything.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

export const SKIP_CODE = 77;

const suites = [
  // Under CI a pending (skipped) mocha test fails the run: CI must prove everything.
  { name: 'unit and integration (mocha)', command: ['npx', 'mocha', ...(process.env.CI === 'true' ? ['--forbid-pending'] : [])] },
  { name: 'agent CLIs, live (real binaries, fake model servers, no network)', command: ['node', 'test/agents/live/run.mjs'] },
  { name: 'editor (extension host tests + Playwright UI in code-server)', command: ['node', 'test/extension/run.mjs'] },
  // The README's first command, for real: build, install into code-server, start it, run a demo task.
  { name: 'npm start (smoke)', command: ['node', 'scripts/start-smoke.mjs'] },
];

const only = process.argv.slice(2);
const ci = process.env.CI === 'true';
let passed = 0;
let failed = 0;
let skipped = 0;

for (const suite of suites) {
  if (only.length && !only.some((o) => suite.name.includes(o))) continue;
  const script = suite.command[0] === 'node' ? suite.command[1] : undefined;
  console.log(`\n=== ${suite.name}`);
  if (script && !existsSync(script)) {
    console.log(`FAILED: ${script} is missing`);
    failed++;
    continue;
  }
  const started = Date.now();
  const result = spawnSync(suite.command[0], suite.command.slice(1), { stdio: 'inherit', env: process.env });
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  if (result.status === 0) {
    passed++;
    console.log(`=== passed: ${suite.name} (${seconds} s)`);
  } else if (result.status === SKIP_CODE && !ci) {
    skipped++;
    console.log(`=== SKIPPED: ${suite.name} (see the reason above)`);
  } else {
    failed++;
    const why = result.status === SKIP_CODE ? 'skipped, which CI=true does not allow' : `exit ${result.status ?? result.signal}`;
    console.log(`=== FAILED: ${suite.name} (${why}, ${seconds} s)`);
  }
}

console.log(`\nsuites: ${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}`);
process.exitCode = failed ? 1 : 0;

import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { fuzzScale } from '../../reliability/fuzz';
import { needs } from '../../support/needs';
import { fakeApt } from './fake-apt';

/**
 * `npm test`'s runner (scripts/test.mjs): leaving a suite out is an explicit opt-out (CAESAR_TEST_SKIP), printed in
 * the summary, and never allowed under CI. Every suite is opted out here, so the runner installs and runs nothing.
 */
const ROOT = path.resolve(__dirname, '../../..');

function runner(env: NodeJS.ProcessEnv, args: string[] = [], script = 'scripts/test.mjs') {
  const clean = { ...process.env };
  for (const name of ['CI', 'CAESAR_TEST_SKIP', 'CAESAR_LIVE_AGENTS', 'CAESAR_FUZZ_SCALE']) delete clean[name];
  const result = spawnSync(process.execPath, [script, ...args], { cwd: ROOT, env: { ...clean, ...env }, encoding: 'utf8', timeout: 30_000 });
  return { code: result.status, out: result.stdout + result.stderr };
}

describe('npm test runner: opting out of suites', () => {
  it('prints each opted-out suite as SKIPPED with the variable that did it, and counts it in the summary', () => {
    const { code, out } = runner({ CAESAR_TEST_SKIP: 'mocha,reliability,live,slurm,editor,start' });
    assert.equal(code, 0, out);
    assert.equal(out.match(/=== SKIPPED: .*\(opted out with CAESAR_TEST_SKIP=\w+\)/g)?.length, 6, out);
    assert.match(out, /note: agent CLIs, live .*: opted out \(CAESAR_TEST_SKIP=live\)/);
    assert.match(out, /suites: 0 passed, 0 failed, 6 skipped/);
  });

  it('fails an opt-out under CI=true', () => {
    const { code, out } = runner({ CAESAR_TEST_SKIP: 'mocha,reliability,live,slurm,editor,start', CI: 'true' });
    assert.equal(code, 1, out);
    assert.match(out, /FAILED: .*CI=true does not allow/);
  });

  it('refuses an unknown suite name instead of running everything', () => {
    const { code, out } = runner({ CAESAR_TEST_SKIP: 'livee' });
    assert.equal(code, 2, out);
    assert.match(out, /unknown suites: livee \(known: mocha, reliability, live, slurm, editor, start\)/);
  });
});

/**
 * The mocha suites run through `npx mocha …`: an `npx` of our own first on PATH stands in for it, records the
 * arguments the runner passed, writes `report` (when given) where the runner asked for the suite's report, and exits
 * with the code the test chose (77 = "this suite could not run here"). A fake dpkg-query beside it says every Debian
 * package is installed, so the runner's package check passes whatever this machine has.
 */
function fakeNpx(exitCode: number, report?: object) {
  const dir = mkdtempSync(path.join(tmpdir(), 'caesar-fake-npx-'));
  const log = path.join(dir, 'calls.log');
  const writeReport = report ? `printf '%s' '${JSON.stringify(report)}' > "$CAESAR_TEST_REPORT"\n` : '';
  writeFileSync(path.join(dir, 'npx'), `#!/bin/sh\necho "$*" >> '${log}'\n${writeReport}exit ${exitCode}\n`);
  chmodSync(path.join(dir, 'npx'), 0o755);
  writeFileSync(path.join(dir, 'dpkg-query'), '#!/bin/sh\nshift 3\nfor p in "$@"; do echo "$p ii "; done\n');
  chmodSync(path.join(dir, 'dpkg-query'), 0o755);
  return {
    dir,
    env: { PATH: `${dir}${path.delimiter}${process.env.PATH ?? ''}` },
    calls: () => readFileSync(log, 'utf8').trim().split('\n'),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}

// Every suite but the two mocha ones is opted out, so nothing is installed and no real suite runs.
const ONLY_MOCHA_SUITES = { CAESAR_TEST_SKIP: 'live,slurm,editor,start' };

describe('npm test runner: skips and narrowing cannot pass under CI', () => {
  it('passes --forbid-only to both mocha suites, and --forbid-pending only under CI=true', () => {
    const npx = fakeNpx(0);
    try {
      const local = runner({ ...npx.env, ...ONLY_MOCHA_SUITES });
      assert.equal(local.code, 0, local.out);
      const localCalls = npx.calls();
      assert.equal(localCalls.length, 2, local.out);
      for (const call of localCalls) {
        assert.match(call, /^mocha /);
        assert.ok(call.split(' ').includes('--forbid-only'), call);
        assert.ok(!call.split(' ').includes('--forbid-pending'), call);
      }
      const ci = runner({ ...npx.env, ...ONLY_MOCHA_SUITES, CI: 'true' });
      const ciCalls = npx.calls().slice(2);
      assert.equal(ciCalls.length, 2, ci.out);
      for (const call of ciCalls) {
        assert.ok(call.split(' ').includes('--forbid-only'), call);
        assert.ok(call.split(' ').includes('--forbid-pending'), call);
      }
    } finally {
      npx.remove();
    }
  });

  it('a suite exiting 77 (could not run here) is NOT RUN locally, with its reason, and FAILED under CI=true', () => {
    const npx = fakeNpx(77, { ran: 0, notRun: [{ title: '(the whole suite)', reason: 'bubblewrap (bwrap) is not installed' }], wholeSuite: true });
    try {
      const local = runner({ ...npx.env, ...ONLY_MOCHA_SUITES });
      assert.equal(local.code, 0, local.out);
      assert.match(local.out, /=== NOT RUN: unit and integration \(mocha\) \(bubblewrap \(bwrap\) is not installed\)/);
      assert.match(local.out, /unit and integration \(mocha\): NOT RUN, whole suite not run, [\d.]+ s\n {6}not run: bubblewrap \(bwrap\) is not installed/);
      assert.match(local.out, /suites: 0 passed, 0 failed, 6 skipped/);
      const ci = runner({ ...npx.env, ...ONLY_MOCHA_SUITES, CI: 'true' });
      assert.equal(ci.code, 1, ci.out);
      assert.match(ci.out, /=== FAILED: unit and integration \(mocha\) \(not run, which CI=true does not allow/);
      assert.match(ci.out, /=== FAILED: reliability .*\(not run, which CI=true does not allow/);
      assert.doesNotMatch(ci.out, /=== SKIPPED|=== NOT RUN/);
    } finally {
      npx.remove();
    }
  });

  it('naming suites on the command line runs only those locally, and is refused under CI=true before anything runs', () => {
    const npx = fakeNpx(0);
    try {
      const local = runner({ ...npx.env }, ['mocha']);
      assert.equal(local.code, 0, local.out);
      assert.equal(npx.calls().length, 1, local.out);
      const ci = runner({ ...npx.env, CI: 'true' }, ['mocha']);
      assert.equal(ci.code, 1, ci.out);
      assert.match(ci.out, /REFUSED under CI: scripts\/test\.mjs mocha runs part of the suite only, which CI=true does not allow/);
      assert.equal(npx.calls().length, 1, 'no suite ran under CI');
    } finally {
      npx.remove();
    }
  });

  it('the live suite refuses CAESAR_LIVE_AGENTS and named files under CI=true, with a failure, not the skip code', () => {
    const agents = runner({ CI: 'true', CAESAR_LIVE_AGENTS: 'gemini' }, [], 'test/agents/live/run.mjs');
    assert.equal(agents.code, 1, agents.out);
    assert.match(agents.out, /REFUSED under CI: CAESAR_LIVE_AGENTS=gemini narrows the suite, which CI=true does not allow/);
    const files = runner({ CI: 'true' }, ['acp'], 'test/agents/live/run.mjs');
    assert.equal(files.code, 1, files.out);
    assert.match(files.out, /REFUSED under CI: test\/agents\/live\/run\.mjs acp runs part of the suite only/);
    // Without CI the switch is not refused: the runner goes on (here to its own checks, which may skip with 77).
    const local = runner({ CAESAR_LIVE_AGENTS: 'gemini', PATH: '/nonexistent' }, [], 'test/agents/live/run.mjs');
    assert.doesNotMatch(local.out, /REFUSED/);
  });

  it('the live suite refuses CAESAR_SANDBOX=off under CI (its confinement checks would be left out), with any truthy CI', () => {
    const off = runner({ CI: '1', CAESAR_SANDBOX: 'off' }, [], 'test/agents/live/run.mjs');
    assert.equal(off.code, 1, off.out);
    assert.match(off.out, /REFUSED under CI: CAESAR_SANDBOX=off narrows the suite/);
    const auto = runner({ CI: '1', CAESAR_SANDBOX: 'auto', PATH: '/nonexistent' }, [], 'test/agents/live/run.mjs');
    assert.doesNotMatch(auto.out, /REFUSED/);
  });

  it('the launcher suite refuses named files under CI=true', () => {
    const files = runner({ CI: 'true' }, ['test/launch/slurm.live.ts'], 'test/launch/run.mjs');
    assert.equal(files.code, 1, files.out);
    assert.match(files.out, /REFUSED under CI: test\/launch\/run\.mjs test\/launch\/slurm\.live\.ts runs part of the suite only/);
  });

  it('CAESAR_FUZZ_SCALE below 1 is refused under CI=true, 1 or more is allowed; a scale that is no number is refused anywhere', () => {
    assert.equal(fuzzScale({}), 1);
    assert.equal(fuzzScale({ CAESAR_FUZZ_SCALE: '0.1' }), 0.1, 'a quick local run may shrink it');
    assert.throws(() => fuzzScale({ CAESAR_FUZZ_SCALE: '0.1', CI: 'true' }), /REFUSED under CI: CAESAR_FUZZ_SCALE=0\.1 narrows the suite/);
    assert.equal(fuzzScale({ CAESAR_FUZZ_SCALE: '10', CI: 'true' }), 10, 'a scale that only grows the suite');
    assert.throws(() => fuzzScale({ CAESAR_FUZZ_SCALE: 'lots' }), /CAESAR_FUZZ_SCALE=lots is not a positive number/);
    assert.throws(() => fuzzScale({ CAESAR_FUZZ_SCALE: '0' }), /not a positive number/);
  });
});

describe('npm test runner: what was not run is counted, per suite, and fails any truthy CI', () => {
  const REPORT = { ran: 40, notRun: [{ title: 'sandbox network: tasks cut', reason: 'socat is not installed; install it: apt-get install socat' }, { title: 'sandbox network: tasks bridged', reason: 'socat is not installed; install it: apt-get install socat' }] };

  it('prints ran / not run per suite with its wall time, and each reason with its count', () => {
    const npx = fakeNpx(0, REPORT);
    try {
      const local = runner({ ...npx.env, ...ONLY_MOCHA_SUITES });
      assert.equal(local.code, 0, local.out);
      assert.match(local.out, /=== summary: ran \/ not run per suite\n {2}unit and integration \(mocha\): passed, 40 ran, 2 not run, [\d.]+ s\n {6}not run \(2\): socat is not installed; install it: apt-get install socat\n/);
      assert.match(local.out, /reliability \(faults, fuzzing, hostile repositories\): passed, 40 ran, 2 not run/);
      assert.match(local.out, /agent CLIs, live .*: opted out \(CAESAR_TEST_SKIP=live\)/);
    } finally {
      npx.remove();
    }
  });

  for (const ci of ['1', 'True', 'yes']) {
    it(`CI=${ci} is CI: a suite that passed with tests not run fails, and an opt-out is refused`, () => {
      const npx = fakeNpx(0, REPORT);
      try {
        const run = runner({ ...npx.env, ...ONLY_MOCHA_SUITES, CI: ci });
        assert.equal(run.code, 1, run.out);
        assert.match(run.out, /=== FAILED: unit and integration \(mocha\) \(2 test\(s\) not run, which CI does not allow/);
        assert.match(run.out, /FAILED: .*opted out with CAESAR_TEST_SKIP=live, which CI=true does not allow/);
        assert.ok(npx.calls().every((call) => call.split(' ').includes('--forbid-pending')), npx.calls().join('\n'));
      } finally {
        npx.remove();
      }
    });
  }

  it('CI=0, CI=false or an empty CI is not CI', () => {
    const npx = fakeNpx(0, REPORT);
    try {
      for (const ci of ['0', 'false', '']) assert.equal(runner({ ...npx.env, ...ONLY_MOCHA_SUITES, CI: ci }).code, 0, `CI=${ci}`);
    } finally {
      npx.remove();
    }
  });

  it('a missing Debian package the user cannot install stops the run before any suite, with the one command', () => {
    const npx = fakeNpx(0, REPORT);
    const apt = fakeApt(['bubblewrap', 'socat']);
    try {
      // A machine without apt-get (PATH holds the fakes alone): the runner must only say what to run.
      apt.removeAptGet();
      const run = runner({ ...ONLY_MOCHA_SUITES, PATH: `${apt.dir}${path.delimiter}${npx.dir}` });
      assert.equal(run.code, 1, run.out);
      assert.match(run.out, /npm test: missing system packages .*\n {2}bubblewrap +the sandbox every task runs in.*\n {2}socat /);
      assert.throws(() => npx.calls(), /ENOENT/, 'no suite ran');
    } finally {
      apt.remove();
      npx.remove();
    }
  });

  it('as root with apt, the runner installs the missing package (saying what and why), then runs the suites', async function () {
    await needs(this, 'root');
    const npx = fakeNpx(0, REPORT);
    const apt = fakeApt(['socat']);
    try {
      const run = runner({ ...ONLY_MOCHA_SUITES, PATH: `${apt.dir}${path.delimiter}${npx.env.PATH}` });
      assert.equal(run.code, 0, run.out);
      assert.match(run.out, /installing the Debian packages this needs \(npm cannot bring them\):\n {2}socat +the sandbox's network cut/);
      assert.deepEqual(apt.calls(), ['DEBIAN_FRONTEND=noninteractive update -qq', 'DEBIAN_FRONTEND=noninteractive install -y -qq --no-install-recommends socat']);
      assert.equal(npx.calls().length, 2);
    } finally {
      apt.remove();
      npx.remove();
    }
  });
});

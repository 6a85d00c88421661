import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { verdict, type Outcome } from '../../extension/verdict';
import { needs } from '../../support/needs';

/**
 * "Not run", the same way in every mocha suite (test/support/needs.ts, not-run-hooks.ts): a real mocha run over a
 * small test file whose tests need bubblewrap and socat; the seams CAESAR_BWRAP= and CAESAR_SOCAT= (empty: "not
 * installed here", as the product reads them) stand for a machine without them.
 */
const ROOT = path.resolve(__dirname, '../../..');
const NEEDS = path.join(ROOT, 'test/support/needs.ts');
const HOOKS = path.join(ROOT, 'test/support/not-run-hooks.ts');

const FIXTURE = `
const { needs } = require(${JSON.stringify(NEEDS)});
describe('needs bubblewrap for the whole describe', function () {
  before(async function () { await needs(this, 'bubblewrap'); });
  it('one', () => {});
  describe('nested', () => { it('two', () => {}); });
});
describe('one test needs socat', function () {
  it('needs socat', async function () { await needs(this, 'socat'); });
  it('needs nothing', () => {});
  it('skips bare', function () { this.skip(); });
});
`;

function mochaRun(env: NodeJS.ProcessEnv) {
  const dir = mkdtempSync(path.join(tmpdir(), 'caesar-not-run-'));
  const report = path.join(dir, 'report.json');
  writeFileSync(path.join(dir, 'fixture.test.ts'), FIXTURE);
  const clean = { ...process.env };
  delete clean.CI;
  try {
    const r = spawnSync(path.join(ROOT, 'node_modules/.bin/mocha'), ['--no-config', '--require', 'tsx/cjs', '--require', HOOKS, '--extension', 'ts', path.join(dir, 'fixture.test.ts')], {
      cwd: ROOT, encoding: 'utf8', timeout: 60_000, env: { ...clean, CAESAR_TEST_REPORT: report, ...env },
    });
    let written: { ran: number; notRun: { title: string; reason: string }[] } | undefined;
    try {
      written = JSON.parse(readFileSync(report, 'utf8'));
    } catch {
      written = undefined;
    }
    return { code: r.status, out: r.stdout + r.stderr, report: written };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('not run: a test that needs what this machine lacks', function () {
  this.timeout(90_000);

  it('is reported "not run: <reason>" with the install command, counted, and written to the report', () => {
    const { code, out, report } = mochaRun({ CAESAR_BWRAP: '', CAESAR_SOCAT: '' });
    assert.equal(code, 0, out);
    assert.match(out, /not run: 2 tests: bubblewrap \(bwrap\) is not installed; install it: .*apt-get install -y --no-install-recommends bubblewrap\n {4}- needs bubblewrap for the whole describe one\n {4}- needs bubblewrap for the whole describe nested two/);
    assert.match(out, /not run: 1 test: socat is not installed; install it: .*apt-get install -y --no-install-recommends socat\n {4}- one test needs socat needs socat/);
    assert.match(out, /not run: 1 test: skipped without a reason .*\n {4}- one test needs socat skips bare/);
    assert.match(out, /tests: 1 ran, 4 not run/);
    assert.equal(report?.ran, 1);
    assert.deepEqual(report?.notRun.map((n) => n.title).sort(), ['needs bubblewrap for the whole describe nested two', 'needs bubblewrap for the whole describe one', 'one test needs socat needs socat', 'one test needs socat skips bare'].sort());
  });

  for (const ci of ['true', '1', 'True']) {
    it(`fails under CI=${ci}, saying what was not run and why`, () => {
      const { code, out } = mochaRun({ CAESAR_BWRAP: '', CAESAR_SOCAT: '', CI: ci });
      assert.notEqual(code, 0, out);
      assert.match(out, /not run under CI, which must run everything: bubblewrap \(bwrap\) is not installed/);
      assert.match(out, /not run under CI, which must run everything: socat is not installed/);
      // The bare skip, which no helper saw, fails the run from the root hook.
      assert.match(out, /not run under CI, which must run everything: 1 test\(s\): one test needs socat skips bare/);
    });
  }

  it('runs where the tools are (this machine, when it has them)', async function () {
    await needs(this, 'bubblewrap', 'socat');
    const { code, out, report } = mochaRun({});
    assert.equal(code, 0, out);
    assert.equal(report?.ran, 4, out);
    assert.deepEqual(report?.notRun.map((n) => n.title), ['one test needs socat skips bare']);
  });
});

describe('the in-editor verdict: every registered test must report', () => {
  const outcome = (state: Outcome['state'], title = `a ${state} test`): Outcome => ({ title, state });

  it('fails a run where fewer tests reported than mocha registered, even if all of them passed', () => {
    assert.match(verdict([outcome('passed')], false, false, 50).failure ?? '', /50 in-editor test\(s\) registered but 1 reported: the others never ran/);
    assert.equal(verdict([outcome('passed'), outcome('passed')], false, false, 2).failure, undefined);
    assert.match(verdict([outcome('passed')], false, false, 1).summary, /1 passed, 0 failed, 0 pending of 1 registered/);
  });
});

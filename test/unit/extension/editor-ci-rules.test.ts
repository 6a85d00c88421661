import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { forbidsPending, grepRefusal, verdict, type Outcome } from '../../extension/verdict';

/**
 * The editor suite's honesty under CI=true (issue 28): its runner refuses every switch that runs part of it, the
 * in-editor runner fails on a pending test when driver.mjs tells it the run is under CI, and the UI scenario refuses to
 * run its timeline step alone. Locally the switches stay free.
 */
const ROOT = path.resolve(__dirname, '../../..');

function editorRunner(env: NodeJS.ProcessEnv) {
  const clean = { ...process.env };
  for (const name of ['CI', 'CAESAR_EDITOR_ONLY', 'CAESAR_TEST_GREP', 'CAESAR_UI_STEPS']) delete clean[name];
  // An empty editor cache and no install: were the refusal missing, the runner would skip (77), never start an editor.
  const cache = mkdtempSync(path.join(tmpdir(), 'caesar-editor-ci-'));
  try {
    const result = spawnSync(process.execPath, ['test/extension/run.mjs'], {
      cwd: ROOT, env: { ...clean, CAESAR_CACHE: cache, CAESAR_NO_EDITOR_INSTALL: '1', ...env }, encoding: 'utf8', timeout: 30_000,
    });
    return { code: result.status, out: result.stdout + result.stderr };
  } finally {
    rmSync(cache, { recursive: true, force: true });
  }
}

const outcome = (state: Outcome['state'], title = `a ${state} test`): Outcome => ({ title, state });

describe('editor suite under CI=true: no switch or skip shrinks it', () => {
  for (const [name, value] of [['CAESAR_EDITOR_ONLY', 'ui'], ['CAESAR_TEST_GREP', 'Tasks tree'], ['CAESAR_UI_STEPS', 'timeline']] as const) {
    it(`test/extension/run.mjs refuses ${name} before building or starting anything`, () => {
      const { code, out } = editorRunner({ CI: 'true', [name]: value });
      assert.equal(code, 1, out);
      assert.match(out, new RegExp(`REFUSED under CI: ${name}=${value} narrows the suite`));
      assert.doesNotMatch(out, /SKIPPED|esbuild|starting code-server/, out);
    });
  }

  it('the in-editor runner fails a pending test only when told the run is under CI', () => {
    const outcomes = [outcome('passed'), outcome('pending', 'Tasks tree skipped this')];
    assert.equal(verdict(outcomes, false).failure, undefined);
    assert.match(verdict(outcomes, true).failure ?? '', /1 in-editor test\(s\) pending, which CI=true does not allow: Tasks tree skipped this/);
    assert.equal(verdict([outcome('passed')], true).failure, undefined);
    assert.match(verdict([outcome('passed'), outcome('failed')], false).failure ?? '', /1 in-editor test\(s\) failed/);
    assert.match(verdict([outcome('pending')], false).failure ?? '', /no in-editor test ran/);
    assert.equal(verdict([], false, true).failure, undefined, 'a grep (never under CI) may match nothing in a folder');
    assert.match(verdict(outcomes, true).summary, /1 passed, 0 failed, 1 pending/);
  });

  it('the in-editor runner reads "under CI" from CAESAR_TEST_FORBID_PENDING and then refuses CAESAR_TEST_GREP', () => {
    assert.equal(forbidsPending({ CAESAR_TEST_FORBID_PENDING: '1' }), true);
    assert.equal(forbidsPending({ CI: 'true' }), false, 'CI itself is kept out of the editor (driver.mjs)');
    assert.match(grepRefusal({ CAESAR_TEST_FORBID_PENDING: '1', CAESAR_TEST_GREP: 'x' }) ?? '', /REFUSED under CI: CAESAR_TEST_GREP=x/);
    assert.equal(grepRefusal({ CAESAR_TEST_GREP: 'x' }), undefined);
  });

  it('the UI scenario refuses CAESAR_UI_STEPS under CI, and any step name it does not know', async () => {
    const { timelineStepAlone } = (await import(pathToFileURL(path.join(ROOT, 'test/e2e/scenario.mjs')).href)) as {
      timelineStepAlone: (env: NodeJS.ProcessEnv) => boolean;
    };
    assert.throws(() => timelineStepAlone({ CI: 'true', CAESAR_UI_STEPS: 'timeline' }), /REFUSED under CI: CAESAR_UI_STEPS=timeline/);
    assert.throws(() => timelineStepAlone({ CAESAR_UI_STEPS: 'timelines' }), /the only step that runs alone is "timeline"/);
    assert.equal(timelineStepAlone({ CAESAR_UI_STEPS: 'timeline' }), true);
    assert.equal(timelineStepAlone({ CI: 'true' }), false);
  });
});

import * as assert from 'node:assert/strict';
import { NATIVE_ADAPTERS } from '../../../src/agents/native';
import { GARBAGE_LINES, assertNoHollowText, assertToolsPaired, captureNames, replay } from './replay-helpers';

/**
 * Exit codes as RECIPES.md records them for these runs: HTTP errors exit with the status mod 256 (401→145, 403→147,
 * 500→244), a refused auth set-up with 41, an untrusted folder with 55, a fatal start-up error (sandbox image
 * missing offline, an unknown flag) with 1.
 */
const EMPTY_CAPTURES: Record<string, { exitCode: number; failure: string }> = {
  'gemini-err401-json': { exitCode: 145, failure: 'gemini exited with code 145 (the model API answered HTTP 401)' },
  'gemini-err403-json': { exitCode: 147, failure: 'gemini exited with code 147 (the model API answered HTTP 403)' },
  'gemini-err500-json': { exitCode: 244, failure: 'gemini exited with code 244 (the model API answered HTTP 500)' },
  'gemini-fail-no-selectedType': {
    exitCode: 41,
    failure: 'gemini refused its authentication set-up (exit 41): set security.auth.selectedType in its settings',
  },
  'gemini-fail-untrusted': { exitCode: 55, failure: 'gemini does not trust this folder (exit 55)' },
  'gemini-sandbox': { exitCode: 1, failure: 'gemini exited with code 1' },
  'gemini-worktree-flag': { exitCode: 1, failure: 'gemini exited with code 1' },
};

const JSON_FORMAT_CAPTURES = ['claude-write-jsonformat', 'gemini-shell-json'];

describe('every capture in test/agents/fixtures (copied from ../shared/agents/captures; antigravity-* from the reference implementation)', () => {
  const names = captureNames('');

  it('holds the captures of the five runnable CLIs', () => {
    for (const agent of ['codex', 'claude', 'opencode', 'copilot', 'gemini']) {
      assert.ok(names.filter((n) => n.startsWith(`${agent}-`)).length >= 5, agent);
    }
  });

  for (const name of names.filter((n) => !(n in EMPTY_CAPTURES) && !JSON_FORMAT_CAPTURES.includes(n))) {
    it(`${name}: every event validates as caesar.event/v1, tools are paired, no hollow text`, () => {
      const adapter = adapterOf(name);
      const { events, stamped, lines } = replay(adapter, name, 0);
      assert.ok(lines > 0, `${name} is empty: list it in EMPTY_CAPTURES with what the run must conclude`);
      assert.ok(events.length > 0, `${name}: ${lines} lines gave no event`);
      assert.equal(stamped.length, events.length);
      assertToolsPaired(events);
      assertNoHollowText(events);
    });
  }

  // Runs that failed before printing a line (their words went to stderr, kept beside each capture in
  // ../shared/agents/captures/*.stderr.txt). The stream gives nothing, so the exit code alone must become the
  // failure the user reads; an exit of 0 with an empty stream must not pass for success either.
  for (const [name, { exitCode, failure }] of Object.entries(EMPTY_CAPTURES)) {
    it(`${name}: an empty stream gives no event, no final text, and the exit code's meaning as the failure`, () => {
      const { events, summary, lines } = replay(adapterOf(name), name, exitCode);
      assert.equal(lines, 0, `${name} is no longer empty: replay it with the others`);
      assert.deepEqual(events, []);
      assert.equal(summary.finalText, undefined);
      assert.equal(summary.nativeFailure, failure);
    });
  }

  // `--output-format json` (one document at the end, which we never ask for: we pass stream-json) — what the
  // translators make of it if a user's extra arguments switch the format back.
  it('claude-write-jsonformat: the single result document still gives the final text and the usage, no event', () => {
    const { events, summary } = replay(adapterOf('claude-write-jsonformat'), 'claude-write-jsonformat', 0);
    assert.deepEqual(events, []);
    assert.equal(summary.finalText, 'Done: wrote hello.txt.');
    assert.deepEqual({ ...summary.usage, cost_usd: Number(summary.usage?.cost_usd?.toFixed(6)) }, {
      input_tokens: 246,
      output_tokens: 84,
      duration_ms: 376,
      cost_usd: 0.002664,
    });
  });

  it('gemini-shell-json: a pretty-printed document is not a stream: nothing is invented from its fragments', () => {
    const { events, summary, lines } = replay(adapterOf('gemini-shell-json'), 'gemini-shell-json', 0);
    assert.ok(lines > 50);
    assert.deepEqual(events, []);
    assert.deepEqual(summary, {});
  });

  it('lists in EMPTY_CAPTURES and JSON_FORMAT_CAPTURES only captures that exist', () => {
    for (const name of [...Object.keys(EMPTY_CAPTURES), ...JSON_FORMAT_CAPTURES]) assert.ok(names.includes(name), name);
  });
});

function adapterOf(name: string) {
  const adapter = NATIVE_ADAPTERS.find((a) => name.startsWith(`${a.id}-`));
  assert.ok(adapter, `no adapter for ${name}`);
  return adapter;
}

describe('unknown and broken native lines', () => {
  for (const adapter of NATIVE_ADAPTERS) {
    it(`${adapter.id}: never throw and never emit`, () => {
      const translator = adapter.createTranslator({ workspace: '/w' });
      for (const line of GARBAGE_LINES) assert.deepEqual(translator.line(line), [], `${adapter.id}: ${line}`);
      assert.doesNotThrow(() => translator.end(null));
    });
  }
});

import * as assert from 'node:assert/strict';
import { NATIVE_ADAPTERS } from '../../../src/agents/native';
import { GARBAGE_LINES, assertNoHollowText, assertToolsPaired, captureNames, replay } from './replay-helpers';

describe('every capture in test/agents/fixtures (copied from ../shared/agents/captures)', () => {
  const names = captureNames('');

  it('holds the captures of the five runnable CLIs', () => {
    for (const agent of ['codex', 'claude', 'opencode', 'copilot', 'gemini']) {
      assert.ok(names.filter((n) => n.startsWith(`${agent}-`)).length >= 5, agent);
    }
  });

  for (const name of names) {
    it(`${name}: every event validates as caesar.event/v1, tools are paired, no hollow text`, () => {
      const adapter = NATIVE_ADAPTERS.find((a) => name.startsWith(`${a.id}-`));
      assert.ok(adapter, `no adapter for ${name}`);
      const { events, stamped } = replay(adapter, name, 0);
      assert.equal(stamped.length, events.length);
      assertToolsPaired(events);
      assertNoHollowText(events);
    });
  }
});

describe('unknown and broken native lines', () => {
  for (const adapter of NATIVE_ADAPTERS) {
    it(`${adapter.id}: never throw and never emit`, () => {
      const translator = adapter.createTranslator({ workspace: '/w' });
      for (const line of GARBAGE_LINES) assert.deepEqual(translator.line(line), [], `${adapter.id}: ${line}`);
      assert.doesNotThrow(() => translator.end(null));
    });
  }
});

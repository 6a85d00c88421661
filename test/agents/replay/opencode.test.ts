import * as assert from 'node:assert/strict';
import { opencodeAdapter } from '../../../src/agents/opencode';
import { assertNoHollowText, assertToolsPaired, captureNames, recordedExit, replay } from './replay-helpers';

describe('opencode translator (captures of opencode 1.18.33)', () => {
  it('opencode-tool: a tool known only at its end is shown as started (with its real start time) then succeeded', () => {
    const { events, summary } = replay(opencodeAdapter, 'opencode-tool', 0);
    const summaryText = 'echo hello > hello.txt && cat hello.txt';
    assert.deepEqual(events, [
      { type: 'tool_use', tool: 'bash', id: 'call_2', input_summary: summaryText, status: 'started', started_at: new Date(1795957964809).toISOString() },
      { type: 'tool_use', tool: 'bash', id: 'call_2', input_summary: summaryText, status: 'succeeded' },
      { type: 'message', text: 'Done: created hello.txt.' },
    ]);
    // step_finish tokens summed over both steps; cost 0 is a real value, not an absence.
    assert.deepEqual(summary, { sessionId: 'ses_dd8904700ffermJYuuPnM0vmQ4', finalText: 'Done: created hello.txt.', usage: { input_tokens: 24, output_tokens: 10, cost_usd: 0 } });
  });

  it('opencode-write-tool: the write is a file change relative to the workspace', () => {
    const { events } = replay(opencodeAdapter, 'opencode-write-tool', 0, '/home/dev/lab/w-oct');
    assert.deepEqual(events.filter((e) => e.type === 'file_changed'), [{ type: 'file_changed', path: 'written.txt', action: 'created' }]);
  });

  it('opencode-tool-error and permission rejections are failed tools, not failed runs', () => {
    for (const name of ['opencode-tool-error', 'opencode-permission-ask-external']) {
      const { events, summary } = replay(opencodeAdapter, name, 0);
      assert.deepEqual(events.filter((e) => e.type === 'tool_use').map((e) => e.type === 'tool_use' && e.status), ['started', 'failed'], name);
      assert.equal(summary.nativeFailure, undefined);
    }
  });

  it('opencode-http401 / 500: the error line is fatal and names the HTTP status', () => {
    const auth = replay(opencodeAdapter, 'opencode-http401', recordedExit('opencode-http401') ?? 1);
    assert.deepEqual(auth.events, [{ type: 'error', message: 'Incorrect API key provided (fake) (HTTP 401)', fatal: true }]);
    assert.equal(auth.summary.nativeFailure, 'Incorrect API key provided (fake) (HTTP 401)');
    const server = replay(opencodeAdapter, 'opencode-http500', 1);
    assert.equal(server.summary.nativeFailure, 'fake internal error (HTTP 500)');
  });

  it('opencode-reasoning-unknown-tool: reasoning is thinking; the invalid-tool call is still paired', () => {
    const { events } = replay(opencodeAdapter, 'opencode-reasoning-unknown-tool', 0);
    assert.deepEqual(events.map((e) => e.type), ['thinking', 'tool_use', 'tool_use', 'message']);
  });

  it('every opencode capture yields valid, paired, non-hollow events', () => {
    for (const name of captureNames('opencode-')) {
      const { events } = replay(opencodeAdapter, name, 0);
      assertToolsPaired(events);
      assertNoHollowText(events);
    }
  });
});

import * as assert from 'node:assert/strict';
import { antigravityAdapter, goDuration } from '../../../src/agents/antigravity';
import { assertToolsPaired, replayText } from './replay-helpers';

/**
 * HAND-WRITTEN lines: antigravity (`agy`) cannot be installed here, so these lines follow its documented stream
 * (reference-behaviours §3.5) and are not captures. Nothing here proves the real CLI.
 */
const HANDWRITTEN = [
  '{"type":"step_update","step":{"type":"agent_response","text_delta":"Looking at "}}',
  '{"type":"step_update","step":{"type":"agent_response","text_delta":"the code."}}',
  '{"type":"step_update","step":{"type":"tool_call","id":"call_1","name":"run_command","input":{"command":"ls"}}}',
  '{"type":"step_update","step":{"type":"tool_result","id":"call_1","status":"ok"}}',
  '{"type":"step_update","step":{"type":"error_message"}}',
  '{"type":"step_update","step":{"type":"agent_response","text_delta":"All done."}}',
  '{"type":"result","status":"SUCCESS","response":"All done."}',
].join('\n');

describe('antigravity translator (UNVERIFIED: hand-written lines)', () => {
  it('text deltas are merged, tool calls paired, error steps non-fatal, result response is the final text', () => {
    const { events, summary } = replayText(antigravityAdapter, HANDWRITTEN, 0);
    assert.deepEqual(events, [
      { type: 'message', text: 'Looking at the code.' },
      { type: 'tool_use', tool: 'run_command', id: 'call_1', input_summary: 'ls', status: 'started' },
      { type: 'tool_use', tool: 'run_command', id: 'call_1', input_summary: 'ls', status: 'succeeded' },
      { type: 'error', message: 'Antigravity reported an error, without giving its text in its stream.', fatal: false },
      { type: 'message', text: 'All done.' },
    ]);
    assertToolsPaired(events);
    assert.deepEqual(summary, { finalText: 'All done.' });
  });

  it('a result error or a non-SUCCESS status is the native failure; a top-level error is fatal', () => {
    const failed = replayText(antigravityAdapter, '{"type":"result","status":"ERROR","error":"quota exhausted"}', 1);
    assert.deepEqual(failed.events, [{ type: 'error', message: 'quota exhausted', fatal: true }]);
    assert.equal(failed.summary.nativeFailure, 'quota exhausted');
    const cancelled = replayText(antigravityAdapter, '{"type":"result","status":"CANCELLED"}', 0);
    assert.equal(cancelled.summary.nativeFailure, 'Antigravity ended with status CANCELLED');
    const top = replayText(antigravityAdapter, '{"type":"error","error":{"message":"auth"}}', 1);
    assert.deepEqual(top.events, [{ type: 'error', message: 'auth', fatal: true }]);
  });

  it('a JSON response is offered as the structured output (schema tier)', () => {
    const { summary } = replayText(antigravityAdapter, '{"type":"result","status":"SUCCESS","response":"{\\"status\\":\\"success\\"}"}', 0);
    assert.deepEqual(summary.structuredOutput, { status: 'success' });
  });

  it('the print timeout is a Go duration rounded up to whole seconds', () => {
    assert.equal(goDuration(60_000), '1m');
    assert.equal(goDuration(90_000), '90s');
    assert.equal(goDuration(900_000), '15m');
    assert.equal(goDuration(7_200_000), '2h');
    assert.equal(goDuration(1), '1s');
    assert.equal(goDuration(1_500), '2s');
  });
});

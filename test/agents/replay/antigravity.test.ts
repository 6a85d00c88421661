import * as assert from 'node:assert/strict';
import { antigravityAdapter, goDuration } from '../../../src/agents/antigravity';
import { assertNoHollowText, readFixture, replay, replayText } from './replay-helpers';

const SILENT_ERROR = { type: 'error', message: 'Antigravity reported an error, without giving its text in its stream.', fatal: false };
const QUOTA = 'Individual quota reached. Please upgrade your subscription to increase your limits. Resets in 101h33m31s.';

/**
 * Real captures of `agy --output-format stream-json`, copied from the public reference implementation's fixtures
 * (provenance in test/agents/fixtures/antigravity-*.cmd): agy cannot run here. Neither recorded its exit code, so each
 * is replayed with 0: the stream alone must say whether the run failed.
 */
describe('antigravity translator (real captures from the reference implementation)', () => {
  it('antigravity-ok: the text_delta of the agent_response is the message, the result response the final text, usage the totals', () => {
    const { events, summary } = replay(antigravityAdapter, 'antigravity-ok', 0);
    assert.deepEqual(events, [{ type: 'message', text: 'OK\n' }]);
    assert.deepEqual(summary, { sessionId: '82ac559e-bf5b-4eae-9d4c-12ce10d41f3a', finalText: 'OK\n', usage: { input_tokens: 16932, output_tokens: 291, duration_ms: 5582 } });
  });

  it('antigravity-quota: each text-less error_message step is a notice, result.error is the fatal error and the failure', () => {
    const { events, stamped, summary } = replay(antigravityAdapter, 'antigravity-quota', 0);
    assert.deepEqual(events, [SILENT_ERROR, SILENT_ERROR, SILENT_ERROR, { type: 'error', message: QUOTA, fatal: true }]);
    assert.equal(stamped.length, 4);
    assert.deepEqual(summary, { sessionId: '1d008f41-d241-4139-82ed-49102213fb61', nativeFailure: QUOTA, usage: { input_tokens: 0, output_tokens: 0, duration_ms: 4377 } });
  });

  it('a stream cut before its result still gives the streamed text, the steps\' usage, and fails on the exit code', () => {
    const cut = readFixture('antigravity-ok.jsonl').split('\n').filter((l) => !l.startsWith('{"event":"result"')).join('\n');
    const { events, summary } = replayText(antigravityAdapter, cut, 1);
    assert.deepEqual(events, [{ type: 'message', text: 'OK\n' }]);
    assert.deepEqual(summary, { sessionId: '82ac559e-bf5b-4eae-9d4c-12ce10d41f3a', finalText: 'OK\n', usage: { input_tokens: 16932, output_tokens: 291 }, nativeFailure: 'agy exited with code 1' });
  });

  // Variations of the captured lines (same fields, other values), for the branches the two runs did not take.
  it('the deltas of one step make one message; the next step, or the result, closes it', () => {
    const delta = (index: number, text: string) =>
      JSON.stringify({ event: 'step_update', step_update: { step_index: index, state: 'DONE', step_type: 'agent_response', text_delta: text } });
    const { events, summary } = replayText(antigravityAdapter, [delta(2, 'Looking at '), delta(2, 'the code.'), delta(3, 'All done.'), '{"event":"result","result":{"status":"SUCCESS"}}'].join('\n'), 0);
    assert.deepEqual(events, [
      { type: 'message', text: 'Looking at the code.' },
      { type: 'message', text: 'All done.' },
    ]);
    assert.equal(summary.finalText, 'All done.');
    assertNoHollowText(events);
  });

  it('a result status other than SUCCESS without an error is still the failure; a top-level error is fatal', () => {
    const cancelled = replayText(antigravityAdapter, '{"event":"result","result":{"status":"CANCELLED","response":""}}', 0);
    assert.deepEqual(cancelled.events, []);
    assert.equal(cancelled.summary.nativeFailure, 'Antigravity ended with status CANCELLED');
    const top = replayText(antigravityAdapter, '{"event":"error","error":{"message":"auth"}}', 1);
    assert.deepEqual(top.events, [{ type: 'error', message: 'auth', fatal: true }]);
    assert.equal(top.summary.nativeFailure, 'auth');
    const blank = replayText(antigravityAdapter, '{"event":"error","message":"  "}', 1);
    assert.deepEqual(blank.events, [{ type: 'error', message: 'Antigravity reported an error', fatal: true }]);
  });

  it('a JSON response is offered as the structured output (schema tier)', () => {
    const { summary } = replayText(antigravityAdapter, '{"event":"result","result":{"status":"SUCCESS","response":"{\\"status\\":\\"success\\"}"}}', 0);
    assert.deepEqual(summary.structuredOutput, { status: 'success' });
    assert.equal(summary.nativeFailure, undefined);
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

import * as assert from 'node:assert/strict';
import { exitMeaning, geminiAdapter } from '../../../src/agents/gemini';
import { assertNoHollowText, assertToolsPaired, captureNames, replay } from './replay-helpers';

describe('gemini translator (captures of Gemini CLI 0.61.0)', () => {
  it('gemini-shell-stream: deltas merged into one message per run, tool paired by tool_id, usage', () => {
    const { events, summary } = replay(geminiAdapter, 'gemini-shell-stream', 0);
    const id = 'run_shell_command__run_shell_command_1795960720167_0';
    assert.deepEqual(events, [
      { type: 'message', text: 'Let me do that.' },
      { type: 'tool_use', tool: 'run_shell_command', id, input_summary: 'echo hello > hello.txt', status: 'started' },
      { type: 'tool_use', tool: 'run_shell_command', id, input_summary: 'echo hello > hello.txt', status: 'succeeded' },
      { type: 'message', text: 'Done. I created hello.txt.' },
    ]);
    assert.deepEqual(summary, { sessionId: 'f3ea7c04-57d3-48c9-a982-b49a1f242026', finalText: 'Done. I created hello.txt.', usage: { input_tokens: 200, output_tokens: 20, duration_ms: 170 } });
  });

  it('gemini-err401-stream / err500-stream: result status error is the failure; exit code is HTTP mod 256', () => {
    const auth = replay(geminiAdapter, 'gemini-err401-stream', 145);
    assert.equal(auth.events.length, 1);
    assert.equal(auth.events[0]?.type === 'error' && auth.events[0].fatal, true);
    assert.match(auth.summary.nativeFailure ?? '', /"code":401/);
    const server = replay(geminiAdapter, 'gemini-err500-stream', 244);
    assert.match(server.summary.nativeFailure ?? '', /"code":500/);
  });

  it('an exit code alone is read as the HTTP status it encodes', () => {
    assert.equal(exitMeaning(145), 'gemini exited with code 145 (the model API answered HTTP 401)');
    assert.equal(exitMeaning(244), 'gemini exited with code 244 (the model API answered HTTP 500)');
    assert.match(exitMeaning(41), /authentication/);
    assert.match(exitMeaning(55), /trust/);
    assert.equal(exitMeaning(1), 'gemini exited with code 1');
    const translator = geminiAdapter.createTranslator();
    assert.equal(translator.end(145).nativeFailure, 'gemini exited with code 145 (the model API answered HTTP 401)');
  });

  it('gemini-invalid-empty / safety: status error with exit code 0 still fails, with the error line as the reason', () => {
    for (const name of ['gemini-invalid-empty', 'gemini-invalid-safety']) {
      const { events, summary } = replay(geminiAdapter, name, 0);
      assert.deepEqual(events.map((e) => e.type), ['error'], name);
      assert.ok(summary.nativeFailure && events[0]?.type === 'error' && summary.nativeFailure === events[0].message, name);
    }
  });

  it('gemini-noyolo-stream: a tool that is not declared read-only-mode fails; the run does not', () => {
    const { events, summary } = replay(geminiAdapter, 'gemini-noyolo-stream', 0);
    assert.deepEqual(events.filter((e) => e.type === 'tool_use').map((e) => e.type === 'tool_use' && e.status), ['started', 'failed']);
    assert.equal(summary.nativeFailure, undefined);
  });

  it('trailing deltas without a result line still make the final text', () => {
    const translator = geminiAdapter.createTranslator();
    translator.line('{"type":"message","role":"assistant","content":"half ","delta":true}');
    translator.line('{"type":"message","role":"assistant","content":"done","delta":true}');
    assert.equal(translator.end(0).finalText, 'half done');
  });

  it('every gemini capture yields valid, paired, non-hollow events (json output and empty captures yield nothing)', () => {
    for (const name of captureNames('gemini-')) {
      const { events } = replay(geminiAdapter, name, 0);
      assertToolsPaired(events);
      assertNoHollowText(events);
    }
    assert.deepEqual(replay(geminiAdapter, 'gemini-shell-json', 0).events, []);
  });
});

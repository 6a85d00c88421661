import * as assert from 'node:assert/strict';
import { codexAdapter } from '../../../src/agents/codex';
import { assertNoHollowText, assertToolsPaired, recordedExit, replay } from './replay-helpers';

describe('codex translator (captures of codex-cli 0.171.0)', () => {
  it('codex-tool: reasoning, a shell command paired by item id, a patch with a relative path, usage', () => {
    const { events, summary } = replay(codexAdapter, 'codex-tool', recordedExit('codex-tool')!);
    assert.deepEqual(events, [
      { type: 'thinking', text: '**Planning** I will create the file with a shell command.' },
      { type: 'tool_use', tool: 'shell', id: 'item_1', input_summary: 'echo hello > hello.txt && cat hello.txt', status: 'started' },
      { type: 'tool_use', tool: 'shell', id: 'item_1', input_summary: 'echo hello > hello.txt && cat hello.txt', status: 'succeeded' },
      { type: 'tool_use', tool: 'apply_patch', id: 'item_2', input_summary: 'patched.txt', status: 'started' },
      { type: 'tool_use', tool: 'apply_patch', id: 'item_2', input_summary: 'patched.txt', status: 'succeeded' },
      { type: 'file_changed', path: 'patched.txt', action: 'created' },
      { type: 'message', text: 'Done: created hello.txt.' },
    ]);
    assert.deepEqual(summary, { sessionId: '01a22769-5d08-7af3-baea-135aee9c8529', finalText: 'Done: created hello.txt.', usage: { input_tokens: 33, output_tokens: 21 } });
  });

  it('codex-worktree: paths are made relative to the worktree the run used', () => {
    const { events } = replay(codexAdapter, 'codex-worktree', 0, '/home/dev/lab/wt');
    assert.deepEqual(events.filter((e) => e.type === 'file_changed'), [{ type: 'file_changed', path: 'patched.txt', action: 'created' }]);
  });

  it('without a workspace the absolute path is kept rather than guessed', () => {
    const { events } = replay(codexAdapter, 'codex-worktree', 0, '');
    assert.deepEqual(events.filter((e) => e.type === 'file_changed'), [{ type: 'file_changed', path: '/home/dev/lab/wt/patched.txt', action: 'created' }]);
  });

  it('codex-http401: one fatal error, turn.failed as the native failure, exit 1', () => {
    const { events, summary } = replay(codexAdapter, 'codex-http401', recordedExit('codex-http401')!);
    const message = 'unexpected status 401 Unauthorized: Incorrect API key provided (fake), url: http://127.0.0.1:18080/v1/responses';
    assert.deepEqual(events, [{ type: 'error', message, fatal: false }]);
    assert.equal(summary.nativeFailure, message);
    assert.equal(summary.finalText, undefined);
  });

  it('codex-http500-default-retries: reconnect notices are progress, the last error is the failure', () => {
    const { events, summary } = replay(codexAdapter, 'codex-http500-default-retries', 1);
    assert.deepEqual(events.map((e) => e.type), ['progress', 'progress', 'progress', 'progress', 'progress', 'error']);
    assert.match(summary.nativeFailure ?? '', /high demand/);
  });

  it('codex-stream-cut: a broken stream fails the run', () => {
    const { summary } = replay(codexAdapter, 'codex-stream-cut', 1);
    assert.equal(summary.nativeFailure, 'stream disconnected before completion: error sending request');
  });

  it('codex-output-schema: the final message is the structured answer (validated later by the orchestrator)', () => {
    const { summary } = replay(codexAdapter, 'codex-output-schema', 0);
    assert.deepEqual(summary.structuredOutput, { status: 'ok', files: ['hello.txt'] });
    assert.equal(summary.finalText, '{"status":"ok","files":["hello.txt"]}');
  });

  it('codex-mcp: an MCP tool call is paired and named by server and tool', () => {
    const { events } = replay(codexAdapter, 'codex-mcp', 0);
    assert.deepEqual(events.slice(0, 2), [
      { type: 'tool_use', tool: 'mcp:logmcp/ping', id: 'item_0', input_summary: '{"msg":"hi"}', status: 'started' },
      { type: 'tool_use', tool: 'mcp:logmcp/ping', id: 'item_0', input_summary: '{"msg":"hi"}', status: 'succeeded' },
    ]);
  });

  it('codex-fallback-model-warning: the error item is a non-fatal notice; the run still succeeds', () => {
    const { events, summary } = replay(codexAdapter, 'codex-fallback-model-warning', 0);
    assert.equal(events[0]?.type, 'error');
    assert.equal(events[0]?.type === 'error' && events[0].fatal, false);
    assert.equal(summary.nativeFailure, undefined);
    assertToolsPaired(events);
  });

  it('codex-git-add-denied-no-item: a denied command leaves no tool event (git is the record)', () => {
    const { events, summary } = replay(codexAdapter, 'codex-git-add-denied-no-item', 0);
    assert.deepEqual(events.map((e) => e.type), ['thinking', 'message']);
    assert.equal(summary.nativeFailure, undefined);
  });

  it('a failed command is a failed tool; a non-zero exit without a stream error still fails the run', () => {
    const lines = [
      '{"type":"item.started","item":{"id":"item_9","type":"command_execution","command":"false","aggregated_output":"","exit_code":null,"status":"in_progress"}}',
      '{"type":"item.completed","item":{"id":"item_9","type":"command_execution","command":"false","aggregated_output":"","exit_code":1,"status":"failed"}}',
    ].join('\n');
    const translator = codexAdapter.createTranslator();
    const events = lines.split('\n').flatMap((l) => translator.line(l));
    assert.deepEqual(events.map((e) => e.type === 'tool_use' && e.status), ['started', 'failed']);
    assert.equal(translator.end(2).nativeFailure, 'codex exited with code 2');
  });

  it('every codex line of every capture yields valid, paired, non-hollow events', () => {
    for (const name of ['codex-readonly', 'codex-worktree', 'codex-tool', 'codex-mcp']) {
      const { events } = replay(codexAdapter, name, 0);
      assertToolsPaired(events);
      assertNoHollowText(events);
    }
  });
});

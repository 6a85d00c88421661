import * as assert from 'node:assert/strict';
import { copilotAdapter } from '../../../src/agents/copilot';
import { assertNoHollowText, assertToolsPaired, captureNames, replay } from './replay-helpers';

describe('copilot translator (captures of GitHub Copilot CLI 1.0.102)', () => {
  it('copilot-allow-write: message, reasoning, create paired by toolCallId, file change, duration', () => {
    const { events, summary } = replay(copilotAdapter, 'copilot-allow-write', 0, '/home/dev/lab/runs/copilot-allow-write/home/dev/lab/work');
    const file = '/home/dev/lab/runs/copilot-allow-write/home/dev/lab/work/hello.txt';
    assert.deepEqual(events, [
      { type: 'message', text: 'Creating the file now.' },
      { type: 'thinking', text: 'I will create the file with the create tool.' },
      { type: 'tool_use', tool: 'create', id: 'toolu_fakemx1uqd3n0003', input_summary: file, status: 'started' },
      { type: 'tool_use', tool: 'create', id: 'toolu_fakemx1uqd3n0003', input_summary: file, status: 'succeeded' },
      { type: 'file_changed', path: 'hello.txt', action: 'created' },
      { type: 'message', text: 'Done: wrote hello.txt.' },
    ]);
    assert.deepEqual(summary, { sessionId: '120474cd-dd2a-4e98-85fe-d6d8c2d73bf9', finalText: 'Done: wrote hello.txt.', usage: { duration_ms: 533 } });
  });

  it('copilot-bash: the shell tool is started before it runs and closed once', () => {
    const { events } = replay(copilotAdapter, 'copilot-bash', 0);
    assert.deepEqual(
      events.filter((e) => e.type === 'tool_use').map((e) => e.type === 'tool_use' && `${e.tool}:${e.status}:${e.input_summary}`),
      ['bash:started:echo hello > hello.txt && cat hello.txt', 'bash:succeeded:echo hello > hello.txt && cat hello.txt'],
    );
  });

  it('copilot-noallow / copilot-plan: denied tools are failed, the run is not', () => {
    for (const name of ['copilot-noallow', 'copilot-noallow-bash', 'copilot-plan']) {
      const { events, summary } = replay(copilotAdapter, name, 0);
      assert.deepEqual(events.filter((e) => e.type === 'tool_use').map((e) => e.type === 'tool_use' && e.status), ['started', 'failed'], name);
      assert.equal(events.some((e) => e.type === 'file_changed'), false);
      assert.equal(summary.nativeFailure, undefined);
    }
  });

  it('copilot-error401 / 500: session.error is fatal and the failure, retries are progress', () => {
    const auth = replay(copilotAdapter, 'copilot-error401', 1);
    assert.match(auth.summary.nativeFailure ?? '', /HTTP 401/);
    assert.equal(auth.events.filter((e) => e.type === 'error' && e.fatal).length, 1);
    const server = replay(copilotAdapter, 'copilot-error500', 1);
    assert.equal(server.events.filter((e) => e.type === 'progress').length, 5);
    assert.ok(server.summary.nativeFailure);
  });

  it('a result line with a non-zero exitCode fails the run even when the process exit code is lost', () => {
    const translator = copilotAdapter.createTranslator();
    translator.line('{"type":"result","exitCode":1,"usage":{"sessionDurationMs":10}}');
    assert.equal(translator.end(null).nativeFailure, 'copilot reported exit code 1');
  });

  it('copilot-mcp: an MCP tool is named by server and tool', () => {
    const { events } = replay(copilotAdapter, 'copilot-mcp', 0);
    assert.equal(events.find((e) => e.type === 'tool_use')?.type === 'tool_use' && (events.find((e) => e.type === 'tool_use') as { tool: string }).tool, 'mcp:fakemcp/shout');
  });

  it('every copilot capture yields valid, paired, non-hollow events', () => {
    for (const name of captureNames('copilot-')) {
      const { events } = replay(copilotAdapter, name, 0);
      assertToolsPaired(events);
      assertNoHollowText(events);
    }
  });
});

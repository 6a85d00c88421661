import * as assert from 'node:assert/strict';
import { claudeAdapter } from '../../../src/agents/claude';
import { assertNoHollowText, assertToolsPaired, captureNames, replay } from './replay-helpers';

const WRITE_PATH = '/home/dev/lab/runs/claude-write/home/dev/lab/work/hello.txt';

describe('claude translator (captures of Claude Code 2.1.332)', () => {
  it('claude-write: thinking, text, Write started and closed by tool_use_id under its name, final text, usage and cost', () => {
    const { events, summary } = replay(claudeAdapter, 'claude-write', 0);
    assert.deepEqual(events, [
      { type: 'thinking', text: 'I will write the file with the Write tool.' },
      { type: 'message', text: 'Creating the file now.' },
      { type: 'tool_use', tool: 'Write', id: 'toolu_fakemx1urylk0003', input_summary: WRITE_PATH, status: 'started' },
      { type: 'tool_use', tool: 'Write', id: 'toolu_fakemx1urylk0003', input_summary: WRITE_PATH, status: 'succeeded' },
      { type: 'message', text: 'Done: wrote hello.txt.' },
    ]);
    assert.deepEqual(summary, { sessionId: 'b5a490ca-a758-4aa2-9cce-ea31d9bb5ae0',
      finalText: 'Done: wrote hello.txt.',
      usage: { input_tokens: 246, output_tokens: 84, cost_usd: 0.0026639999999999997, duration_ms: 425 },
    });
  });

  it('claude-error401: the synthetic message is a fatal error, is_error is the failure though subtype says success', () => {
    const { events, summary } = replay(claudeAdapter, 'claude-error401', 1);
    assert.deepEqual(events, [{ type: 'error', message: 'Invalid API key · Fix external API key', fatal: true }]);
    assert.equal(summary.nativeFailure, 'Invalid API key · Fix external API key');
    assert.equal(summary.finalText, undefined);
    assert.deepEqual(summary.usage, { input_tokens: 0, output_tokens: 0, cost_usd: 0, duration_ms: 204 });
  });

  it('claude-error500 and its retries: retries are progress, the failure names HTTP 500', () => {
    const plain = replay(claudeAdapter, 'claude-error500', 1);
    assert.match(plain.summary.nativeFailure ?? '', /API Error: 500/);
    const retried = replay(claudeAdapter, 'claude-error500-retry2', 1);
    assert.deepEqual(retried.events.map((e) => e.type), ['progress', 'progress', 'error']);
    assert.equal(retried.events[0]?.type === 'progress' && retried.events[0].message, 'Model API retry 1/2 after HTTP 500');
  });

  it('claude-json-schema: the StructuredOutput answer is the structured output', () => {
    const { events, summary } = replay(claudeAdapter, 'claude-json-schema', 0);
    assert.deepEqual(summary.structuredOutput, { name: 'fake-name' });
    assertToolsPaired(events);
    assert.equal(summary.nativeFailure, undefined);
  });

  it('claude-json-schema-invalid / -notool: no structured output, so the orchestrator must fall back', () => {
    const invalid = replay(claudeAdapter, 'claude-json-schema-invalid', 0);
    assert.equal(invalid.summary.structuredOutput, undefined);
    assert.equal(invalid.summary.finalText, 'Structured output given.');
    assert.deepEqual(invalid.events.filter((e) => e.type === 'tool_use').map((e) => e.type === 'tool_use' && `${e.tool}:${e.status}`), [
      'StructuredOutput:started',
      'StructuredOutput:failed',
    ]);
    const notool = replay(claudeAdapter, 'claude-json-schema-notool', 0);
    assert.equal(notool.summary.structuredOutput, undefined);
    assert.equal(notool.summary.nativeFailure, undefined);
  });

  it('permission denials (plan, default, dontAsk, manual) are failed tools; the run itself succeeds', () => {
    for (const mode of ['plan', 'default', 'dontAsk', 'manual']) {
      for (const tool of ['bash', 'write']) {
        const { events, summary } = replay(claudeAdapter, `claude-perm-${mode}-${tool}`, 0);
        const ends = events.filter((e) => e.type === 'tool_use' && e.status !== 'started');
        assert.deepEqual(ends.map((e) => e.type === 'tool_use' && e.status), ['failed'], `${mode}-${tool}`);
        assert.equal(summary.nativeFailure, undefined);
      }
    }
    for (const mode of ['acceptEdits', 'auto', 'bypassPermissions']) {
      const { events } = replay(claudeAdapter, `claude-perm-${mode}-bash`, 0);
      assert.deepEqual(events.filter((e) => e.type === 'tool_use').map((e) => e.type === 'tool_use' && e.status), ['started', 'succeeded'], mode);
    }
  });

  it('claude-write-partial: stream_event lines are ignored, blocks are not duplicated', () => {
    const partial = replay(claudeAdapter, 'claude-write-partial', 0).events;
    assert.deepEqual(partial.map((e) => e.type), ['thinking', 'message', 'tool_use', 'tool_use', 'message']);
  });

  it('claude-mcp: an MCP tool is paired by id and keeps its name on the close', () => {
    const { events } = replay(claudeAdapter, 'claude-mcp', 0);
    assert.deepEqual(
      events.filter((e) => e.type === 'tool_use').map((e) => e.type === 'tool_use' && `${e.tool}:${e.status}`),
      ['mcp__fakemcp__shout:started', 'mcp__fakemcp__shout:succeeded'],
    );
  });

  it('a repeated assistant line of the same message is merged, not shown twice', () => {
    const line = '{"type":"assistant","message":{"id":"msg_1","model":"m","content":[{"type":"text","text":"Hello"}]}}';
    const translator = claudeAdapter.createTranslator();
    assert.equal([line, line].flatMap((l) => translator.line(l)).length, 1);
  });

  it('every claude capture yields valid, paired, non-hollow events (empty thinking is never emitted)', () => {
    for (const name of captureNames('claude-')) {
      const { events } = replay(claudeAdapter, name, 0);
      assertToolsPaired(events);
      assertNoHollowText(events);
    }
  });
});

import { strict as assert } from 'node:assert';
import { existsSync, readdirSync } from 'node:fs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { MAX_QUESTION_BYTES, taskPaths } from '../../src/protocol';
import { buildChannelCli, makeTaskDir } from './channel-helpers';

type ToolResult = { isError?: boolean; structuredContent?: Record<string, unknown>; content?: Array<{ type: string; text?: string }> };

/*
 * Issue 34, the return channel's side of a bounded answer: an agent's ask_orchestrator with a 10 MB question was
 * written, then unread by every reader (bounded at 4 MiB: no person was ever shown it) while the agent waited for
 * its answer. A question past MAX_QUESTION_BYTES is now refused at once, saying so, and nothing is filed.
 */
describe('mcp: the return channel refuses a question past 64 KiB (issue 34)', function () {
  this.timeout(60_000);
  let client: Client | undefined;
  after(async () => {
    await client?.close().catch(() => undefined);
  });

  it('a 10 MB question and 64 KiB of options: tool errors naming the limit, no question file; a short one is asked', async () => {
    const { root, id, dir } = await makeTaskDir();
    const cli = await buildChannelCli();
    const inherited = Object.fromEntries(Object.entries(process.env).filter((e): e is [string, string] => e[1] !== undefined));
    client = new Client({ name: 'question-limit', version: '1.0.0' });
    await client.connect(
      new StdioClientTransport({ command: process.execPath, args: [cli, 'channel', 'serve', '--task-dir', dir], env: { ...inherited, CAESAR_CHANNEL_ANSWER_WAIT_MS: '300' }, stderr: 'pipe' }),
    );
    const questionsDir = taskPaths(root, id).questionsDir;
    const filed = () => (existsSync(questionsDir) ? readdirSync(questionsDir).filter((f) => f.endsWith('.json')) : []);

    for (const args of [{ question: 'q'.repeat(10_000_000) }, { question: 'Which one?', options: Array.from({ length: 64 }, () => 'o'.repeat(1024)) }]) {
      const asked = (await client.callTool({ name: 'ask_orchestrator', arguments: args })) as ToolResult;
      assert.equal(asked.isError, true);
      assert.match(asked.content?.[0]?.text ?? '', /over the 64\.0 KiB limit: it was not asked/);
      assert.deepEqual(filed(), []);
    }
    const fits = (await client.callTool({ name: 'ask_orchestrator', arguments: { question: 'q'.repeat(MAX_QUESTION_BYTES - 100) } })) as ToolResult;
    assert.equal(fits.isError, undefined, JSON.stringify(fits.content));
    assert.equal(filed().length, 1, 'the question that fits was asked (and expired unanswered)');
  });
});

import { strict as assert } from 'node:assert';
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { buildCli, makeRepo } from '../engine/runtime/helpers';
import { makeTaskDir } from '../mcp/channel-helpers';
import { serve } from '../mcp/orchestrator-helpers';

/**
 * Issue 23 item 5b: a request line over 10 MiB made `caesar mcp serve` exit 0 without a word (the SDK's stdio
 * transport closes on its buffer's overflow), and every later call failed "Not connected". Both servers now answer
 * such a request with a JSON-RPC error and keep serving.
 */
describe('reliability: MCP servers and an oversized request', function () {
  this.timeout(60_000);
  before(() => buildCli());

  const huge = () => 'x'.repeat(11 * 1024 * 1024);

  it('caesar mcp serve (real SDK client): an 11 MiB call is refused with a JSON-RPC error naming the limit, the next calls work', async () => {
    const served = await serve(makeRepo());
    try {
      await assert.rejects(
        served.client.callTool({ name: 'caesar_list_agents', arguments: { padding: huge() } }),
        (err: Error & { code?: number }) => err.code === -32600 && /Request too large: 11\.0 MiB, over the 10\.0 MiB/.test(err.message),
      );
      const tools = await served.client.listTools();
      assert.ok(tools.tools.some((t) => t.name === 'caesar_delegate'));
      const agents = await served.client.callTool({ name: 'caesar_list_agents', arguments: {} });
      assert.notEqual(agents.isError, true);
    } finally {
      await served.close();
    }
  });

  it('caesar channel serve (real SDK client): an 11 MiB submit_report is refused, report_progress still works', async () => {
    const { dir } = await makeTaskDir();
    const cli = await buildCli();
    const client = new Client({ name: 'oversized-test', version: '1.0.0' });
    await client.connect(new StdioClientTransport({ command: process.execPath, args: [cli, 'channel', 'serve', '--task-dir', dir], stderr: 'pipe' }));
    try {
      await assert.rejects(
        client.callTool({ name: 'submit_report', arguments: { status: 'success', summary: huge() } }),
        (err: Error & { code?: number }) => err.code === -32600 && /Request too large/.test(err.message),
      );
      const progress = await client.callTool({ name: 'report_progress', arguments: { message: 'still here' } });
      assert.notEqual(progress.isError, true);
    } finally {
      await client.close();
    }
  });

  it('raw stdio: an id written first, an unparseable line and a notification over the limit each get an answer (id null where it cannot be read), and the server stays up', async () => {
    const cli = await buildCli();
    const repo = makeRepo();
    const child = spawn(process.execPath, [cli, 'mcp', 'serve', '--root', repo], { cwd: repo, stdio: ['pipe', 'pipe', 'pipe'] }) as ChildProcessWithoutNullStreams;
    const replies = collectReplies(child);
    try {
      send(child, { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } });
      await replies.waitFor(1);
      send(child, { jsonrpc: '2.0', method: 'notifications/initialized' });
      child.stdin.write(`{"jsonrpc":"2.0","id":"big-1","method":"tools/call","params":{"name":"caesar_list_agents","arguments":{"p":"${huge()}"}}}\n`);
      child.stdin.write(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"p":"${huge()}"}}\n`);
      child.stdin.write('{not json\n');
      send(child, { jsonrpc: '2.0', id: 2, method: 'tools/list' });
      const big = await replies.waitFor('big-1');
      assert.equal(big.error?.code, -32600);
      assert.match(big.error?.message ?? '', /Request too large/);
      const list = await replies.waitFor(2);
      assert.ok(Array.isArray(list.result?.tools) && list.result.tools.length > 0);
      const parseErrors = replies.all().filter((r) => r.id === null);
      assert.equal(parseErrors.length, 2, 'the unreadable line and the oversized notification (its id cannot be known) answered with id null');
      assert.ok(parseErrors.some((r) => r.error?.code === -32700));
      assert.equal(child.exitCode, null, 'still serving');
    } finally {
      child.stdin.end();
      await new Promise((resolve) => child.once('close', resolve));
    }
  });
});

function send(child: ChildProcessWithoutNullStreams, message: unknown): void {
  child.stdin.write(`${JSON.stringify(message)}\n`);
}

interface Reply {
  id?: string | number | null;
  result?: any;
  error?: { code: number; message: string };
}

function collectReplies(child: ChildProcessWithoutNullStreams) {
  const replies: Reply[] = [];
  let pending = '';
  const waiters: Array<() => void> = [];
  child.stdout.on('data', (d: Buffer) => {
    pending += d.toString('utf8');
    const lines = pending.split('\n');
    pending = lines.pop() ?? '';
    for (const line of lines) if (line.trim()) replies.push(JSON.parse(line) as Reply);
    for (const wake of waiters.splice(0)) wake();
  });
  return {
    all: () => replies,
    async waitFor(id: string | number): Promise<Reply> {
      const deadline = Date.now() + 20_000;
      for (;;) {
        const found = replies.find((r) => r.id === id);
        if (found) return found;
        if (Date.now() > deadline) throw new Error(`no reply to ${id}; got ${JSON.stringify(replies).slice(0, 500)}`);
        await new Promise<void>((resolve) => {
          waiters.push(resolve);
          setTimeout(resolve, 200);
        });
      }
    },
  };
}

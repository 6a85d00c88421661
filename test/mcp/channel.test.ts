import { strict as assert } from 'node:assert';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { QuestionFileSchema, parseReport, parseTask, taskPaths } from '../../src/protocol';
import { readJsonFile } from '../../src/engine/store/atomic';
import { answerQuestion, RequestError } from '../../src/engine/store/requests';
import { resolveReport } from '../../src/engine/run/report';
import { makeRepo, startFixture, waitFor, waitForFinished } from '../engine/runtime/helpers';
import { buildChannelCli, makeTaskDir } from './channel-helpers';

type ToolResult = { isError?: boolean; structuredContent?: Record<string, unknown>; content?: Array<{ type: string; text?: string }> };

async function connect(taskDir: string, env: Record<string, string> = {}): Promise<Client> {
  const cli = await buildChannelCli();
  const client = new Client({ name: 'channel-test', version: '1.0.0' });
  const inherited = Object.fromEntries(Object.entries(process.env).filter((e): e is [string, string] => e[1] !== undefined));
  await client.connect(
    new StdioClientTransport({ command: process.execPath, args: [cli, 'channel', 'serve', '--task-dir', taskDir], env: { ...inherited, ...env }, stderr: 'pipe' }),
  );
  return client;
}

async function call(client: Client, name: string, args: Record<string, unknown> = {}): Promise<ToolResult> {
  return (await client.callTool({ name, arguments: args })) as ToolResult;
}

describe('mcp: the return channel over stdio (real SDK client)', function () {
  this.timeout(60_000);
  const clients: Client[] = [];
  after(async () => {
    for (const client of clients) await client.close().catch(() => undefined);
  });

  it('lists exactly four tools, each with an input and an output schema; get_task returns task.json', async () => {
    const { id, dir } = await makeTaskDir();
    const client = await connect(dir);
    clients.push(client);
    const { tools } = await client.listTools();
    assert.deepEqual(tools.map((t) => t.name).sort(), ['ask_orchestrator', 'get_task', 'report_progress', 'submit_report']);
    for (const tool of tools) {
      assert.equal(tool.inputSchema.type, 'object', tool.name);
      assert.equal(tool.outputSchema?.type, 'object', tool.name);
      assert.ok(tool.description && tool.description.length > 40, tool.name);
    }
    const submit = tools.find((t) => t.name === 'submit_report')!;
    assert.ok((submit.inputSchema.required ?? []).includes('status'));
    const got = await call(client, 'get_task');
    assert.equal(got.isError, undefined);
    assert.equal(got.structuredContent?.id, id);
    assert.equal(got.structuredContent?.objective, 'Fix the parser');
  });

  it('report_progress files a progress request (never events.jsonl); submit_report refuses, then accepts with the channel source', async () => {
    const { id, dir } = await makeTaskDir();
    const paths = taskPaths(path.dirname(path.dirname(path.dirname(dir))), id);
    const client = await connect(dir);
    clients.push(client);
    const progress = await call(client, 'report_progress', { message: 'tests written', pct: 40 });
    assert.deepEqual(progress.structuredContent, { ok: true, message: 'Progress recorded.' });
    const filed = await fs.readdir(paths.progressDir);
    assert.equal(filed.length, 1);
    assert.deepEqual(
      { ...JSON.parse(await fs.readFile(path.join(paths.progressDir, filed[0]!), 'utf8')), at: 'x' },
      { message: 'tests written', pct: 40, at: 'x' },
    );
    assert.equal(await fs.stat(paths.events).catch(() => undefined), undefined, 'the channel never writes events.jsonl');

    const bad = await call(client, 'submit_report', { status: 'done', summary: 'x' });
    assert.equal(bad.isError, true);
    assert.match(bad.content![0]!.text!, /status/);
    assert.equal(await fs.stat(paths.report).catch(() => undefined), undefined, 'a refused report is not stored');
    const wrongTask = await call(client, 'submit_report', { status: 'success', summary: 'ok', task_id: 't_other' });
    assert.equal(wrongTask.isError, true);
    assert.match(wrongTask.content![0]!.text!, new RegExp(id));

    const good = await call(client, 'submit_report', { status: 'partial', summary: 'Half done.', next_steps: ['the rest'], usage: null });
    assert.equal(good.isError, undefined, good.content?.[0]?.text);
    assert.deepEqual(good.structuredContent, { ok: true, task_id: id, status: 'partial', message: 'Report accepted (status partial). You can stop now.' });
    const stored = parseReport(JSON.parse(await fs.readFile(paths.report, 'utf8')));
    assert.deepEqual([stored.task_id, stored.status, stored.next_steps], [id, 'partial', ['the rest']]);
    const resolved = await resolveReport({ taskId: id, tier: 'channel', channel: true, paths, translation: {}, outcome: { exitCode: 0, timedOut: false, cancelled: false } });
    assert.equal(resolved.source, 'channel');
  });

  it('ask_orchestrator: no answer in time → a normal result inviting the agent to go on, the question marked expired', async () => {
    const { root, id, dir } = await makeTaskDir();
    const client = await connect(dir, { CAESAR_CHANNEL_ANSWER_WAIT_MS: '400' });
    clients.push(client);
    const asked = await call(client, 'ask_orchestrator', { question: 'Tabs or spaces?', options: ['tabs', 'spaces'] });
    assert.equal(asked.isError, undefined);
    const out = asked.structuredContent!;
    assert.equal(out.answered, false);
    assert.equal(out.expired, true);
    assert.match(String(out.message), /best judgment/);
    const question = await readJsonFile(path.join(taskPaths(root, id).questionsDir, `${String(out.id)}.json`), QuestionFileSchema);
    assert.ok(question?.expired_at, 'the question file carries expired_at');
    // The asker's own record: it gave up only once the 400 ms answer window had passed.
    assert.ok(Date.parse(question.expired_at) - Date.parse(question.asked_at) >= 400, `${question.asked_at} → ${question.expired_at}`);
    assert.deepEqual(question?.options, ['tabs', 'spaces']);
    await assert.rejects(answerQuestion(root, id, String(out.id), 'tabs'), (err: unknown) => err instanceof RequestError && err.code === 'expired');
  });

  it('ask_orchestrator: an agent that disconnects while waiting leaves its question expired, not pending forever', async () => {
    const { root, id, dir } = await makeTaskDir();
    const client = await connect(dir);
    const questionsDir = taskPaths(root, id).questionsDir;
    void client.callTool({ name: 'ask_orchestrator', arguments: { question: 'Still waiting?' } }).catch(() => undefined);
    const name = await waitFor('the question file', async () => (await fs.readdir(questionsDir).catch(() => [] as string[])).find((n) => n.endsWith('.json')));
    await client.close();
    const expired = await waitFor('expired_at', async () => (await readJsonFile(path.join(questionsDir, name), QuestionFileSchema).catch(() => undefined))?.expired_at, 10_000);
    assert.ok(expired);
  });

  it('ask_orchestrator never waits past the task deadline', async () => {
    const { root, id, dir } = await makeTaskDir({ created_at: new Date(Date.now() - 3_600_000).toISOString(), deadline_ms: 1000 });
    // An answer window far longer than the test may run: a server that ignored the spent deadline would still be
    // waiting when the request gives up (not a speed bound: the two outcomes are an answer and a hang).
    const client = await connect(dir, { CAESAR_CHANNEL_ANSWER_WAIT_MS: String(60 * 60_000) });
    clients.push(client);
    const asked = (await client.callTool({ name: 'ask_orchestrator', arguments: { question: 'Still there?' } }, undefined, { timeout: 45_000 })) as ToolResult;
    assert.equal(asked.structuredContent?.answered, false);
    const question = await readJsonFile(path.join(taskPaths(root, id).questionsDir, `${String(asked.structuredContent?.id)}.json`), QuestionFileSchema);
    assert.ok(question?.expired_at, 'the question is recorded expired, not left pending');
    assert.equal((await fs.readdir(taskPaths(root, id).answersDir)).length, 0, 'nobody answered: it gave up on the deadline alone');
  });
});

describe('mcp: the return channel through the supervisor (fixture agent as MCP client)', function () {
  this.timeout(90_000);
  before(() => buildChannelCli());

  it('round trip: get_task, progress relayed into events.jsonl, a question answered like `caesar answer`, invalid then valid report → source channel', async () => {
    const root = makeRepo();
    const { id, taskDir } = await startFixture(root, { mode: 'channel', question: 'Tabs or spaces?', progress: 'parser fixed' }, { channel: true });
    const paths = taskPaths(root, id);
    const questionId = await waitFor('the channel question', async () => {
      const names = await fs.readdir(paths.questionsDir).catch(() => [] as string[]);
      return names.find((n) => n.endsWith('.json') && !n.startsWith('.'))?.slice(0, -5);
    }, 30_000);
    await answerQuestion(root, id, questionId, 'tabs', 'cli');
    const done = await waitForFinished(root, id, 60_000);

    const task = parseTask(JSON.parse(await fs.readFile(paths.task, 'utf8')));
    assert.equal(task.channel?.transport, 'mcp-stdio');
    assert.equal(task.channel?.server_name, 'caesar');
    assert.deepEqual(task.channel?.args.slice(-4), ['channel', 'serve', '--task-dir', taskDir]);

    assert.equal(done.state.status, 'succeeded', done.state.error);
    assert.equal(done.result.report_source, 'channel');
    assert.equal(done.result.report.summary, 'Answer was: tabs');
    const seen = JSON.parse(done.result.report.details) as { taskId: string; invalid: { isError: boolean; text: string }; ask: { answered: boolean; answer: string; answered_by: string } };
    assert.equal(seen.taskId, id);
    assert.equal(seen.invalid.isError, true);
    assert.match(seen.invalid.text, /status/);
    assert.deepEqual([seen.ask.answered, seen.ask.answer, seen.ask.answered_by], [true, 'tabs', 'cli']);
    assert.deepEqual(done.result.diff?.files.map((f) => f.path), ['channel.txt']);

    const progress = done.events.find((e) => e.type === 'progress' && e.message === 'parser fixed');
    assert.ok(progress, 'report_progress became a progress event');
    assert.equal((progress as { pct?: number }).pct, 50);
    assert.ok(done.events.some((e) => e.type === 'question' && e.id === questionId));
    assert.ok(done.events.some((e) => e.type === 'answer' && e.id === questionId));
    assert.equal(done.badLines, 0);
  });

  it('expiry through the supervisor: the agent goes on, the question is expired and the timeline says so', async () => {
    const root = makeRepo();
    const { id } = await startFixture(root, { mode: 'channel', question: 'Anyone?' }, { channel: true }, { CAESAR_CHANNEL_ANSWER_WAIT_MS: '500' });
    const done = await waitForFinished(root, id, 60_000);
    assert.equal(done.state.status, 'succeeded', done.state.error);
    assert.equal(done.result.report_source, 'channel');
    const seen = JSON.parse(done.result.report.details) as { ask: { answered: boolean; expired: boolean; id: string } };
    assert.deepEqual([seen.ask.answered, seen.ask.expired], [false, true]);
    assert.ok(done.events.some((e) => e.type === 'question' && e.id === seen.ask.id));
    assert.ok(done.events.some((e) => e.type === 'progress' && /expired/.test(e.message)));
    assert.ok(!done.events.some((e) => e.type === 'answer'));
  });

  it('without --channel the task has no channel coordinates', async () => {
    const root = makeRepo();
    const { id } = await startFixture(root, { mode: 'channel' });
    const done = await waitForFinished(root, id, 60_000);
    assert.equal(done.result.report.summary, 'task.channel is empty: no return channel offered.');
    assert.equal(done.result.report_source, 'file');
  });
});

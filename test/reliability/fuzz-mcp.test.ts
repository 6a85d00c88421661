import { strict as assert } from 'node:assert';
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import * as path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { McpError, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import fc from 'fast-check';
import { ProgressFileSchema, QuestionFileSchema, taskPaths } from '../../src/protocol';
import { buildCli } from '../engine/runtime/helpers';
import { buildChannelCli, makeTaskDir } from '../mcp/channel-helpers';
import { makeFixtureRepo, serve, structured, type Served } from '../mcp/orchestrator-helpers';
import { mutatedDoc, runs, tally } from './fuzz';

/**
 * Issue 13: the MCP servers get malformed input too. Both servers are fuzzed through the real SDK client over stdio
 * (arbitrary and mutated tool arguments), then with raw malformed JSON-RPC lines written straight to their stdin.
 * Every call must end in a result, a tool error or a JSON-RPC error; the server must keep serving; nothing may be
 * written outside the task store, and no hostile id may become a directory.
 */

const UNKNOWN_ID = 't_00000000000000000000000000000000';
const VALID_ID = /^t_[0-9a-f]{32}$/;
/** A unique name for the traversal attempts, so a file or folder it would create is findable afterwards. */
const ESCAPE = `caesar-fuzz-escape-${randomBytes(4).toString('hex')}`;

const HOSTILE = [
  '../../etc',
  `../../${ESCAPE}`,
  `../${ESCAPE}`,
  `../../../${ESCAPE}`,
  `${ESCAPE}/../../..`,
  `/tmp/${ESCAPE}`,
  `t_${'0'.repeat(32)}/../../${ESCAPE}`,
  '..',
  '.',
  '/',
  '',
  ' ',
  '\u0000',
  `t_\u0000${ESCAPE}`,
  `t_${'a'.repeat(200)}`,
  `t_${'0'.repeat(31)}`,
  't_0123456789ABCDEF0123456789ABCDEF',
  '\u202e\u0007\u001b]0;x\u0007',
  '💥',
  'Ω≈ç√∫',
  '%2e%2e%2f',
  '..\\..\\windows',
  'x'.repeat(100_000),
];

const hostileString = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...HOSTILE) },
  { weight: 2, arbitrary: fc.string() },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 64 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: 32 }) },
);
const anyValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 3, arbitrary: hostileString },
  { weight: 2, arbitrary: fc.jsonValue({ maxDepth: 2 }) },
  { weight: 1, arbitrary: fc.constantFrom<unknown>(null, true, false, 0, -1, 1.5, 1e308, -1e308, Number.MAX_SAFE_INTEGER, [], {}, [UNKNOWN_ID]) },
  { weight: 1, arbitrary: fc.array(hostileString, { maxLength: 4 }) },
);

/** Arguments for a tool whose seeds are `seeds`: a seed with one to three edits, its keys with any values, or any JSON. */
function argumentsFor(seeds: Array<Record<string, unknown>>): fc.Arbitrary<unknown> {
  const keys = [...new Set(seeds.flatMap((s) => Object.keys(s)))];
  return fc.oneof(
    { weight: 4, arbitrary: mutatedDoc(seeds) },
    { weight: 3, arbitrary: fc.record(Object.fromEntries(keys.map((k) => [k, anyValue])), { requiredKeys: [] }) },
    { weight: 1, arbitrary: fc.dictionary(fc.oneof(fc.constantFrom(...keys, '__proto__', 'constructor'), fc.string()), anyValue, { maxKeys: 5 }) },
    { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 2 }) },
  );
}

const ORCHESTRATOR_SEEDS: Record<string, Array<Record<string, unknown>>> = {
  caesar_delegate: [
    { objective: 'x', agent: 'nosuchagent', mode: 'write', isolation: 'worktree', network: 'off', context: 'c', constraints: ['a'], acceptance_criteria: ['b'], model: 'm', timeout: '10s', channel: true },
    { objective: 'x', role: 'nosuchrole' },
  ],
  caesar_await: [{ task_ids: [UNKNOWN_ID, '../x'], timeout_ms: 1000 }],
  caesar_status: [{ task_id: UNKNOWN_ID }],
  caesar_logs: [{ task_id: UNKNOWN_ID, cursor: 0, limit: 10, raw: false }],
  caesar_cancel: [{ task_id: UNKNOWN_ID }],
  caesar_diff: [{ task_id: UNKNOWN_ID }],
  caesar_apply: [{ task_id: UNKNOWN_ID, files: ['a.txt'] }],
  caesar_land: [{ task_ids: [UNKNOWN_ID, '../x'], accept_repository_changes: true }],
  caesar_answer: [{ task_id: UNKNOWN_ID, question_id: 'q1', answer: 'yes' }],
  caesar_list_agents: [{}],
  caesar_list_roles: [{}],
};

const CHANNEL_SEEDS: Record<string, Array<Record<string, unknown>>> = {
  get_task: [{}],
  report_progress: [{ message: 'tests written', pct: 40 }],
  ask_orchestrator: [{ question: 'Tabs or spaces?', options: ['tabs', 'spaces'] }],
  submit_report: [
    { status: 'success', summary: 'Did it.', details: 'All good.', changes: [{ path: 'src/a.ts', action: 'modified', summary: 'edited' }], next_steps: ['ship'] },
    { status: 'partial', summary: 'Half.', task_id: UNKNOWN_ID, usage: null },
  ],
};

/** One call for a tool picked among `seeds`' tools, with arguments for that tool. */
function toolCall(seeds: Record<string, Array<Record<string, unknown>>>): fc.Arbitrary<{ name: string; args: unknown }> {
  return fc.oneof(
    ...Object.entries(seeds).map(([name, s]) => argumentsFor(s).map((args) => ({ name, args }))),
    // A tool that does not exist, now and then.
    fc.tuple(fc.constantFrom('caesar_nope', '', '../caesar_status', 'get_task\u0000'), anyValue).map(([name, args]) => ({ name, args })),
  );
}

type Outcome = 'result' | 'tool error' | 'rpc error';

/** A call through the SDK client: a result, a tool error or a JSON-RPC error are answers; anything else (closed, timed out) fails. */
async function callAnyhow(client: Client, name: string, args: unknown): Promise<Outcome> {
  try {
    const result = (await client.callTool({ name, arguments: args as Record<string, unknown> }, undefined, { timeout: 30_000 })) as CallToolResult;
    return result.isError ? 'tool error' : 'result';
  } catch (err) {
    // The SDK rejects a malformed answer or an invalid request with an McpError carrying the JSON-RPC code; a timeout
    // or a closed connection is an McpError too, so those codes fail here.
    assert.ok(err instanceof McpError, `not a JSON-RPC error: ${String(err)}`);
    assert.ok(![-32001, -32000].includes(err.code), `the server stopped answering: ${err.message}`);
    return 'rpc error';
  }
}

/** Every file under `root`, except the task store and .git (which the servers may write): what must not change. */
function filesOutsideStore(root: string): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      const rel = path.relative(root, full);
      if (rel === '.caesar' || rel === '.git') continue;
      if (entry.isDirectory()) walk(full);
      else out.push(`${rel}:${statSync(full).size}`);
    }
  };
  walk(root);
  return out.sort();
}

/** No traversal attempt left anything anywhere near the root: the unique escape name exists nowhere it could reach. */
function assertNoEscape(root: string): void {
  for (const base of [root, path.dirname(root), path.dirname(path.dirname(root)), '/tmp', path.join(root, '.caesar'), path.join(root, '.caesar/tasks')]) {
    assert.ok(!existsSync(path.join(base, ESCAPE)), `${path.join(base, ESCAPE)} was created`);
  }
}

function tally3(what: string, counts: Record<Outcome, number>): void {
  tally(`${what} (${counts.result} results, ${counts['tool error']} tool errors, ${counts['rpc error']} JSON-RPC errors)`, counts.result + counts['tool error'] + counts['rpc error']);
}

async function connectChannel(taskDir: string): Promise<Client> {
  const cli = await buildChannelCli();
  const client = new Client({ name: 'fuzz-channel', version: '1.0.0' });
  const inherited = Object.fromEntries(Object.entries(process.env).filter((e): e is [string, string] => e[1] !== undefined));
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [cli, 'channel', 'serve', '--task-dir', taskDir],
      // Unanswered questions give up at once, so ask_orchestrator does not hold a case for minutes.
      env: { ...inherited, CAESAR_CHANNEL_ANSWER_WAIT_MS: '20' },
      stderr: 'pipe',
    }),
  );
  return client;
}

describe('reliability/fuzz: both MCP servers with malformed tool arguments and malformed JSON-RPC', function () {
  this.timeout(180_000);
  before(() => buildCli());

  it('orchestrator server: any arguments to any of its eleven tools → a result or an error, never a crash, nothing written outside .caesar', async () => {
    const repo = makeFixtureRepo();
    const before = filesOutsideStore(repo);
    const served: Served = await serve(repo);
    const counts: Record<Outcome, number> = { result: 0, 'tool error': 0, 'rpc error': 0 };
    try {
      await fc.assert(
        fc.asyncProperty(toolCall(ORCHESTRATOR_SEEDS), async ({ name, args }) => {
          counts[await callAnyhow(served.client, name, args)]++;
        }),
        { numRuns: runs(200) },
      );
      const { tools } = await served.client.listTools();
      assert.equal(tools.length, 11, 'still lists its eleven tools');
      const agents = structured(await served.client.callTool({ name: 'caesar_list_agents', arguments: {} }) as CallToolResult);
      assert.ok(agents.agents.some((a: { id: string }) => a.id === 'fixture'), 'still answers caesar_list_agents');
    } finally {
      await served.close();
    }
    assert.deepEqual(filesOutsideStore(repo), before, 'nothing written outside .caesar');
    assertNoEscape(repo);
    const tasksDir = path.join(repo, '.caesar/tasks');
    const taskDirs = existsSync(tasksDir) ? readdirSync(tasksDir) : [];
    for (const name of taskDirs) assert.match(name, VALID_ID, `no task dir with a hostile name: ${JSON.stringify(name)}`);
    tally3('orchestrator tool calls', counts);
  });

  it('channel server: any arguments to its four tools → a result or an error, still serving, questions/ holds only valid questions', async () => {
    const { root, id, dir } = await makeTaskDir();
    const paths = taskPaths(root, id);
    const before = filesOutsideStore(root);
    const client = await connectChannel(dir);
    const counts: Record<Outcome, number> = { result: 0, 'tool error': 0, 'rpc error': 0 };
    try {
      await fc.assert(
        fc.asyncProperty(toolCall(CHANNEL_SEEDS), async ({ name, args }) => {
          counts[await callAnyhow(client, name, args)]++;
        }),
        { numRuns: runs(200) },
      );
      const { tools } = await client.listTools();
      assert.deepEqual(tools.map((t) => t.name).sort(), ['ask_orchestrator', 'get_task', 'report_progress', 'submit_report']);
      const task = (await client.callTool({ name: 'get_task', arguments: {} })) as CallToolResult;
      assert.equal(task.structuredContent?.id, id, 'still answers get_task');
    } finally {
      await client.close();
    }
    assert.deepEqual(filesOutsideStore(root), before, 'nothing written outside .caesar');
    assertNoEscape(root);
    const questions = existsSync(paths.questionsDir) ? readdirSync(paths.questionsDir) : [];
    for (const name of questions) {
      // A question that expired unanswered leaves its claim beside it (question-claim.ts): one word, nothing else.
      if (/^q_[0-9a-f]{16}\.claim$/.test(name)) {
        assert.equal(readFileSync(path.join(paths.questionsDir, name), 'utf8'), 'expired', `the claim ${name}`);
        assert.ok(questions.includes(name.replace(/\.claim$/, '.json')), `the claim ${name} stands beside its question`);
        continue;
      }
      assert.match(name, /^q_[0-9a-f]{16}\.json$/, `questions/ holds only question files and their claims: ${JSON.stringify(name)}`);
      QuestionFileSchema.parse(JSON.parse(readFileSync(path.join(paths.questionsDir, name), 'utf8')));
    }
    const progress = existsSync(paths.progressDir) ? readdirSync(paths.progressDir) : [];
    for (const name of progress) ProgressFileSchema.parse(JSON.parse(readFileSync(path.join(paths.progressDir, name), 'utf8')));
    // Every entry of the task store is this task's own: no other (hostile) task directory appeared.
    assert.deepEqual(readdirSync(path.join(root, '.caesar/tasks')), [id]);
    tally3(`channel tool calls (${questions.length} questions, ${progress.length} progress files)`, counts);
  });

  describe('raw JSON-RPC lines straight to stdin (no SDK client)', () => {
    it('orchestrator server: stays up and answers a valid request after every batch of garbage', async () => {
      const repo = makeFixtureRepo();
      const cli = await buildCli();
      await rawFuzz(spawn(process.execPath, [cli, 'mcp', 'serve', '--root', repo], { cwd: repo, stdio: 'pipe' }), 'orchestrator', 11);
      assertNoEscape(repo);
    });

    it('channel server: stays up and answers a valid request after every batch of garbage', async () => {
      const { root, dir } = await makeTaskDir();
      const cli = await buildChannelCli();
      await rawFuzz(spawn(process.execPath, [cli, 'channel', 'serve', '--task-dir', dir], { stdio: 'pipe', env: { ...process.env, CAESAR_CHANNEL_ANSWER_WAIT_MS: '20' } }), 'channel', 4);
      assertNoEscape(root);
    });
  });
});

const INITIALIZE = { jsonrpc: '2.0', id: 'init', method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } };
const VALID_LINES = [
  { jsonrpc: '2.0', id: 1, method: 'tools/list' },
  { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'caesar_status', arguments: { task_id: UNKNOWN_ID } } },
  { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'get_task', arguments: {} } },
  { jsonrpc: '2.0', method: 'notifications/initialized' },
  { jsonrpc: '2.0', id: 4, result: {} },
].map((m) => JSON.stringify(m));

/** One malformed line (never containing a newline of its own, or it would be two lines). */
const rawLine: fc.Arbitrary<string | Buffer> = fc.oneof(
  // Truncated JSON.
  fc.tuple(fc.constantFrom(...VALID_LINES), fc.nat()).map(([line, n]) => line.slice(0, n % line.length)),
  // Wrong jsonrpc version, wrong types, huge or odd ids.
  fc.tuple(fc.constantFrom<unknown>('1.0', '3.0', 2, null, '', undefined), fc.constantFrom('tools/list', 'ping', 'initialize', '')).map(([v, method]) => JSON.stringify({ jsonrpc: v, id: 7, method })),
  fc
    .constantFrom<unknown>(1e308, -1e308, Number.MAX_SAFE_INTEGER + 2, 1.5, { nested: true }, [1], true, null, 'x'.repeat(100_000), '\u0000', '')
    .map((id) => `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"method":"tools/list"}`),
  fc.constant('{"jsonrpc":"2.0","id":123456789012345678901234567890123456789012345678901234567890,"method":"ping"}'),
  // A valid envelope with any params, an unknown method, a response nobody asked for.
  fc.tuple(fc.constantFrom('tools/call', 'tools/list', 'resources/read', 'nope/nope', 'notifications/cancelled'), fc.jsonValue({ maxDepth: 3 })).map(([method, params]) =>
    JSON.stringify({ jsonrpc: '2.0', id: 'fuzz', method, params }),
  ),
  fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v)),
  // Binary garbage: any bytes but the newline.
  fc.uint8Array({ maxLength: 300 }).map((bytes) => Buffer.from(bytes.map((b) => (b === 10 ? 0 : b)))),
  fc.string({ unit: 'binary', maxLength: 200 }).map((s) => s.replaceAll('\n', ' ')),
);

/** Lines the servers must survive once, whatever the fuzzing picks: a 5 MB line of JSON and one of garbage. */
const BIG_LINES: Array<string | Buffer> = [
  JSON.stringify({ jsonrpc: '2.0', id: 'big', method: 'tools/call', params: { name: 'caesar_status', arguments: { task_id: 'x'.repeat(5 * 1024 * 1024) } } }),
  JSON.stringify({ jsonrpc: '2.0', id: 'big2', method: 'tools/call', params: { name: 'report_progress', arguments: { message: 'y'.repeat(5 * 1024 * 1024) } } }),
  `{"jsonrpc":"2.0","id":"big3","method":"tools/list","params":{"a":"${'z'.repeat(5 * 1024 * 1024)}`,
  Buffer.alloc(5 * 1024 * 1024, 0xff),
];

/** Drives a spawned server with batches of malformed lines; after each batch, a tools/list must still be answered. */
async function rawFuzz(child: ChildProcessWithoutNullStreams, what: string, toolCount: number): Promise<void> {
  let stdout = '';
  let stderr = '';
  const answers = new Map<string, unknown>();
  const waiters = new Map<string, () => void>();
  child.stdout.on('data', (d: Buffer) => {
    stdout += d.toString('utf8');
    let nl: number;
    while ((nl = stdout.indexOf('\n')) >= 0) {
      const line = stdout.slice(0, nl);
      stdout = stdout.slice(nl + 1);
      try {
        const msg = JSON.parse(line) as { id?: unknown };
        if (typeof msg.id === 'string') {
          answers.set(msg.id, msg);
          waiters.get(msg.id)?.();
        }
      } catch {
        assert.fail(`the server wrote a line that is not JSON on stdout: ${line.slice(0, 200)}`);
      }
    }
  });
  child.stderr.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-4000)));
  child.stdin.on('error', () => undefined);
  const exited = new Promise<string>((resolve) => child.on('exit', (code, signal) => resolve(`exited (${code ?? signal}) : ${stderr}`)));
  const write = (line: string | Buffer) =>
    new Promise<void>((resolve, reject) => child.stdin.write(Buffer.concat([Buffer.isBuffer(line) ? line : Buffer.from(line, 'utf8'), Buffer.from('\n')]), (err) => (err ? reject(err) : resolve())));
  const request = async (message: Record<string, unknown> & { id: string }) => {
    const answered = new Promise<unknown>((resolve) => {
      if (answers.has(message.id)) resolve(answers.get(message.id));
      waiters.set(message.id, () => resolve(answers.get(message.id)));
    });
    await write(JSON.stringify(message));
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<string>((resolve) => (timer = setTimeout(() => resolve('no answer within 30 s'), 30_000)));
    const outcome = await Promise.race([answered, exited, timeout]);
    clearTimeout(timer);
    assert.equal(typeof outcome, 'object', `${what}: ${String(outcome)}`);
    return outcome as { result?: { tools?: unknown[] } };
  };
  let probes = 0;
  const probe = async () => {
    const answer = await request({ jsonrpc: '2.0', id: `probe-${++probes}`, method: 'tools/list' });
    assert.equal(answer.result?.tools?.length, toolCount, `${what} still lists its tools`);
  };

  let lines = 0;
  try {
    await request(INITIALIZE);
    await write(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }));
    for (const line of BIG_LINES) {
      await write(line);
      lines++;
      await probe();
    }
    await fc.assert(
      fc.asyncProperty(fc.array(rawLine, { minLength: 1, maxLength: 8 }), async (batch) => {
        for (const line of batch) await write(line);
        lines += batch.length;
        await probe();
      }),
      { numRuns: runs(100) },
    );
    assert.equal(child.exitCode, null, `${what} is still running`);
  } finally {
    child.stdin.end();
    child.kill();
  }
  tally(`${what} raw lines (${probes} valid requests answered after them)`, lines);
}

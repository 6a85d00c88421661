import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { readEventsText, type ProtocolEvent } from '../../../src/protocol';
import { startAnthropicServer, startChatServer, startGeminiServer, startResponsesServer, toolOutputs, type FakeServer, type ToolOutput, type Turn } from '../fake-servers';
import { MODELS, agentEnv, makeRepo, pinnedBinDir, run, removeScratch, tempDir, type LiveAgent, type Ran } from './harness';
import { REPORT_WAY, SHELL_COMMAND, readOnlyScript, writeScript } from './scripts';
import { expectConfined, expectNetworkCut } from '../../support/needs';

/**
 * One live suite per agent: the REAL pinned CLI, run THROUGH CAESAR (`node dist/caesar.js run --agent <id> … --json`)
 * in a throw-away git repository, against the project's fake model server, inside the loopback-only namespace that
 * run.mjs opens for the whole mocha process. The CLI's configuration reaches it through the environment caesar's
 * supervisor inherits (HOME, CODEX_HOME, base URLs…), exactly as a user's would.
 */

const DIST = path.resolve(__dirname, '..', '..', '..', 'dist', 'caesar.js');

const SERVERS: Record<LiveAgent, (script: Turn[]) => Promise<FakeServer>> = {
  codex: startResponsesServer,
  claude: startAnthropicServer,
  copilot: startAnthropicServer,
  opencode: startChatServer,
  gemini: startGeminiServer,
};

/**
 * Where a read-only task's report comes from. copilot (write tool denied) and gemini (write_file not offered in its
 * default approval mode) cannot write the report file, so caesar extracts it from their final message.
 */
const READ_ONLY_SOURCE: Record<LiveAgent, string> = { codex: 'schema', claude: 'schema', opencode: 'file', copilot: 'file', gemini: 'extracted' };

export interface CaesarRun {
  ran: Ran;
  outcome: Outcome;
  events: ProtocolEvent[];
  repo: string;
  server: FakeServer;
  env: NodeJS.ProcessEnv;
  taskDir: string;
}

interface Outcome {
  task_id: string;
  status: string;
  report: { status: string; summary: string; task_id: string; changes: { path: string }[]; findings: { title: string; detail?: string }[] } | null;
  report_source: string | null;
  changes_verified_by: string | null;
  usage: { input_tokens?: number; output_tokens?: number; cost_usd?: number; duration_ms?: number } | null;
  diff: { files: { path: string; action: string }[]; is_empty: boolean } | null;
  error?: string;
}

/**
 * What the CLI sent back to the model for the (single) call of `turn`: the fake server played the turn under call ids
 * of its own, and a later model request carries the CLI's result for that id. Undefined when the turn was never played
 * or the CLI never answered its call (it dropped it without trying).
 */
function forbiddenWriteAnswer(server: FakeServer, turn: Turn): ToolOutput | undefined {
  const played = server.requests.find((q) => q.played === turn);
  const callId = played?.callIds?.[0];
  if (!callId) return undefined;
  return server.requests.flatMap((q) => (q.scripted ? toolOutputs(q) : [])).find((o) => o.callId === callId);
}

export function defineLiveSuite(agent: LiveAgent, expectations: { tokens: boolean; cost: boolean }): void {
  describe(`${agent}: the real CLI through caesar`, function () {
    this.timeout(420_000);
    let root = '';
    let binDir = '';
    let home = '';
    let count = 0;
    const servers: FakeServer[] = [];

    before(() => {
      assert.ok(fs.existsSync(DIST), `${DIST} is missing: run npm run build first`);
      root = tempDir(`caesar-live-${agent}-`);
      binDir = pinnedBinDir(root);
      // One HOME for the suite: copilot unpacks ~235 MB there on its first run, opencode needs its plugin there.
      home = path.join(root, 'home');
    });

    after(async () => {
      for (const s of servers) await s.close();
      removeScratch(root);
    });

    async function delegate(script: Turn[], opts: { mode: 'write' | 'read-only'; objective: string }): Promise<CaesarRun> {
      const server = await SERVERS[agent](script);
      servers.push(server);
      const repo = makeRepo(path.join(root, `repo-${++count}`));
      // The default configuration: from a terminal (no $CAESAR_DEPTH) no agent is refused for recursion, claude included.
      const env: NodeJS.ProcessEnv = { ...process.env, ...agentEnv(agent, server.url, home), PATH: `${binDir}:${process.env.PATH ?? ''}` };
      // As from a user's terminal: CI=true (set by the test runner under CI) changes some CLIs' behaviour.
      delete env.CI;
      const ran = await caesar(['run', '--agent', agent, '--mode', opts.mode, '--isolation', 'worktree', '--model', MODELS[agent], '--timeout', '300s', '--json', opts.objective], repo, env);
      let outcome: Outcome;
      try {
        outcome = JSON.parse(ran.stdout) as Outcome;
      } catch {
        throw new Error(`caesar run printed no JSON (exit ${ran.code}).\nstdout: ${ran.stdout}\nstderr: ${ran.stderr}`);
      }
      const taskDir = path.join(repo, '.caesar', 'tasks', outcome.task_id);
      const parsed = readEventsText(fs.readFileSync(path.join(taskDir, 'events.jsonl'), 'utf8'));
      const bad = parsed.filter((p) => !p.ok);
      assert.deepEqual(bad, [], 'every event line must be valid caesar.event/v1');
      const events = parsed.flatMap((p) => (p.ok ? [p.event] : []));
      // Every task of the suite runs confined wherever bwrap is (CI installs it), unless this run turned the sandbox off.
      const sandbox = JSON.parse(fs.readFileSync(path.join(taskDir, 'state.json'), 'utf8')).sandbox;
      if (expectConfined()) assert.equal(sandbox?.confined, true, `not confined: ${JSON.stringify(sandbox)}`);
      return { ran, outcome, events, repo, server, env, taskDir };
    }

    function caesar(args: string[], cwd: string, env: NodeJS.ProcessEnv): Promise<Ran> {
      return run(process.execPath, [DIST, ...args], { cwd, env, timeoutMs: 360_000 });
    }

    function explain(r: CaesarRun): string {
      const rawLog = path.join(r.taskDir, 'raw.log');
      const supervisorLog = path.join(r.taskDir, 'supervisor.log');
      const tail = (f: string) => (fs.existsSync(f) ? fs.readFileSync(f, 'utf8').slice(-3000) : '(none)');
      return `outcome: ${JSON.stringify(r.outcome, null, 1)}\nevents: ${r.events.map((e) => e.type + (e.type === 'tool_use' ? `:${e.status}:${e.tool}` : '')).join(', ')}\nraw.log: ${tail(rawLog)}\nsupervisor.log: ${tail(supervisorLog)}\nrequests: ${r.server.requests.map((q) => q.path).join(', ')}`;
    }

    it('write task in a worktree: a shell command then a file write; events paired; report; usage; diff shows exactly that file', async () => {
      const file = `from-${agent}.txt`;
      const r = await delegate(writeScript(agent, file, `written by ${agent}\n`), { mode: 'write', objective: `Create ${file}` });
      const why = explain(r);
      assert.equal(r.outcome.status, 'succeeded', why);
      assert.equal(r.outcome.report?.status, 'success', why);
      assert.equal(r.outcome.report?.task_id, r.outcome.task_id, why);
      assert.equal(r.outcome.report_source, REPORT_WAY[agent] === 'schema' ? 'schema' : 'file', why);
      assert.equal(r.outcome.changes_verified_by, 'git', why);

      // Tool events: every end after its start, same id; the shell command is among them.
      const tools = r.events.filter((e): e is Extract<ProtocolEvent, { type: 'tool_use' }> => e.type === 'tool_use');
      for (const end of tools.filter((t) => t.status !== 'started')) {
        const start = tools.find((t) => t.status === 'started' && t.id === end.id);
        assert.ok(start, `tool ${end.id} ended without a start. ${why}`);
        assert.ok(start.seq < end.seq, `tool ${end.id} ended before it started`);
        assert.equal(start.tool, end.tool);
      }
      const shell = tools.find((t) => t.status === 'succeeded' && t.input_summary.includes(SHELL_COMMAND));
      assert.ok(shell, `no succeeded shell command in ${why}`);
      assert.ok(tools.filter((t) => t.status === 'succeeded').length >= 2, why);
      assert.ok(r.events.some((e) => e.type === 'message'), why);
      assert.equal(r.events[0]?.type, 'started');
      assert.ok(r.events[0]?.type === 'started' && !r.events[0].command.includes('delegated sub-agent'), 'the prompt must not be in the started command');
      assert.equal(r.events.at(-1)?.type, 'finished');

      // Usage as the CLI reports it.
      const usage = r.outcome.usage ?? {};
      if (expectations.tokens) {
        assert.ok((usage.input_tokens ?? 0) > 0 && (usage.output_tokens ?? 0) > 0, `tokens missing: ${JSON.stringify(usage)}`);
      }
      if (expectations.cost) assert.equal(typeof usage.cost_usd, 'number', `cost missing: ${JSON.stringify(usage)}`);
      assert.ok((usage.duration_ms ?? 0) > 0, `duration missing: ${JSON.stringify(usage)}`);

      // Git is the source of truth: exactly the file the fake model wrote.
      assert.deepEqual(r.outcome.diff?.files.map((f) => [f.path, f.action]), [[file, 'created']], why);
      const diff = await caesar(['diff', r.outcome.task_id, '--stat'], r.repo, r.env);
      assert.equal(diff.code, 0, diff.stderr);
      assert.match(diff.stdout, new RegExp(file.replace('.', '\\.')));
      const patch = await caesar(['diff', r.outcome.task_id], r.repo, r.env);
      assert.match(patch.stdout, new RegExp(`\\+written by ${agent}`));
      const mentioned = [...patch.stdout.matchAll(/^\+\+\+ b\/(.+)$/gm)].map((m) => m[1]);
      assert.deepEqual(mentioned, [file], patch.stdout);
    });

    it('read-only task: it reads, a write attempt changes nothing, a report comes back', async () => {
      // opencode has no read-only mode: caesar confines it to a worktree, so no forbidden write is attempted there.
      const forbidden = agent === 'opencode' ? undefined : 'forbidden.txt';
      const script = readOnlyScript(agent, forbidden);
      const r = await delegate(script, { mode: 'read-only', objective: 'Describe the README' });
      const why = explain(r);
      assert.equal(r.outcome.status, 'succeeded', why);
      assert.equal(r.outcome.report?.status, 'success', why);
      assert.equal(r.outcome.report?.summary, 'The README holds a title only.', why);
      assert.equal(r.outcome.report_source, READ_ONLY_SOURCE[agent], why);
      assert.deepEqual(r.outcome.diff?.files ?? [], [], why);
      // Confined (CAESAR_SANDBOX=required), a read-only task's network is cut: only the fake model's port is bridged in.
      const state = JSON.parse(fs.readFileSync(path.join(r.taskDir, 'state.json'), 'utf8'));
      if (state.sandbox?.confined && expectNetworkCut()) {
        assert.equal(JSON.parse(fs.readFileSync(path.join(r.taskDir, 'task.json'), 'utf8')).network, false, why);
      }
      const tools = r.events.filter((e) => e.type === 'tool_use');
      assert.ok(tools.some((t) => t.type === 'tool_use' && t.status === 'succeeded'), `the read did not succeed: ${why}`);
      // The forbidden write was attempted and stopped by the CLI's own read-only mode: the model asked for it, the CLI
      // answered that very call (its refusal) before going on, git saw nothing (above), the file is nowhere, and where
      // the CLI reported the attempt as an event, it reported it failed. (codex's sandbox often drops the event.)
      if (forbidden) {
        const answered = forbiddenWriteAnswer(r.server, script[1]!);
        assert.ok(answered, `the model's write call was never answered by the CLI (no attempt was made): ${why}`);
        assert.ok(!fs.existsSync(path.join(r.repo, forbidden)), `${forbidden} exists: ${why}`);
        const attempts = tools.filter((t) => t.type === 'tool_use' && t.status !== 'started' && t.input_summary.includes(forbidden));
        for (const attempt of attempts) assert.equal(attempt.type === 'tool_use' && attempt.status, 'failed', why);
      }
    });

    for (const status of [401, 500]) {
      it(`model server answers HTTP ${status}: a clear failed state and an error event`, async () => {
        const r = await delegate([{ kind: 'error', status }], { mode: 'write', objective: 'Say hello' });
        const why = explain(r);
        assert.equal(r.outcome.status, 'failed', why);
        const errors = r.events.filter((e) => e.type === 'error');
        assert.ok(errors.length >= 1, `no error event: ${why}`);
        // The reason must be readable: the status, or the vendor's words for it.
        const said = [...errors.map((e) => (e.type === 'error' ? e.message : '')), r.outcome.error ?? '', r.outcome.report?.summary ?? ''].join('\n');
        const clear = status === 401 ? /401|unauthori[sz]ed|authentication|api key/i : /500|internal|server|high demand/i;
        assert.match(said, clear, why);
        const finished = r.events.at(-1);
        assert.ok(finished?.type === 'finished' && finished.status === 'failed', why);
        assert.deepEqual(r.outcome.diff?.files ?? [], [], why);
        assert.notEqual(r.ran.code, 0);
      });
    }

    if (agent === 'claude') {
      it('a stream that breaks mid-way is retried without streaming (plain JSON) and the task still succeeds', async () => {
        const [first, ...rest] = writeScript(agent, 'after-break.txt', 'after the break\n');
        const r = await delegate([{ kind: 'break-then', turn: first! }, ...rest], { mode: 'write', objective: 'Create after-break.txt' });
        const why = explain(r);
        assert.equal(r.outcome.status, 'succeeded', why);
        assert.ok(r.server.requests.some((q) => q.body.stream === false && q.scripted), `no non-streaming retry: ${why}`);
        assert.deepEqual(r.outcome.diff?.files.map((f) => f.path), ['after-break.txt'], why);
      });
    }

    if (REPORT_WAY[agent] === 'schema') {
      it('structured-output tier: an answer that breaks the schema is not taken as the report', async () => {
        // The model answers a report without its required summary: caesar must validate and fall back.
        const broken: Turn[] =
          agent === 'codex'
            ? [{ kind: 'text', text: (q) => JSON.stringify({ protocol: 'caesar.report/v1', task_id: q.taskId ?? '', status: 'success' }) }]
            : [{ kind: 'text', text: 'I will not call the StructuredOutput tool.' }];
        const r = await delegate(broken, { mode: 'read-only', objective: 'Report on the README' });
        const why = explain(r);
        assert.notEqual(r.outcome.report_source, 'schema', why);
        assert.ok(r.outcome.report, why);
      });
    }
  });
}

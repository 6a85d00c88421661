import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { QuestionFileSchema, readEventsText, type ProtocolEvent, type QuestionFile } from '../../../src/protocol';
import { reportFor, startAnthropicServer, startChatServer, startGeminiServer, startResponsesServer, type FakeServer, type Turn } from '../fake-servers';
import { CAESAR_JS, MODELS, agentEnv, makeRepo, pinnedBinDir, run, removeScratch, tempDir, type LiveAgent, type Ran } from './harness';
import { shell } from './scripts';
import { expectConfined } from '../../support/needs';

/**
 * Every agent over the Agent Client Protocol, through caesar: the REAL pinned CLI (claude and codex through their
 * pinned ACP adapters, claude-agent-acp and codex-acp), the project's fake model servers, inside run.mjs's
 * loopback-only namespace. The fake model asks to run `printf hi > hello.txt`; the agent's permission request must
 * become a question in the task's questions/ folder, answered from another process by the real `caesar answer`:
 * "allow once" → the command runs and hello.txt is in the task's diff; "reject once" → it never runs. A read-only
 * task's request is rejected by caesar itself (no question), and logged as an automatic answer.
 *
 * The transport is chosen as a user would: `caesar agents set-transport <agent> acp` in the repository.
 * `CAESAR_LIVE_AGENTS=gemini,claude` narrows the run while developing.
 */

const AGENTS: LiveAgent[] = ['gemini', 'opencode', 'copilot', 'claude', 'codex'];
const ONLY = (process.env.CAESAR_LIVE_AGENTS ?? '').split(',').filter(Boolean);
const COMMAND = 'printf hi > hello.txt';

const SERVERS: Record<LiveAgent, (script: Turn[]) => Promise<FakeServer>> = {
  codex: startResponsesServer,
  claude: startAnthropicServer,
  copilot: startAnthropicServer,
  opencode: startChatServer,
  gemini: startGeminiServer,
};

/**
 * The model asks for the shell command; whatever comes back, its next turn is the report as a fenced block in its
 * final message (caesar's extracted tier: an ACP agent has no schema flag, and a rejected agent may write no file).
 * opencode and copilot end the turn after a reject without calling the model again, codex aborts it: the last turn
 * may stay unplayed.
 */
function script(agent: LiveAgent, summary: string): Turn[] {
  return [
    { kind: 'tools', text: 'I will create the file with a shell command.', calls: [shell(agent, COMMAND)] },
    { kind: 'text', text: (r) => `Done.\n\n\`\`\`json caesar:report\n${JSON.stringify(reportFor(r, { summary }), null, 2)}\n\`\`\`\n` },
  ];
}

interface Outcome {
  task_id: string;
  status: string;
  report: { status: string; summary: string } | null;
  diff: { files: { path: string; action: string }[] } | null;
  usage: { input_tokens?: number; output_tokens?: number; cost_usd?: number } | null;
  error?: string;
}

/**
 * What each agent reports about usage over ACP (../shared/agents/ACP.md): tokens in the prompt's result (gemini in
 * `_meta.quota`), cost only from claude's `usage_update`; codex-acp sends its context window only.
 */
const USAGE: Record<LiveAgent, { tokens: boolean; cost: boolean }> = {
  gemini: { tokens: true, cost: false },
  opencode: { tokens: true, cost: false },
  copilot: { tokens: true, cost: false },
  claude: { tokens: true, cost: true },
  codex: { tokens: false, cost: false },
};

interface AcpRun {
  ran: Ran;
  outcome: Outcome;
  events: ProtocolEvent[];
  taskDir: string;
  worktree: string | undefined;
  /** Questions the task asked, as their files held them when answered. */
  asked: QuestionFile[];
  answers: Ran[];
  server: FakeServer;
  why: string;
}

for (const agent of AGENTS.filter((a) => ONLY.length === 0 || ONLY.includes(a))) {
  describe(`${agent} over ACP through caesar: permission requests as questions`, function () {
    this.timeout(420_000);
    let root = '';
    let binDir = '';
    let home = '';
    let count = 0;
    const servers: FakeServer[] = [];

    before(() => {
      assert.ok(fs.existsSync(CAESAR_JS), `${CAESAR_JS} is missing: run npm run build first`);
      root = tempDir(`caesar-acp-${agent}-`);
      binDir = pinnedBinDir(root);
      home = path.join(root, 'home');
    });

    after(async () => {
      for (const s of servers) await s.close();
      removeScratch(root);
    });

    /** Runs one task over ACP; `answer` picks, per question, the option label to give `caesar answer` (undefined: none). */
    async function delegate(mode: 'write' | 'read-only', summary: string, answer: (q: QuestionFile) => string | undefined): Promise<AcpRun> {
      const server = await SERVERS[agent](script(agent, summary));
      servers.push(server);
      const repo = makeRepo(path.join(root, `repo-${++count}`));
      const env: NodeJS.ProcessEnv = { ...process.env, ...agentEnv(agent, server.url, home), PATH: `${binDir}:${process.env.PATH ?? ''}` };
      delete env.CI;
      for (const key of Object.keys(env)) if (key.startsWith('CAESAR_') && key !== 'CAESAR_CACHE') delete env[key];
      const set = await caesar(['agents', 'set-transport', agent, 'acp'], repo, env);
      assert.equal(set.code, 0, `caesar agents set-transport ${agent} acp: ${set.stderr}`);

      const running = caesar(['run', '--agent', agent, '--mode', mode, '--isolation', 'worktree', '--model', MODELS[agent], '--timeout', '300s', '--json', `Create hello.txt containing hi using a shell command (${summary})`], repo, env);
      let finished = false;
      void running.finally(() => (finished = true));
      const asked: QuestionFile[] = [];
      const answers: Ran[] = [];
      const tasks = path.join(repo, '.caesar', 'tasks');
      while (!finished) {
        await new Promise((r) => setTimeout(r, 200));
        for (const { taskId, question } of openQuestions(tasks, asked)) {
          asked.push(question);
          const label = answer(question);
          if (label !== undefined) answers.push(await caesar(['answer', taskId, question.id, label], repo, env));
        }
      }
      const ran = await running;
      let outcome: Outcome;
      try {
        outcome = JSON.parse(ran.stdout) as Outcome;
      } catch {
        throw new Error(`caesar run printed no JSON (exit ${ran.code}).\nstdout: ${ran.stdout}\nstderr: ${ran.stderr}`);
      }
      const taskDir = path.join(tasks, outcome.task_id);
      const parsed = readEventsText(fs.readFileSync(path.join(taskDir, 'events.jsonl'), 'utf8'));
      assert.deepEqual(parsed.filter((p) => !p.ok), [], 'every event line must be valid caesar.event/v1');
      const events = parsed.flatMap((p) => (p.ok ? [p.event] : []));
      const worktree = worktreeOf(taskDir);
      const tail = (f: string) => (fs.existsSync(path.join(taskDir, f)) ? fs.readFileSync(path.join(taskDir, f), 'utf8').slice(-4000) : '(none)');
      const why = [
        `outcome: ${JSON.stringify(outcome)}`,
        `events: ${events.map((e) => e.type + (e.type === 'tool_use' ? `:${e.status}:${e.tool}` : e.type === 'progress' ? `:${e.message}` : '')).join(' | ')}`,
        `questions: ${JSON.stringify(asked)}`,
        `answers: ${answers.map((a) => `${a.code} ${a.stdout}${a.stderr}`).join(' | ')}`,
        `requests: ${server.requests.map((q) => `${q.path}${q.scripted ? '' : ' (side)'}`).join(', ')}`,
        `raw.log: ${tail('raw.log')}`,
        `supervisor.log: ${tail('supervisor.log')}`,
        `stderr: ${ran.stderr.slice(-2000)}`,
      ].join('\n');
      // Every agent over ACP runs inside caesar's sandbox wherever bwrap is (CI installs it), codex-acp included: its own
      // sandbox, which cannot nest in ours, is handed over to ours (src/agents/codex.ts, insideSandbox).
      const sandbox = JSON.parse(fs.readFileSync(path.join(taskDir, 'state.json'), 'utf8')).sandbox;
      if (expectConfined()) assert.equal(sandbox?.confined, true, `not confined: ${JSON.stringify(sandbox)}\n${why}`);
      return { ran, outcome, events, taskDir, worktree, asked, answers, server, why };
    }

    function caesar(args: string[], cwd: string, env: NodeJS.ProcessEnv): Promise<Ran> {
      return run(process.execPath, [CAESAR_JS, ...args], { cwd, env, timeoutMs: 360_000 });
    }

    it('write task: the shell command\'s permission request is a question; "allow once" via caesar answer runs it; hello.txt is in the diff', async () => {
      const r = await delegate('write', 'allowed', (q) => labelOf(q, 'allow_once'));
      assert.equal(r.asked.length, 1, `exactly one permission question: ${r.why}`);
      const [question] = r.asked;
      assert.match(question!.question, /printf hi > hello\.txt|hello\.txt/, r.why);
      for (const kind of ['allow_once', 'allow_always', 'reject_once']) assert.ok(labelOf(question!, kind), `option ${kind} offered: ${r.why}`);
      assert.equal(r.answers[0]?.code, 0, `caesar answer: ${r.why}`);
      assert.ok(r.events.some((e) => e.type === 'question' && e.id === question!.id), `question event: ${r.why}`);
      assert.ok(r.events.some((e) => e.type === 'answer' && e.id === question!.id && /allow_once/.test(e.answer)), `answer event: ${r.why}`);
      // The command ran in the task's worktree, and git sees exactly that file.
      assert.deepEqual(r.outcome.diff?.files.map((f) => [f.path, f.action]), [['hello.txt', 'created']], r.why);
      assert.equal(r.worktree && fs.readFileSync(path.join(r.worktree, 'hello.txt'), 'utf8'), 'hi', r.why);
      assert.equal(r.outcome.status, 'succeeded', r.why);
      // The command as a tool event of ACP kind "execute", started then succeeded under the agent's own call id.
      const tools = r.events.filter((e): e is Extract<ProtocolEvent, { type: 'tool_use' }> => e.type === 'tool_use' && e.tool === 'execute');
      const started = tools.find((t) => t.status === 'started');
      assert.ok(started, `the command's tool event started: ${r.why}`);
      const done = tools.find((t) => t.status !== 'started');
      // codex-acp 0.16.0 sometimes never sends the command's `completed` update: under load (3 of 16 runs here) its
      // raw.log goes tool_call in_progress → the final message → end_turn, with no tool_call_update at all, even when
      // caesar waited 2 s after end_turn for more lines. The command did run (hello.txt above); what is caesar's to
      // check is that an end, when the agent reports one, is paired with its start and says succeeded.
      if (agent !== 'codex' || done) {
        assert.equal(done?.status, 'succeeded', `the command's tool event succeeded: ${r.why}`);
        assert.ok(done.id === started.id && started.seq < done.seq, `started before it ended, same id: ${r.why}`);
      }
      const usage = r.outcome.usage ?? {};
      if (USAGE[agent].tokens) assert.ok((usage.input_tokens ?? 0) > 0 && (usage.output_tokens ?? 0) > 0, `tokens: ${r.why}`);
      if (USAGE[agent].cost) assert.equal(typeof usage.cost_usd, 'number', `cost: ${r.why}`);
      assert.equal(r.events.at(-1)?.type, 'finished', r.why);
    });

    it('write task: "reject once" via caesar answer: the command never runs, hello.txt never appears', async () => {
      const r = await delegate('write', 'rejected', (q) => labelOf(q, 'reject_once'));
      assert.equal(r.asked.length, 1, `exactly one permission question: ${r.why}`);
      assert.equal(r.answers[0]?.code, 0, `caesar answer: ${r.why}`);
      assert.ok(r.events.some((e) => e.type === 'answer' && /reject_once/.test(e.answer)), `answer event: ${r.why}`);
      assert.deepEqual(r.outcome.diff?.files ?? [], [], r.why);
      assert.equal(fs.existsSync(path.join(worktreeOfRun(r), 'hello.txt')), false, r.why);
      // Where the agent reported the call at all, it reported it did not succeed.
      const ran = r.events.filter((e) => e.type === 'tool_use' && e.status === 'succeeded' && e.input_summary.includes('hello.txt'));
      assert.deepEqual(ran, [], r.why);
      assert.equal(r.events.at(-1)?.type, 'finished', r.why);
    });

    it('read-only task: caesar rejects the write itself, asks nobody, and logs the automatic answer', async () => {
      const r = await delegate('read-only', 'read only', () => undefined);
      assert.deepEqual(r.asked, [], `no question for a read-only task's write: ${r.why}`);
      assert.deepEqual(r.outcome.diff?.files ?? [], [], r.why);
      assert.equal(fs.existsSync(path.join(worktreeOfRun(r), 'hello.txt')), false, r.why);
      const automatic = r.events.filter((e) => e.type === 'progress' && /Permission answered automatically: .*reject/.test(e.message));
      // codex asks too: caesar starts codex-acp with approval_policy=untrusted in every mode.
      assert.equal(automatic.length, 1, `one automatic reject: ${r.why}`);
      assert.match(automatic[0]!.type === 'progress' ? automatic[0]!.message : '', /a read-only task never allows a tool of kind "execute"/, r.why);
      assert.equal(r.events.at(-1)?.type, 'finished', r.why);
    });
  });
}

// claude-agent-acp as root needs IS_SANDBOX=1: the adapter's plan sets it itself (src/agents/claude.ts), and this
// test leaves it out so that it proves that. codex's TMPDIR (its sandbox helper) is set by agentEnv (harness.ts).

/** Questions in any task's questions/ folder not seen before. */
function openQuestions(tasks: string, seen: QuestionFile[]): Array<{ taskId: string; question: QuestionFile }> {
  const found: Array<{ taskId: string; question: QuestionFile }> = [];
  for (const taskId of fs.existsSync(tasks) ? fs.readdirSync(tasks) : []) {
    const dir = path.join(tasks, taskId, 'questions');
    for (const name of fs.existsSync(dir) ? fs.readdirSync(dir) : []) {
      if (!name.endsWith('.json') || name.startsWith('.')) continue;
      if (seen.some((q) => `${q.id}.json` === name)) continue;
      try {
        found.push({ taskId, question: QuestionFileSchema.parse(JSON.parse(fs.readFileSync(path.join(dir, name), 'utf8'))) });
      } catch {
        // still being written: next poll
      }
    }
  }
  return found;
}

/** The option whose label names that ACP option kind ("Allow (allow_once)"). */
function labelOf(question: QuestionFile, kind: string): string | undefined {
  return question.options.find((o) => o.endsWith(`(${kind})`));
}

/** The worktree every task here runs in (--isolation worktree): a check of a file in it must not pass without one. */
function worktreeOfRun(r: AcpRun): string {
  assert.ok(r.worktree, `no worktree recorded for the task: ${r.why}`);
  assert.ok(fs.statSync(r.worktree).isDirectory(), `the worktree ${r.worktree} is not there: ${r.why}`);
  return r.worktree;
}

/** The task's worktree, from its state file (undefined for a task that ran in place). */
function worktreeOf(taskDir: string): string | undefined {
  for (const file of ['state.json', 'task.json']) {
    const full = path.join(taskDir, file);
    if (!fs.existsSync(full)) continue;
    const data = JSON.parse(fs.readFileSync(full, 'utf8')) as { worktree?: unknown; worktree_path?: unknown; workspace_path?: unknown };
    for (const value of [data.worktree_path, data.worktree, data.workspace_path]) if (typeof value === 'string') return value;
  }
  return undefined;
}

import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { readEventsText, type ProtocolEvent } from '../../../src/protocol';
import { lastToolOutput, reportFor, startAnthropicServer, startResponsesServer, type FakeServer, type ModelRequest, type ToolCallSpec, type Turn } from '../fake-servers';
import { CAESAR_JS, MODELS, agentEnv, codexSeesChannel, jsonInText, makeRepo, pinnedBinDir, runCaesar, removeScratch, tempDir } from './harness';

/**
 * The whole chain with real binaries, real MCP over stdio, inside the loopback-only namespace run.mjs opens:
 *
 *   caesar run --agent claude ── the real claude CLI (main agent; fake Anthropic server)
 *       └─ --mcp-config: `node dist/caesar.js mcp serve --root <repo>` (the orchestrator server, stdio)
 *            └─ caesar_delegate {agent: codex, channel: true} ── supervisor ── the real codex CLI (fake Responses server)
 *                 └─ `-c mcp_servers.caesar…`: `node dist/caesar.js channel serve --task-dir …` (the return channel)
 *
 * claude delegates, polls caesar_await until codex's question shows up, answers it with caesar_answer, awaits the end
 * and reports; codex asks through ask_orchestrator, writes the answer into a file with apply_patch and hands in its
 * report through submit_report. Nothing is simulated between the two CLIs: every hop is the shipped code.
 *
 * Tool naming, verified offline against the pinned binaries:
 * - claude 2.1.332 calls an MCP tool by its flat name `mcp__<server>__<tool>` (the tools are deferred — not in the
 *   request's `tools` — but callable by name once allowed with --allowedTools); the tool_result it sends back holds
 *   the tool's `structuredContent` serialised as JSON text (not its human text). It declares the MCP elicitation
 *   capability (`elicitation: {form, url}`) in `initialize`.
 * - codex 0.171.0 defers MCP tools too (only a `tool_search` tool is declared) and runs one only for
 *   `function_call {name: "<tool>", namespace: "mcp__<server>"}`; a flat `mcp__caesar__ask_orchestrator` (or a bare
 *   `ask_orchestrator` without namespace) comes back as the function output "unsupported call: <name>" and no MCP
 *   call is made. Its stream shows the call as an `mcp_tool_call` item {server, tool, arguments, result|error}; the
 *   output it returns to the model is a list of input_text parts, a "Wall time: …" line first.
 */

const SERVER = 'caesar';
const CHILD_FILE = 'chain.txt';
const QUESTION = `Which colour should ${CHILD_FILE} record?`;
const ANSWER = 'blue';
/** Upper bound on caesar_await polls before the script gives up (each poll waits up to AWAIT_POLL_MS). */
const MAX_POLLS = 60;
const AWAIT_POLL_MS = 3_000;

// --- what the main agent (claude) reads back from the orchestrator tools -------------------------------------------

interface QuestionView {
  id: string;
  question: string;
}
interface OutcomeView {
  status: string;
  pending: boolean;
  pending_questions?: QuestionView[];
  report?: { status: string; summary: string; report_source: string } | null;
}

const delegated = (r: ModelRequest) => jsonInText(lastToolOutput(r, 'caesar_delegate')?.text ?? '');
const childIdOf = (r: ModelRequest) => {
  const id = delegated(r)?.task_id;
  return typeof id === 'string' ? id : undefined;
};
const childOutcome = (r: ModelRequest): OutcomeView | undefined => {
  const id = childIdOf(r);
  const awaited = jsonInText(lastToolOutput(r, 'caesar_await')?.text ?? '');
  const tasks = awaited?.tasks as Record<string, OutcomeView> | undefined;
  return id && tasks ? tasks[id] : undefined;
};
const pendingQuestion = (r: ModelRequest) => childOutcome(r)?.pending_questions?.[0];

function mcp(tool: string, args: ToolCallSpec['args']): ToolCallSpec {
  return { name: `mcp__${SERVER}__${tool}`, args };
}

/** The main agent's script: delegate, poll until the child asks, answer, await the end, report (StructuredOutput). */
function mainScript(): Turn[] {
  let polls = 0;
  const awaitChild = (r: ModelRequest, timeout_ms: number): Turn => ({ kind: 'tools', calls: [mcp('caesar_await', { task_ids: [childIdOf(r)!], timeout_ms })] });
  const giveUp = (r: ModelRequest, why: string): Turn => ({ kind: 'text', text: `Giving up: ${why}. Last tool output: ${lastToolOutput(r, 'caesar_await')?.text ?? lastToolOutput(r, 'caesar_delegate')?.text ?? '(none)'}` });
  return [
    {
      kind: 'tools',
      text: 'I will delegate this to codex with the return channel.',
      calls: [
        mcp('caesar_delegate', {
          agent: 'codex',
          objective: `Create ${CHILD_FILE} holding the colour the orchestrator picks (ask it).`,
          mode: 'write',
          isolation: 'worktree',
          model: MODELS.codex,
          timeout: '240s',
          channel: true,
        }),
      ],
    },
    // Poll until codex's question is pending, then answer it.
    {
      kind: 'dynamic',
      repeat: (r) => Boolean(childIdOf(r)) && !pendingQuestion(r) && childOutcome(r)?.pending !== false && polls < MAX_POLLS,
      play: (r) => {
        if (!childIdOf(r)) return giveUp(r, 'caesar_delegate returned no task_id');
        const question = pendingQuestion(r);
        if (question) return { kind: 'tools', text: `codex asks: ${question.question}`, calls: [mcp('caesar_answer', { task_id: childIdOf(r)!, question_id: question.id, answer: ANSWER })] };
        if (childOutcome(r)?.pending === false) return giveUp(r, 'the child finished without asking');
        if (++polls > MAX_POLLS) return giveUp(r, 'no question came');
        return awaitChild(r, AWAIT_POLL_MS);
      },
    },
    // Await the end, then hand in this task's own report.
    {
      kind: 'dynamic',
      repeat: (r) => childOutcome(r)?.pending !== false && polls < MAX_POLLS,
      play: (r) => {
        const outcome = childOutcome(r);
        if (outcome?.pending === false) {
          return {
            kind: 'tools',
            calls: [{ name: 'StructuredOutput', args: reportFor(r, { summary: `codex finished (${outcome.status}): ${outcome.report?.summary ?? 'no report'}` }) }],
          };
        }
        if (++polls > MAX_POLLS) return giveUp(r, 'the child never finished');
        return awaitChild(r, 20_000);
      },
    },
  ];
}

// --- the delegated agent (codex) ---------------------------------------------------------------------------------

/** The orchestrator's answer as codex handed it to the model: the channel's structured output or its "Answer: …" text. */
function answerSeen(r: ModelRequest): string | undefined {
  const text = lastToolOutput(r, 'ask_orchestrator')?.text;
  if (text === undefined) return undefined;
  const structured = jsonInText(text);
  if (typeof structured?.answer === 'string') return structured.answer;
  return /Answer: (.+)/.exec(text)?.[1]?.trim();
}

function childScript(): Turn[] {
  const channel = (tool: string, args: ToolCallSpec['args']): ToolCallSpec => ({ name: tool, namespace: `mcp__${SERVER}`, args });
  const target = (r: ModelRequest) => path.join(r.workspace ?? '.', CHILD_FILE);
  return [
    // Only once the channel is shown to the model (see codexSeesChannel); a harmless command meanwhile.
    {
      kind: 'dynamic',
      play: (r) =>
        codexSeesChannel(r.text)
          ? { kind: 'tools', text: 'The colour is not mine to pick.', calls: [channel('ask_orchestrator', { question: QUESTION, options: ['blue', 'green'] })] }
          : { kind: 'tools', calls: [{ name: 'exec_command', args: { cmd: 'sleep 1' } }] },
      repeat: (r) => !codexSeesChannel(r.text),
    },
    {
      kind: 'dynamic',
      play: (r) => ({
        kind: 'tools',
        text: `Writing ${CHILD_FILE}.`,
        calls: [{ name: 'apply_patch', args: {}, custom: `*** Begin Patch\n*** Add File: ${target(r)}\n+colour: ${answerSeen(r) ?? 'NO ANSWER'}\n*** End Patch\n` }],
      }),
    },
    {
      kind: 'tools',
      calls: [
        channel('submit_report', (r) =>
          reportFor(r, {
            summary: `Wrote ${CHILD_FILE} with the colour the orchestrator picked (${answerSeen(r) ?? 'none'}).`,
            changes: [{ path: CHILD_FILE, action: 'created', summary: 'as asked' }],
          }),
        ),
      ],
    },
    { kind: 'text', text: 'Report submitted.' },
  ];
}

// --- the test ----------------------------------------------------------------------------------------------------

interface Outcome {
  task_id: string;
  status: string;
  report: { status: string; summary: string } | null;
  report_source: string | null;
  diff: { files: { path: string; action: string }[] } | null;
  error?: string;
}

function readJson<T>(file: string): T {
  return JSON.parse(fs.readFileSync(file, 'utf8')) as T;
}

function eventsOf(taskDir: string): ProtocolEvent[] {
  const file = path.join(taskDir, 'events.jsonl');
  if (!fs.existsSync(file)) return [];
  const parsed = readEventsText(fs.readFileSync(file, 'utf8'));
  assert.deepEqual(parsed.filter((p) => !p.ok), [], `every line of ${file} must be valid caesar.event/v1`);
  return parsed.flatMap((p) => (p.ok ? [p.event] : []));
}

describe('chain: the real claude delegates through caesar (MCP) to the real codex, which asks back on the return channel', function () {
  this.timeout(420_000);
  let root = '';
  const servers: FakeServer[] = [];

  before(() => {
    assert.ok(fs.existsSync(CAESAR_JS), `${CAESAR_JS} is missing: run npm run build first`);
    root = tempDir('caesar-live-chain-');
  });

  after(async () => {
    for (const s of servers) await s.close();
    removeScratch(root);
  });

  it('claude → caesar_delegate(codex, channel) → ask_orchestrator → caesar_answer → submit_report: diff, parent link, channel tier', async () => {
    const anthropic = await startAnthropicServer(mainScript());
    servers.push(anthropic);
    const responses = await startResponsesServer(childScript());
    servers.push(responses);

    const repo = makeRepo(path.join(root, 'repo'));
    // One HOME for both CLIs: claude reads ANTHROPIC_* from the environment, codex its CODEX_HOME/config.toml. The
    // environment flows claude → its MCP server → the codex task's supervisor → codex, as it would for a user.
    const home = path.join(root, 'home');
    // The user opts in to recursion in their own (global) layer: a repository's config can only tighten the policy.
    // Both agents run sandboxed (`required`: a task that cannot be confined fails): claude's task folders are read-only
    // to it, so its caesar_delegate, caesar_await and caesar_answer go through its task's supervisor (docs/sandbox.md).
    fs.mkdirSync(path.join(home, '.config', 'caesar'), { recursive: true });
    fs.writeFileSync(path.join(home, '.config', 'caesar', 'config.toml'), '[policy]\nallow_recursion = true\n\n[sandbox]\nmode = "required"\n');
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      ...agentEnv('codex', responses.url, home),
      ...agentEnv('claude', anthropic.url, home),
      PATH: `${pinnedBinDir(root)}:${process.env.PATH ?? ''}`,
    };
    delete env.CI;
    for (const key of Object.keys(env)) if (key.startsWith('CAESAR_')) delete env[key];

    // How claude reaches caesar: the orchestrator MCP server over stdio, its three tools allowed by name (headless,
    // an MCP tool not allowed is denied).
    const mcpConfig = path.join(root, 'claude-mcp.json');
    fs.writeFileSync(mcpConfig, JSON.stringify({ mcpServers: { [SERVER]: { type: 'stdio', command: process.execPath, args: [CAESAR_JS, 'mcp', 'serve', '--root', repo] } } }));
    const allowed = ['caesar_delegate', 'caesar_await', 'caesar_answer'].map((t) => `mcp__${SERVER}__${t}`).join(',');

    const started = Date.now();
    const ran = await runCaesar(
      ['run', '--agent', 'claude', '--mode', 'write', '--isolation', 'worktree', '--model', MODELS.claude, '--timeout', '300s', '--json',
        'Delegate the creation of chain.txt to codex and answer its questions.',
        '--', '--mcp-config', mcpConfig, '--strict-mcp-config', '--allowedTools', allowed],
      { cwd: repo, env },
    );
    const seconds = ((Date.now() - started) / 1000).toFixed(1);

    let main: Outcome;
    try {
      main = JSON.parse(ran.stdout) as Outcome;
    } catch {
      throw new Error(`caesar run printed no JSON (exit ${ran.code}).\nstdout: ${ran.stdout}\nstderr: ${ran.stderr}`);
    }
    const tasksDir = path.join(repo, '.caesar', 'tasks');
    const mainDir = path.join(tasksDir, main.task_id);
    const childId = anthropic.requests.map((r) => childIdOf(r)).find((id) => id);
    const childDir = childId ? path.join(tasksDir, childId) : '';
    const tail = (f: string) => (f && fs.existsSync(f) ? fs.readFileSync(f, 'utf8').slice(-3000) : '(none)');
    const why = [
      `chain took ${seconds} s`,
      `main outcome: ${JSON.stringify(main, null, 1)}`,
      `main events: ${eventsOf(mainDir).map((e) => e.type + (e.type === 'tool_use' ? `:${e.status}:${e.tool}` : '')).join(', ')}`,
      `main raw.log: ${tail(path.join(mainDir, 'raw.log'))}`,
      `child ${childId ?? '(none)'} state: ${tail(childDir && path.join(childDir, 'state.json'))}`,
      `child raw.log: ${tail(childDir && path.join(childDir, 'raw.log'))}`,
      `child supervisor.log: ${tail(childDir && path.join(childDir, 'supervisor.log'))}`,
      `claude asked the model ${anthropic.requests.filter((q) => q.scripted).length} times; codex ${responses.requests.length} times`,
    ].join('\n');

    // The main agent: claude's own task succeeded, with its own report.
    assert.equal(main.status, 'succeeded', why);
    assert.equal(main.report?.status, 'success', why);
    assert.match(main.report?.summary ?? '', /codex finished \(succeeded\)/, why);
    const mainTools = eventsOf(mainDir).filter((e): e is Extract<ProtocolEvent, { type: 'tool_use' }> => e.type === 'tool_use' && e.status === 'succeeded');
    for (const tool of ['caesar_delegate', 'caesar_await', 'caesar_answer']) {
      assert.ok(mainTools.some((t) => t.tool === `mcp__${SERVER}__${tool}`), `claude never ran ${tool}: ${why}`);
    }
    assert.equal(anthropic.remaining(), 0, `claude's script was not played to the end: ${why}`);
    assert.equal(responses.remaining(), 0, `codex's script was not played to the end: ${why}`);

    // The child: delegated by claude's task, through the MCP server it loaded.
    assert.ok(childId, `caesar_delegate returned no task id: ${why}`);
    const launch = readJson<{ agent: string; parent_task_id?: string; depth: number; channel: boolean }>(path.join(childDir, 'launch.json'));
    const state = readJson<{ status: string; parent_task_id?: string; depth: number; report_source?: string; agent: string }>(path.join(childDir, 'state.json'));
    assert.equal(state.agent, 'codex', why);
    assert.equal(launch.channel, true, why);
    assert.equal(launch.parent_task_id, main.task_id, `the child must record its parent task: ${why}`);
    assert.equal(state.parent_task_id, main.task_id, `the child state must name its parent: ${why}`);
    const mainState = readJson<{ depth: number; parent_task_id?: string }>(path.join(mainDir, 'state.json'));
    assert.equal(mainState.parent_task_id, undefined, 'a task started from a terminal has no parent');
    assert.equal(state.depth, mainState.depth + 1, `a delegated task is one level below its parent: ${why}`);
    assert.equal(state.status, 'succeeded', why);
    assert.equal(state.report_source, 'channel', why);
    // Both confined: the child was started by claude's supervisor, outside claude's sandbox, as a sandboxed task.
    const sandboxOf = (dir: string) => readJson<{ sandbox?: { confined: boolean } }>(path.join(dir, 'state.json')).sandbox;
    assert.deepEqual(sandboxOf(mainDir), { confined: true }, why);
    assert.deepEqual(sandboxOf(childDir), { confined: true }, why);

    // The question went through the mailbox, answered by claude's caesar_answer, and reached codex's model.
    const questions = fs.readdirSync(path.join(childDir, 'questions')).filter((f) => f.endsWith('.json') && !f.startsWith('.'));
    assert.equal(questions.length, 1, why);
    const question = readJson<{ id: string; question: string }>(path.join(childDir, 'questions', questions[0]!));
    assert.equal(question.question, QUESTION);
    const answer = readJson<{ answer: string; by: string }>(path.join(childDir, 'answers', `${question.id}.json`));
    assert.equal(answer.answer, ANSWER, why);
    // Written by caesar_answer. claude 2.1.332 declares elicitation and receives caesar_await's elicitation/create
    // ("Elicitation request received in print mode" in its MCP log) but answers nothing headless: the tool wins.
    assert.equal(answer.by, 'mcp', why);
    assert.ok(responses.requests.some((r) => answerSeen(r) === ANSWER), `codex's model never saw the answer: ${why}`);

    // codex's stream shows its MCP calls on the channel.
    const childTools = eventsOf(childDir).filter((e): e is Extract<ProtocolEvent, { type: 'tool_use' }> => e.type === 'tool_use' && e.status === 'succeeded');
    for (const tool of ['ask_orchestrator', 'submit_report']) {
      assert.ok(childTools.some((t) => t.tool.includes(tool)), `no succeeded ${tool} in codex's events: ${childTools.map((t) => t.tool).join(', ')}\n${why}`);
    }

    // The reconciled result: channel tier, exactly codex's file in the diff, with the answer in it.
    const result = readJson<{ report_source: string; report: { status: string; summary: string }; diff?: { files: { path: string; action: string }[] } }>(path.join(childDir, 'result.json'));
    assert.equal(result.report_source, 'channel', why);
    assert.equal(result.report.status, 'success', why);
    assert.deepEqual(result.diff?.files.map((f) => [f.path, f.action]), [[CHILD_FILE, 'created']], why);
    const patch = await runCaesar(['diff', childId], { cwd: repo, env });
    assert.equal(patch.code, 0, patch.stderr);
    assert.match(patch.stdout, new RegExp(`^\\+colour: ${ANSWER}$`, 'm'), patch.stdout);
    assert.deepEqual([...patch.stdout.matchAll(/^\+\+\+ b\/(.+)$/gm)].map((m) => m[1]), [CHILD_FILE], patch.stdout);
    // What claude saw from its last caesar_await: the channel tier, as the orchestrator reports it.
    const lastSeen = anthropic.requests.map((r) => childOutcome(r)).filter((o) => o && !o.pending).at(-1);
    assert.equal(lastSeen?.report?.report_source, 'channel', why);

    // The main agent's own task changed nothing.
    assert.deepEqual(main.diff?.files ?? [], [], why);
  });
});

import { strict as assert } from 'node:assert';
import { existsSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { taskPaths, type ProtocolEvent } from '../../../src/protocol';
import { delegate, type DelegateInput } from '../../../src/engine/launch/delegate';
import { answerQuestion, pendingQuestions, requestCancel } from '../../../src/engine/store/requests';
import { TaskStore } from '../../../src/engine/store/store';
import { buildCli, groupGone, makeRepo, waitFor, waitForFinished } from '../runtime/helpers';

/**
 * The ACP transport end to end: the real supervisor (bundled CLI, detached process), a real git repository in a temp
 * folder, and the demo agent speaking ACP (`demo-agent.js --acp`): one permission request before it writes its file,
 * the write through the client's `fs/write_text_file`.
 */
const NOTES = 'NOTES.md';

async function startAcp(repo: string, overrides: Partial<DelegateInput> = {}, env: NodeJS.ProcessEnv = {}): Promise<{ id: string; taskDir: string }> {
  await buildCli();
  return delegate(
    {
      root: repo,
      workspace: repo,
      agent: 'demo',
      objective: `Write ${NOTES} with one line`,
      mode: 'write',
      isolation: 'worktree',
      network: true,
      timeout_ms: 30_000,
      transport: 'acp',
      ...overrides,
    },
    { env: { CAESAR_KILL_GRACE_MS: '500', CAESAR_DEMO_DELAY_MS: '0', ...env } },
  );
}

async function waitForQuestion(repo: string, id: string) {
  return waitFor('the permission question', async () => (await pendingQuestions(repo, id))[0], 20_000);
}

/** The agent's pid (its process group) while it runs: the final state no longer names it. */
function agentPid(repo: string, id: string): Promise<number> {
  return waitFor('the agent pid', async () => (await new TaskStore(repo).get(id))?.state.agent_pid);
}

/** The demo agent's test-only fault modes ("crash", "escape" in the objective) are on only with this switch. */
const FAULTS = { CAESAR_DEMO_FAULTS: '1' };

function toolStatuses(events: ProtocolEvent[], id: string): string[] {
  return events.flatMap((e) => (e.type === 'tool_use' && e.id === id ? [e.status] : []));
}

function progress(events: ProtocolEvent[]): string[] {
  return events.flatMap((e) => (e.type === 'progress' ? [e.message] : []));
}

describe('ACP transport: the demo agent over ACP through the real supervisor', function () {
  this.timeout(60_000);
  before(async () => {
    await buildCli();
  });

  it('a permission request is a question; "allow once" answered through the engine → the write lands in the diff', async () => {
    const repo = makeRepo();
    // The demo agent stays alive after stdin closes, like opencode, claude-agent-acp and codex-acp.
    const { id } = await startAcp(repo, {}, { CAESAR_DEMO_ACP_LINGER: '1' });
    const question = await waitForQuestion(repo, id);
    assert.match(question.question, /asks permission to edit: Write NOTES\.md/);
    assert.deepEqual(question.options, ['Allow (allow_once)', 'Reject (reject_once)', 'Allow always (allow_always)']);
    const pgid = await agentPid(repo, id);
    await answerQuestion(repo, id, question.id, 'allow once', 'test');
    const done = await waitForFinished(repo, id);
    assert.equal(done.state.status, 'succeeded', done.result.report.summary);
    assert.deepEqual(done.result.diff?.files.map((f) => [f.path, f.action]), [[NOTES, 'created']]);
    assert.deepEqual(toolStatuses(done.events, 'demo-edit'), ['started', 'succeeded']);
    assert.deepEqual(toolStatuses(done.events, 'demo-read'), ['started', 'succeeded']);
    const types = done.events.map((e) => e.type);
    assert.ok(types.indexOf('question') < types.indexOf('answer'), 'question, then answer');
    assert.deepEqual(
      done.events.flatMap((e) => (e.type === 'file_changed' ? [[e.path, e.action]] : [])),
      [[NOTES, 'created']],
      'the client write is one event (the completed diff does not repeat it)',
    );
    assert.ok(done.events.some((e) => e.type === 'thinking'), 'the thought');
    assert.ok(done.events.some((e) => e.type === 'message' && e.text === `Demo agent here, speaking ACP. I received a brief of ${readFileSync(taskPaths(repo, id).brief, 'utf8').length} characters for task ${id}.`), 'chunks merged');
    assert.ok(progress(done.events).some((m) => m.startsWith('Plan:\n[~] Look around')), 'the plan');
    assert.equal(done.result.report_source, 'file');
    assert.equal(done.state.exit_code, 0);
    const raw = readFileSync(taskPaths(repo, id).rawLog, 'utf8');
    assert.match(raw, /^>> .*"method":"session\/prompt"/m, 'what we sent is in raw.log');
    assert.match(raw, /^\{.*"method":"session\/request_permission"/m, 'what the agent sent is in raw.log');
    assert.ok(groupGone(pgid), 'the agent\'s process group is gone (the lingering agent was ended by the client)');
  });

  it('"reject" → the tool call fails and nothing is written', async () => {
    const repo = makeRepo();
    const { id } = await startAcp(repo);
    const question = await waitForQuestion(repo, id);
    await answerQuestion(repo, id, question.id, 'Reject (reject_once)', 'test');
    const done = await waitForFinished(repo, id);
    assert.equal(done.state.status, 'succeeded');
    assert.deepEqual(done.result.diff?.files ?? [], []);
    assert.deepEqual(toolStatuses(done.events, 'demo-edit'), ['started', 'failed']);
    assert.ok(!existsSync(path.join(done.state.worktree!, NOTES)));
  });

  it('a read-only task: the write permission is rejected automatically, with an event, and no question is asked', async () => {
    const repo = makeRepo();
    const { id } = await startAcp(repo, { mode: 'read-only' });
    const done = await waitForFinished(repo, id);
    assert.equal(done.state.status, 'succeeded');
    assert.ok(!done.events.some((e) => e.type === 'question'), 'no question');
    assert.ok(
      progress(done.events).some((m) => /^Permission answered automatically: Reject \(reject_once\) — a read-only task never allows a tool of kind "edit"/.test(m)),
      progress(done.events).join('\n'),
    );
    assert.deepEqual(toolStatuses(done.events, 'demo-edit'), ['started', 'failed']);
    assert.ok(!existsSync(path.join(repo, NOTES)) && !(done.state.worktree && existsSync(path.join(done.state.worktree, NOTES))));
  });

  it('allow-in-worktree answers by itself; a client write outside the worktree is refused', async () => {
    const repo = makeRepo();
    const { id } = await startAcp(repo, { permissions: 'allow-in-worktree', objective: `Write ${NOTES}, then try to escape` }, FAULTS);
    const done = await waitForFinished(repo, id);
    assert.equal(done.state.status, 'succeeded', done.result.report.summary);
    assert.ok(progress(done.events).some((m) => /answered automatically: Allow \(allow_once\) — the task runs in its own worktree/.test(m)));
    assert.deepEqual(done.result.diff?.files.map((f) => f.path), [NOTES]);
    const outside = path.resolve(done.state.worktree!, '..', `escape-${id}.txt`);
    assert.ok(!existsSync(outside), `${outside} must not exist`);
    assert.deepEqual(toolStatuses(done.events, 'demo-escape'), ['started', 'failed']);
    assert.ok(done.events.some((e) => e.type === 'message' && /refused: .*outside the task's workspace/.test(e.text)), 'the refusal reached the agent');
  });

  it('without the test-only switch, "crash" and "escape" in an objective are ordinary words: no exit, no write outside', async () => {
    const repo = makeRepo();
    const { id } = await startAcp(repo, { permissions: 'allow-in-worktree', objective: `Write ${NOTES} about the crash, then escape the quotes` });
    const done = await waitForFinished(repo, id);
    assert.equal(done.state.status, 'succeeded', done.result.report.summary);
    assert.deepEqual(done.result.diff?.files.map((f) => f.path), [NOTES]);
    assert.deepEqual(toolStatuses(done.events, 'demo-escape'), [], 'no write outside the workspace was tried');
    assert.ok(!existsSync(path.resolve(done.state.worktree!, '..', `escape-${id}.txt`)));
  });

  it('policy "deny" rejects without asking', async () => {
    const repo = makeRepo();
    const { id } = await startAcp(repo, { permissions: 'deny' });
    const done = await waitForFinished(repo, id);
    assert.ok(progress(done.events).some((m) => /answered automatically: Reject \(reject_once\) — the permissions policy is "deny"/.test(m)));
    assert.deepEqual(done.result.diff?.files ?? [], []);
  });

  it('unanswered before the deadline → rejected, the question expired, the turn still ends', async () => {
    const repo = makeRepo();
    const { id } = await startAcp(repo, { timeout_ms: 5000 });
    const done = await waitForFinished(repo, id);
    assert.ok(progress(done.events).some((m) => /^Permission not answered before the task's deadline: Reject/.test(m)), progress(done.events).join('\n'));
    assert.deepEqual(toolStatuses(done.events, 'demo-edit'), ['started', 'failed']);
    assert.equal(done.state.status, 'succeeded');
    const question = done.events.find((e) => e.type === 'question');
    await assert.rejects(answerQuestion(repo, id, (question as { id: string }).id, 'allow'), /expired|ended|finished/);
  });

  it('an update of unknown kind stays in raw.log and is not fatal; an agent dying mid-turn fails the task clearly', async () => {
    const repo = makeRepo();
    const { id } = await startAcp(repo, { objective: 'crash in the middle' }, FAULTS);
    const done = await waitForFinished(repo, id);
    assert.match(readFileSync(taskPaths(repo, id).rawLog, 'utf8'), /"sessionUpdate":"demo_unknown_update"/);
    assert.equal(done.state.status, 'failed');
    assert.ok(
      done.events.some((e) => e.type === 'error' && e.fatal && e.message === 'The agent exited before its ACP turn ended (during session/prompt).'),
      JSON.stringify(done.events.filter((e) => e.type === 'error')),
    );
    assert.ok(done.events.some((e) => e.type === 'progress' && e.message.startsWith('Plan:')), 'what came before the crash was translated');
  });

  it('cancel mid-prompt (while the permission waits): cancelled, and the agent\'s process group is gone', async () => {
    const repo = makeRepo();
    const { id } = await startAcp(repo);
    await waitForQuestion(repo, id);
    const pgid = await agentPid(repo, id);
    await requestCancel(repo, id, 'test');
    const done = await waitForFinished(repo, id);
    assert.equal(done.state.status, 'cancelled');
    assert.ok(groupGone(pgid), 'the process group is gone');
    const raw = readFileSync(taskPaths(repo, id).rawLog, 'utf8');
    assert.match(raw, /^>> .*"method":"session\/cancel"/m, 'session/cancel was sent');
    assert.match(raw, /^>> .*"outcome":\{"outcome":"cancelled"\}/m, 'the open permission request was answered cancelled');
    assert.deepEqual(done.result.diff?.files ?? [], []);
  });
});

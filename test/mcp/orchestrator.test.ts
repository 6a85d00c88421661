import { strict as assert } from 'node:assert';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { taskPaths } from '../../src/protocol';
import { AnswerFileSchema } from '../../src/protocol';
import { buildCli, waitFor } from '../engine/runtime/helpers';
import { call, fixtureContext, makeFixtureRepo, serve, structured, textOf, type Served } from './orchestrator-helpers';

const TOOLS = [
  'caesar_answer',
  'caesar_apply',
  'caesar_await',
  'caesar_cancel',
  'caesar_delegate',
  'caesar_diff',
  'caesar_land',
  'caesar_list_agents',
  'caesar_list_roles',
  'caesar_logs',
  'caesar_status',
];

describe('mcp: the orchestrator server (SDK client over stdio, built caesar.js, real git, fixture agent)', function () {
  this.timeout(90_000);
  let repo: string;
  let served: Served;

  before(async () => {
    await buildCli();
    repo = makeFixtureRepo();
    served = await serve(repo);
  });
  after(async () => {
    await served?.close();
  });

  const delegateFixture = async (fixture: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
    structured(await call(served.client, 'caesar_delegate', { objective: `fixture ${String(fixture.mode)}`, agent: 'fixture', isolation: 'worktree', mode: 'write', context: fixtureContext(fixture), ...extra }));

  it('lists exactly the eleven tools, each with a description, annotations, an input and an output schema', async () => {
    const { tools } = await served.client.listTools();
    assert.deepEqual(tools.map((t) => t.name).sort(), TOOLS);
    for (const tool of tools) {
      assert.ok(tool.description && tool.description.length > 60, `${tool.name} has a description for a model`);
      assert.equal(tool.inputSchema.type, 'object', tool.name);
      assert.equal(tool.outputSchema?.type, 'object', `${tool.name} has an output schema`);
      assert.equal(typeof tool.annotations?.readOnlyHint, 'boolean', `${tool.name} says whether it is read-only`);
    }
    const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
    assert.equal(byName.caesar_apply!.annotations?.destructiveHint, true);
    assert.equal(byName.caesar_status!.annotations?.readOnlyHint, true);
    assert.deepEqual(byName.caesar_delegate!.inputSchema.required, ['objective']);
  });

  it('delegate returns at once with the resolved settings; await returns the reconciled report; status, logs, diff, apply follow', async () => {
    const delegated = await delegateFixture({ mode: 'success', sleepMs: 1500 });
    assert.match(delegated.task_id, /^t_[0-9a-f]{32}$/);
    assert.equal(delegated.status, 'pending', 'it returned before the agent finished');
    assert.equal(delegated.agent, 'fixture');
    assert.equal(delegated.mode, 'write');
    assert.equal(delegated.isolation, 'worktree');
    assert.equal(delegated.depth, 1);
    assert.equal(delegated.workspace, repo);
    const id = delegated.task_id as string;

    const awaited = structured(await call(served.client, 'caesar_await', { task_ids: [id], timeout_ms: 60_000 }));
    assert.equal(awaited.all_finished, true);
    const outcome = awaited.tasks[id];
    assert.equal(outcome.status, 'succeeded');
    assert.equal(outcome.pending, false);
    assert.equal(outcome.report.status, 'success');
    assert.equal(outcome.report.changes_verified_by, 'git');
    assert.deepEqual(outcome.report.files.map((f: { path: string }) => f.path), ['fixture.txt']);

    // The short id a person sees (caesar ps, the editor) names the task too.
    const status = structured(await call(served.client, 'caesar_status', { task_id: id.slice(0, 10) }));
    assert.equal(status.task_id, id);
    assert.equal(status.status, 'succeeded');
    assert.equal(status.pending, false);
    assert.ok(status.worktree && status.base_ref);
    assert.equal(status.last_event.type, 'finished');

    const logs = structured(await call(served.client, 'caesar_logs', { task_id: id, limit: 2, cursor: 0 }));
    assert.equal(logs.raw, false);
    assert.equal(logs.events.length, 2);
    assert.equal(logs.events[0].type, 'started');
    assert.equal(logs.next_cursor, 2);
    const rest = structured(await call(served.client, 'caesar_logs', { task_id: id, cursor: logs.next_cursor, limit: 500 }));
    assert.equal(rest.next_cursor, rest.total_events, 'paging reaches the end');
    assert.equal(rest.events.at(-1).type, 'finished');
    const raw = structured(await call(served.client, 'caesar_logs', { task_id: id, raw: true }));
    assert.equal(raw.raw, true);
    assert.equal(typeof raw.text, 'string');

    const diff = structured(await call(served.client, 'caesar_diff', { task_id: id.slice(0, 12) }));
    assert.equal(diff.is_empty, false);
    assert.deepEqual(diff.files.map((f: { path: string }) => f.path), ['fixture.txt']);
    assert.match(diff.patch, /\+hello from the fixture/);
    assert.ok(!existsSync(path.join(repo, 'fixture.txt')), 'nothing reaches the workspace before apply');

    const applied = structured(await call(served.client, 'caesar_apply', { task_id: id }));
    assert.equal(applied.applied, true, applied.message);
    assert.equal(readFileSync(path.join(repo, 'fixture.txt'), 'utf8'), 'hello from the fixture\n');
  });

  it('apply with `files` applies only that subset, and refuses a path the task did not change', async () => {
    const { task_id: id } = await delegateFixture({ mode: 'success', files: { 'one.txt': '1\n', 'two.txt': '2\n' } });
    await call(served.client, 'caesar_await', { task_ids: [id], timeout_ms: 60_000 });
    const refused = await call(served.client, 'caesar_apply', { task_id: id, files: ['three.txt'] });
    assert.equal(refused.isError, true);
    assert.match(textOf(refused), /did not change three\.txt/);
    const applied = structured(await call(served.client, 'caesar_apply', { task_id: id, files: ['two.txt'] }));
    assert.equal(applied.applied, true, applied.message);
    assert.ok(existsSync(path.join(repo, 'two.txt')));
    assert.ok(!existsSync(path.join(repo, 'one.txt')));
  });

  it('await reports a running task with its pending question; caesar_answer answers it once; the agent finishes with it', async () => {
    // The agent holds after its answer until `release` exists: the second answer below meets a task still running. It
    // is in the repository's .caesar/, which the sandboxed agent sees (read-only); the host's /tmp it does not.
    const release = path.join(repo, '.caesar', `release-${Date.now()}`);
    const { task_id: id } = await delegateFixture({ mode: 'ask', question: 'Use plan A?', holdUntil: release });
    const waiting = await waitFor('the question to be pending', async () => {
      const r = structured(await call(served.client, 'caesar_await', { task_ids: [id], timeout_ms: 500 }));
      return r.tasks[id].pending_questions?.length ? r : undefined;
    });
    assert.equal(waiting.all_finished, false);
    assert.equal(waiting.tasks[id].pending, true);
    const question = waiting.tasks[id].pending_questions[0];
    assert.equal(question.question, 'Use plan A?');
    assert.deepEqual(question.options, ['yes', 'no']);

    const unknownQuestion = await call(served.client, 'caesar_answer', { task_id: id, question_id: 'nope', answer: 'x' });
    assert.equal(unknownQuestion.isError, true);
    assert.match(textOf(unknownQuestion), /has no question "nope"/);

    const answered = structured(await call(served.client, 'caesar_answer', { task_id: id, question_id: question.id, answer: 'yes' }));
    assert.equal(answered.answered, true);
    const again = await call(served.client, 'caesar_answer', { task_id: id, question_id: question.id, answer: 'no' });
    assert.equal(again.isError, true);
    assert.match(textOf(again), /already answered/);
    writeFileSync(release, '');

    const done = structured(await call(served.client, 'caesar_await', { task_ids: [id], timeout_ms: 60_000 }));
    assert.equal(done.tasks[id].report.summary, 'Answer was: yes');
    const ended = await call(served.client, 'caesar_answer', { task_id: id, question_id: question.id, answer: 'late' });
    assert.equal(ended.isError, true);
    assert.match(textOf(ended), /has ended/);
  });

  it('cancel returns at once and the task ends cancelled; cancelling a finished task changes nothing', async () => {
    const { task_id: id } = await delegateFixture({ mode: 'hang' });
    await waitFor('the task to run', async () => (structured(await call(served.client, 'caesar_status', { task_id: id })).status === 'running' ? true : undefined), 30_000);
    const cancelled = structured(await call(served.client, 'caesar_cancel', { task_id: id }));
    assert.equal(cancelled.requested, true);
    const done = structured(await call(served.client, 'caesar_await', { task_ids: [id], timeout_ms: 60_000 }));
    assert.equal(done.tasks[id].status, 'cancelled');
    const again = structured(await call(served.client, 'caesar_cancel', { task_id: id }));
    assert.equal(again.requested, false);
    assert.equal(again.status, 'cancelled');
  });

  it('sends progress notifications while await waits, when the client gives a progress token', async () => {
    const { task_id: id } = await delegateFixture({ mode: 'success', sleepMs: 1500 });
    const progress: Array<{ progress: number; total?: number; message?: string }> = [];
    const result = structured(
      await call(served.client, 'caesar_await', { task_ids: [id], timeout_ms: 60_000 }, { onprogress: (p) => progress.push(p), resetTimeoutOnProgress: true }),
    );
    assert.equal(result.all_finished, true);
    assert.ok(progress.length >= 1, 'at least one progress notification');
    assert.equal(progress[0]!.total, 1);
    assert.match(progress[0]!.message ?? '', /0\/1 finished/);
  });

  it('lists agents (the configured fixture installed and allowed) and roles (with the agent each would pick)', async () => {
    const agents = structured(await call(served.client, 'caesar_list_agents'));
    const fixture = agents.agents.find((a: { id: string }) => a.id === 'fixture');
    assert.equal(fixture.installed, true);
    assert.equal(fixture.allowed, true);
    assert.ok(agents.agents.some((a: { id: string }) => a.id === 'codex'), 'built-in agents are listed too');
    const roles = structured(await call(served.client, 'caesar_list_roles'));
    assert.ok(roles.roles.length > 0);
    for (const role of roles.roles) {
      assert.ok('would_pick' in role && Array.isArray(role.skipped), role.name);
    }
  });

  it('answers unknown, malformed and impossible requests with tool errors, never a crash', async () => {
    const unknown = 't_00000000000000000000000000000000';
    for (const name of ['caesar_status', 'caesar_logs', 'caesar_cancel', 'caesar_diff', 'caesar_apply']) {
      const r = await call(served.client, name, { task_id: unknown });
      assert.equal(r.isError, true, name);
      assert.match(textOf(r), /Unknown task "t_0+"/, name);
      const bad = await call(served.client, name, { task_id: '../../etc' });
      assert.equal(bad.isError, true, name);
      assert.match(textOf(bad), /Invalid task id/, name);
    }
    const answer = await call(served.client, 'caesar_answer', { task_id: unknown, question_id: 'q1', answer: 'x' });
    assert.equal(answer.isError, true);
    assert.match(textOf(answer), /Unknown task/);

    const awaited = structured(await call(served.client, 'caesar_await', { task_ids: [unknown, '../x'], timeout_ms: 1000 }));
    assert.equal(awaited.tasks[unknown].status, 'unknown');
    assert.equal(awaited.tasks['../x'].status, 'invalid');
    assert.equal(awaited.all_finished, true);

    const noAgent = await call(served.client, 'caesar_delegate', { objective: 'x' });
    assert.equal(noAgent.isError, true);
    assert.match(textOf(noAgent), /Name an agent or a role/);
    const unknownAgent = await call(served.client, 'caesar_delegate', { objective: 'x', agent: 'nosuchagent' });
    assert.equal(unknownAgent.isError, true);
    assert.match(textOf(unknownAgent), /Unknown agent "nosuchagent"/);
    const badTimeout = await call(served.client, 'caesar_delegate', { objective: 'x', agent: 'fixture', timeout: 'soon' });
    assert.equal(badTimeout.isError, true);
    assert.match(textOf(badTimeout), /Timeout/);
    const malformed = await call(served.client, 'caesar_delegate', { objective: '', agent: 'fixture', mode: 'sideways' });
    assert.equal(malformed.isError, true);
    assert.match(textOf(malformed), /Input validation error/);
    const noAcp = await call(served.client, 'caesar_delegate', { objective: 'x', agent: 'fixture', transport: 'acp' });
    assert.equal(noAcp.isError, true);
    assert.match(textOf(noAcp), /Agent "fixture" .*cannot run over ACP .*transport "acp" was requested for this task/);
    const emptyAwait = await call(served.client, 'caesar_await', { task_ids: [] });
    assert.equal(emptyAwait.isError, true);
    assert.ok(!existsSync(path.join(repo, '.caesar/tasks', 'undefined')));
    // The server is still serving after all of that.
    assert.equal((await served.client.listTools()).tools.length, TOOLS.length);
  });

  it('records the parent task and the next depth when the server runs inside a task (CAESAR_TASK_ID / CAESAR_DEPTH)', async () => {
    const parent = 't_0123456789abcdef0123456789abcdef';
    const inner = await serve(repo, { env: { CAESAR_TASK_ID: parent, CAESAR_DEPTH: '1' } });
    try {
      const delegated = structured(await call(inner.client, 'caesar_delegate', { objective: 'child', agent: 'fixture', context: fixtureContext({ mode: 'success' }) }));
      assert.equal(delegated.depth, 2);
      assert.equal(delegated.parent_task_id, parent);
      const status = structured(await call(inner.client, 'caesar_status', { task_id: delegated.task_id }));
      assert.equal(status.parent_task_id, parent);
      assert.equal(status.depth, 2);
      await call(inner.client, 'caesar_await', { task_ids: [delegated.task_id], timeout_ms: 60_000 });
    } finally {
      await inner.close();
    }
  });
});

describe('mcp: the orchestrator server, one fresh repository per test', function () {
  this.timeout(90_000);

  it('puts a pending question to the user through elicitation/create and writes the answer like caesar_answer', async () => {
    const repo = makeFixtureRepo();
    const asked: string[] = [];
    const served = await serve(repo, {
      capabilities: { elicitation: {} },
      setup: (client) =>
        client.setRequestHandler(ElicitRequestSchema, async (request) => {
          asked.push(String(request.params.message));
          return { action: 'accept', content: { answer: 'no' } };
        }),
    });
    try {
      const { task_id: id } = structured(await call(served.client, 'caesar_delegate', { objective: 'ask', agent: 'fixture', context: fixtureContext({ mode: 'ask', question: 'Delete the cache?' }) }));
      const done = await waitFor('the task to finish', async () => {
        const r = structured(await call(served.client, 'caesar_await', { task_ids: [id], timeout_ms: 20_000 }));
        return r.all_finished ? r : undefined;
      }, 60_000);
      assert.equal(done.tasks[id].report.summary, 'Answer was: no');
      assert.equal(asked.length, 1);
      assert.match(asked[0]!, /Delete the cache\?/);
      const answer = AnswerFileSchema.parse(JSON.parse(readFileSync(path.join(taskPaths(repo, id).answersDir, 'q1.json'), 'utf8')));
      assert.equal(answer.by, 'mcp-elicitation');
    } finally {
      await served.close();
    }
  });

  it('channel round trip through both servers: the agent asks with ask_orchestrator, caesar_answer answers, submit_report ends it', async () => {
    const repo = makeFixtureRepo();
    const served = await serve(repo);
    try {
      const delegated = structured(
        await call(served.client, 'caesar_delegate', { objective: 'channel', agent: 'fixture', channel: true, context: fixtureContext({ mode: 'channel', question: 'Tabs or spaces?' }) }),
      );
      assert.equal(delegated.channel, true);
      const id = delegated.task_id as string;
      const question = await waitFor('the channel question', async () => {
        const r = structured(await call(served.client, 'caesar_await', { task_ids: [id], timeout_ms: 1000 }));
        return r.tasks[id].pending_questions?.[0];
      }, 30_000);
      assert.equal(question.question, 'Tabs or spaces?');
      structured(await call(served.client, 'caesar_answer', { task_id: id, question_id: question.id, answer: 'tabs' }));
      const done = structured(await call(served.client, 'caesar_await', { task_ids: [id], timeout_ms: 60_000 }));
      assert.equal(done.tasks[id].status, 'succeeded');
      assert.equal(done.tasks[id].report.report_source, 'channel');
      assert.equal(done.tasks[id].report.summary, 'Answer was: tabs');
    } finally {
      await served.close();
    }
  });

  it('cancel of a task queued for a slot returns at once, and the queued task ends cancelled without running', async () => {
    const repo = makeFixtureRepo('\n[policy]\nmax_parallel = 1\n');
    const served = await serve(repo);
    try {
      const delegate = async (fixture: Record<string, unknown>) =>
        structured(await call(served.client, 'caesar_delegate', { objective: 'slot', agent: 'fixture', isolation: 'worktree', context: fixtureContext(fixture) })).task_id as string;
      const holder = await delegate({ mode: 'hang' });
      await waitFor('the holder to run', async () => (structured(await call(served.client, 'caesar_status', { task_id: holder })).status === 'running' ? true : undefined), 30_000);
      const queued = await delegate({ mode: 'success' });
      await waitFor('the second task to wait for the slot', async () => {
        const s = structured(await call(served.client, 'caesar_status', { task_id: queued }));
        return s.status === 'pending' && /slot/.test(s.phase ?? '') ? true : undefined;
      });
      const cancelled = structured(await call(served.client, 'caesar_cancel', { task_id: queued }));
      assert.equal(cancelled.requested, true);
      assert.equal(cancelled.status, 'pending', 'cancel answered while the task still waited for the slot: it did not wait for it');
      const done = structured(await call(served.client, 'caesar_await', { task_ids: [queued], timeout_ms: 30_000 }));
      assert.equal(done.tasks[queued].status, 'cancelled');
      const holderStatus = structured(await call(served.client, 'caesar_status', { task_id: holder }));
      assert.equal(holderStatus.status, 'running', 'the slot holder was not disturbed');
      await call(served.client, 'caesar_cancel', { task_id: holder });
      await call(served.client, 'caesar_await', { task_ids: [holder], timeout_ms: 30_000 });
    } finally {
      await served.close();
    }
  });

  it('a server killed in the middle of caesar_await loses nothing: the task goes on and a new server reports it', async () => {
    const repo = makeFixtureRepo();
    const first = await serve(repo);
    const { task_id: id } = structured(await call(first.client, 'caesar_delegate', { objective: 'slow', agent: 'fixture', context: fixtureContext({ mode: 'success', sleepMs: 3000 }) }));
    let waiting = false;
    // The first progress notification says the server is inside caesar_await, waiting on a task still running.
    const pendingAwait = call(first.client, 'caesar_await', { task_ids: [id], timeout_ms: 60_000 }, { onprogress: () => (waiting = true) }).then(
      () => 'answered',
      () => 'connection lost',
    );
    await waitFor('the server to be waiting in caesar_await', () => waiting, 30_000);
    process.kill(first.transport.pid!, 'SIGKILL');
    assert.equal(await pendingAwait, 'connection lost');
    await first.close().catch(() => undefined);

    const second = await serve(repo);
    try {
      const done = structured(await call(second.client, 'caesar_await', { task_ids: [id], timeout_ms: 60_000 }));
      assert.equal(done.tasks[id].status, 'succeeded');
      assert.equal(done.tasks[id].report.status, 'success');
    } finally {
      await second.close();
    }
  });
});

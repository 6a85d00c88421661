import { strict as assert } from 'node:assert';
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { taskPaths } from '../../../src/protocol';
import { readJsonFile } from '../../../src/engine/store/atomic';
import { concludeLostTasks } from '../../../src/engine/run/conclude';
import { delegate, TaskExistsError } from '../../../src/engine/launch/delegate';
import { requestCancel, answerQuestion } from '../../../src/engine/store/requests';
import { TaskStateSchema } from '../../../src/protocol';
import { TaskStore } from '../../../src/engine/store/store';
import { worktreeDiff } from '../../../src/engine/git/reconcile';
import {
  buildCli, fixtureAgent, git, groupGone, makePlainDir, makeRepo, pidAlive, processesMatching, readFinished, startFixture, waitFor,
  waitForFinished,
} from './helpers';
import { needs } from '../../support/needs';

function finishedCount(events: Array<{ type: string }>): number {
  return events.filter((e) => e.type === 'finished').length;
}

function assertWellFormedLog(events: Array<{ type: string; seq: number }>): void {
  assert.deepEqual(events.map((e) => e.seq), events.map((_, i) => i), 'seq is 0..n-1, unique, in order');
  assert.equal(events.at(-1)?.type, 'finished', 'the log ends with finished');
  assert.equal(finishedCount(events), 1, 'exactly one finished event');
}

describe('engine runtime: delegate + supervisor (real processes, real git)', function () {
  this.timeout(60_000);
  before(async () => {
    await buildCli();
  });

  it('creates the task as pending at once, then runs it to success with a git-verified file report', async () => {
    const repo = makeRepo();
    const { id, taskDir } = await startFixture(repo, { mode: 'success', files: { 'src/new.txt': 'new\n' } });
    const early = await readJsonFile(path.join(taskDir, 'state.json'), TaskStateSchema);
    assert.ok(early, 'state.json exists when delegate returns');
    assert.ok(['pending', 'running'].includes(early.status));
    assert.ok(existsSync(path.join(taskDir, 'launch.json')));
    const done = await waitForFinished(repo, id);
    assert.equal(done.state.status, 'succeeded');
    assert.equal(done.state.report_status, 'success');
    assert.equal(done.result.report_source, 'file');
    assert.equal(done.result.changes_verified_by, 'git');
    assert.equal(done.result.agent_report_valid, true);
    assert.deepEqual(done.result.diff?.files.map((f) => [f.path, f.action]), [['src/new.txt', 'created']]);
    assert.equal(done.events[0]?.type, 'started');
    assertWellFormedLog(done.events);
    assert.ok(done.state.worktree && existsSync(path.join(done.state.worktree, 'src/new.txt')), 'the edit is in the worktree');
    assert.ok(!existsSync(path.join(repo, 'src/new.txt')), 'not in the workspace');
    assert.equal(done.state.branch, `caesar/${id}`);
    assert.equal(done.state.base_ref, git(repo, 'rev-parse', 'HEAD'));
    // The agent's own report is untouched beside result.json.
    const agentReport = JSON.parse(readFileSync(taskPaths(repo, id).report, 'utf8'));
    assert.equal(agentReport.changes.length, 1);
    assert.equal(agentReport.changes[0].path, 'src/new.txt');
    // The eight CAESAR_* variables, and task.json pointing at the worktree with a frozen base_ref.
    const env = JSON.parse(done.result.report.details).env as Record<string, string>;
    const paths = taskPaths(repo, id);
    assert.deepEqual(
      {
        dir: env.CAESAR_TASK_DIR, file: env.CAESAR_TASK_FILE, report: env.CAESAR_REPORT_PATH, events: env.CAESAR_EVENTS_PATH,
        id: env.CAESAR_TASK_ID, agent: env.CAESAR_AGENT, depth: env.CAESAR_DEPTH, version: env.CAESAR_PROTOCOL_VERSION,
      },
      { dir: paths.dir, file: paths.task, report: paths.report, events: paths.agentEvents, id, agent: 'fixture', depth: '0', version: '1' },
    );
    const task = JSON.parse(readFileSync(taskPaths(repo, id).task, 'utf8'));
    assert.equal(task.workspace, done.state.worktree);
    assert.equal(task.isolation, 'worktree');
    assert.equal(task.base_ref, done.state.base_ref);
    assert.equal(task.events_path, paths.agentEvents, 'task.json names the agent outbox, not events.jsonl');
    assert.ok(!existsSync(path.join(repo, '.caesar/state/slots/0.json')), 'the slot is freed');
  });

  it('refuses a duplicate imposed id and an unknown agent without leaving anything behind', async () => {
    const repo = makeRepo();
    const { id } = await startFixture(repo, { mode: 'success' }, { id: 'my-task' });
    assert.equal(id, 'my-task');
    await assert.rejects(startFixture(repo, { mode: 'success' }, { id: 'my-task' }), TaskExistsError);
    await waitForFinished(repo, id);
    await assert.rejects(
      delegate({ root: repo, workspace: repo, agent: 'nope', objective: 'x', mode: 'write', isolation: 'auto', network: true, timeout_ms: 1000 }),
      /Unknown agent "nope".*demo/,
    );
    await assert.rejects(startFixture(repo, { mode: 'success' }, { id: '../evil' }), /Invalid task id/);
    assert.deepEqual((await new TaskStore(repo).ids()).sort(), ['my-task']);
  });

  it('fail: exit 1 and a failed report end as failed with the report kept', async () => {
    const repo = makeRepo();
    const { id } = await startFixture(repo, { mode: 'fail' });
    const done = await waitForFinished(repo, id);
    assert.equal(done.state.status, 'failed');
    assert.equal(done.state.exit_code, 1);
    assert.equal(done.result.report.status, 'failed');
    assert.equal(done.result.report_source, 'file');
    assertWellFormedLog(done.events);
  });

  it('crash: no report → synthesized failed report quoting the last log lines', async () => {
    const repo = makeRepo();
    const { id } = await startFixture(repo, { mode: 'crash' });
    const done = await waitForFinished(repo, id);
    assert.equal(done.state.status, 'failed');
    assert.equal(done.state.exit_code, 3);
    assert.equal(done.result.report_source, 'synthesized');
    assert.equal(done.result.report.status, 'failed');
    assert.match(done.result.report.summary, /last log lines: .*starting work.*fatal: something broke/);
    const raw = readFileSync(taskPaths(repo, id).rawLog, 'utf8');
    assert.match(raw, /starting work\n/);
    assert.match(raw, /fatal: something broke/);
  });

  it('hang: the deadline TERMs the group → timed_out with an error event', async () => {
    const repo = makeRepo();
    const { id } = await startFixture(repo, { mode: 'hang' }, { timeout_ms: 800 });
    const done = await waitForFinished(repo, id);
    assert.equal(done.state.status, 'timed_out');
    assert.equal(done.result.report.status, 'failed');
    const error = done.events.find((e) => e.type === 'error');
    assert.ok(error && error.type === 'error' && /Timeout exceeded \(800 ms\)/.test(error.message) && error.fatal);
    assertWellFormedLog(done.events);
  });

  /** The agent's host pid and its two grandchildren's, once they all run (found by their argument, see the fixture). */
  async function grandchildrenRunning(repo: string, id: string): Promise<{ leader: number; pids: number[] }> {
    const store = new TaskStore(repo);
    return waitFor('the agent and its grandchildren', async () => {
      const leader = (await store.get(id))?.state.agent_pid;
      const pids = processesMatching(`grandchild-of-${id}`);
      return leader && pids.length === 2 ? { leader, pids } : undefined;
    });
  }

  // Unconfined on purpose: this is the supervisor's own kill path (TERM to the agent's group, KILL after the grace
  // period), which every task without the sandbox relies on (mode "off", macOS, no bwrap). Sandboxed, bwrap ends at the
  // TERM and the kernel ends its PID namespace with it: the next test.
  it('ignore-TERM with grandchildren, unconfined: SIGKILL after the grace period and no process left in the group', async () => {
    const repo = makeRepo();
    const { id } = await startFixture(repo, { mode: 'ignore-term-with-grandchildren' }, { timeout_ms: 1500, sandbox: { mode: 'off' } });
    const info = await grandchildrenRunning(repo, id);
    assert.ok(info.pids.every(pidAlive), 'grandchildren run before the deadline');
    const done = await waitForFinished(repo, id, 20_000);
    assert.equal(done.state.sandbox?.confined, false);
    assert.equal(done.state.status, 'timed_out');
    assert.equal(done.state.signal, 'SIGKILL');
    assert.ok(groupGone(info.leader), 'kill(-pgid, 0) gives ESRCH: the whole group is gone');
    for (const pid of [info.leader, ...info.pids]) assert.ok(!pidAlive(pid), `process ${pid} is gone`);
  });

  it('ignore-TERM with grandchildren, sandboxed: the deadline ends the agent and every process it started', async function () {
    await needs(this, 'bubblewrap');
    const repo = makeRepo();
    const { id } = await startFixture(repo, { mode: 'ignore-term-with-grandchildren' }, { timeout_ms: 1500 });
    const info = await grandchildrenRunning(repo, id);
    const done = await waitForFinished(repo, id, 20_000);
    assert.equal(done.state.sandbox?.confined, true, 'the suite runs in the default mode, auto, where bwrap works');
    assert.equal(done.state.status, 'timed_out');
    assert.ok(groupGone(info.leader), "bwrap's process group is gone");
    assert.deepEqual(processesMatching(`grandchild-of-${id}`), [], 'no grandchild is left');
  });

  it('lie: declares a.txt, writes b.txt → changes come from git, with two medium findings', async () => {
    const repo = makeRepo();
    const { id } = await startFixture(repo, { mode: 'lie' });
    const done = await waitForFinished(repo, id);
    assert.deepEqual(done.result.report.changes.map((c) => c.path), ['b.txt']);
    const titles = done.result.report.findings.map((f) => `${f.severity}:${f.title}:${f.file}`);
    assert.ok(titles.includes('medium:Undeclared change:b.txt'), titles.join(', '));
    assert.ok(titles.includes('medium:Change declared but not found in the diff:a.txt'), titles.join(', '));
  });

  it('ask: the question becomes an event, an answer from another process reaches the agent and becomes an event', async () => {
    const repo = makeRepo();
    const { id } = await startFixture(repo, { mode: 'ask', questionId: 'q1' });
    const store = new TaskStore(repo);
    await waitFor('the question event', async () => (await store.readEvents(id)).events.find((e) => e.type === 'question'));
    // Answer from another process: the real CLI would do the same through answer().
    execFileSync(process.execPath, ['-e', `
      const fs=require('fs');const p=${JSON.stringify(path.join(taskPaths(repo, id).answersDir, 'q1.json'))};
      fs.writeFileSync(p+'.tmp', JSON.stringify({id:'q1',answer:'yes',answered_at:new Date().toISOString(),by:'test'}));fs.renameSync(p+'.tmp',p);`]);
    const done = await waitForFinished(repo, id);
    assert.equal(done.result.report.summary, 'Answer was: yes');
    const question = done.events.find((e) => e.type === 'question');
    const answer = done.events.find((e) => e.type === 'answer');
    assert.ok(question && question.type === 'question' && question.id === 'q1' && question.options.join() === 'yes,no');
    assert.ok(answer && answer.type === 'answer' && answer.answer === 'yes');
    assert.ok(answer.seq > question.seq);
    assert.equal(done.events.filter((e) => e.type === 'question').length, 1, 'deduplicated');
    assertWellFormedLog(done.events);
  });

  it('ask without an answer: the question is marked expired when the agent gives up, and answering then fails clearly', async () => {
    const repo = makeRepo();
    const { id } = await startFixture(repo, { mode: 'ask', questionId: 'q2', waitMs: 300 });
    const done = await waitForFinished(repo, id);
    assert.equal(done.result.report.summary, 'No answer came.');
    const q = JSON.parse(readFileSync(path.join(taskPaths(repo, id).questionsDir, 'q2.json'), 'utf8'));
    assert.ok(q.expired_at, 'expired_at was set');
    assert.ok(done.events.some((e) => e.type === 'progress' && /q2 expired/.test(e.message)));
    await assert.rejects(answerQuestion(repo, id, 'q2', 'late'), /expired/);
  });

  it('flood: 100k events on stdout keep unique seq and exactly one finished (the translator finished is merged)', async function () {
    this.timeout(120_000);
    const repo = makeRepo();
    const { id } = await startFixture(repo, { mode: 'flood', count: 100_000 });
    const done = await waitForFinished(repo, id, 110_000);
    assert.equal(done.badLines, 0);
    assert.equal(done.events.length, 100_000 + 2, 'started + 100k messages + finished');
    assertWellFormedLog(done.events);
    assert.equal(done.state.status, 'succeeded');
  });

  it('a template agent with id-less tool starts and ends gets paired ids in events.jsonl', async () => {
    const repo = makeRepo();
    const { id } = await startFixture(repo, { mode: 'idless-tools' });
    const done = await waitForFinished(repo, id);
    assertWellFormedLog(done.events);
    const tools = done.events.flatMap((e) => (e.type === 'tool_use' ? [{ id: e.id, tool: e.tool, summary: e.input_summary, status: e.status }] : []));
    assert.ok(tools.every((t) => t.id), 'every tool event carries an id');
    const [sleep, ls] = tools;
    assert.notEqual(sleep!.id, ls!.id, 'two concurrent calls, two ids');
    assert.deepEqual(
      tools.map((t) => [t.id === sleep!.id ? 'sleep' : t.id === ls!.id ? 'ls' : 'other', t.status]),
      [['sleep', 'started'], ['ls', 'started'], ['sleep', 'succeeded'], ['ls', 'failed'], ['other', 'started'], ['other', 'succeeded']],
      'the first end closes the first call; an end nobody started gets its own start',
    );
    assert.deepEqual(tools.slice(4).map((t) => t.tool), ['grep', 'grep']);
  });

  it('an OACP agent writing seq 1 and 3 to its outbox: relayed renumbered, hostile lines dropped, one finished', async () => {
    const repo = makeRepo();
    const { id } = await startFixture(repo, { mode: 'outbox' });
    const done = await waitForFinished(repo, id);
    assert.equal(done.badLines, 0);
    assertWellFormedLog(done.events);
    assert.equal(done.state.status, 'succeeded');
    assert.deepEqual(
      done.events.map((e) => e.type),
      ['started', 'message', 'tool_use', 'tool_use', 'progress', 'finished'],
      'only the valid outbox lines, between the supervisor\'s started and finished',
    );
    assert.equal(done.events.filter((e) => e.type === 'started').length, 1, 'no impostor started');
    const finished = done.events.at(-1);
    assert.ok(finished?.type === 'finished' && finished.summary === 'Outbox written.', 'the finished is the supervisor\'s');
    const tools = done.events.filter((e) => e.type === 'tool_use');
    assert.ok(tools[0]!.id && tools[0]!.id === tools[1]!.id, 'the id-less outbox call was paired');
    assert.ok(done.events.every((e) => e.task_id === id), 'stamped with the task id by the supervisor');
    const messages = done.events.filter((e) => e.type === 'message');
    assert.deepEqual(messages.map((e) => e.type === 'message' && e.text), ['hello from the outbox']);
    const log = readFileSync(taskPaths(repo, id).supervisorLog, 'utf8');
    assert.equal((log.match(/agent outbox: line refused/g) ?? []).length, 6, log);
  });

  it('huge report (over 4 MiB): refused visibly, next tier used', async () => {
    const repo = makeRepo();
    const { id } = await startFixture(repo, { mode: 'huge-report' });
    const done = await waitForFinished(repo, id);
    assert.equal(done.result.agent_report_valid, false);
    assert.match(done.result.agent_report_error ?? '', /over the 4\.0 MiB limit/);
    assert.equal(done.result.report_source, 'synthesized');
    assert.ok(done.result.report.findings.some((f) => f.severity === 'high' && f.title === 'Agent report refused'));
  });

  it('malformed report: refused visibly, next tier used', async () => {
    const repo = makeRepo();
    const { id } = await startFixture(repo, { mode: 'malformed-report' });
    const done = await waitForFinished(repo, id);
    assert.equal(done.result.agent_report_valid, false);
    assert.match(done.result.agent_report_error ?? '', /not valid JSON/);
    assert.equal(done.result.report_source, 'synthesized');
    assert.equal(done.state.status, 'succeeded', 'the process itself succeeded');
  });

  it('unknown report version: refused naming caesar.report/v2 (reference §8.17), next tier used', async () => {
    const repo = makeRepo();
    const { id } = await startFixture(repo, { mode: 'unknown-version' });
    const done = await waitForFinished(repo, id);
    assert.equal(done.result.agent_report_valid, false);
    assert.match(done.result.agent_report_error ?? '', /caesar\.report\/v2/);
    const finding = done.result.report.findings.find((f) => f.title === 'Agent report refused');
    assert.ok(finding && finding.severity === 'high' && finding.detail.includes('caesar.report/v2'));
    assert.notEqual(done.result.report_source, 'file');
  });

  it('extracted: a fenced caesar:report in the output is used when no file is written', async () => {
    const repo = makeRepo();
    const { id } = await startFixture(repo, { mode: 'extracted', summary: 'from stdout' });
    const done = await waitForFinished(repo, id);
    assert.equal(done.result.report_source, 'extracted');
    assert.equal(done.result.report.summary, 'from stdout');
    assert.equal(done.result.report.status, 'partial');
  });

  it('commit-in-worktree: the diff against base_ref still shows the committed work', async () => {
    const repo = makeRepo();
    const { id } = await startFixture(repo, { mode: 'commit-in-worktree' });
    const done = await waitForFinished(repo, id);
    assert.equal(done.state.status, 'succeeded');
    assert.notEqual(git(done.state.worktree!, 'rev-parse', 'HEAD'), done.state.base_ref, 'the agent moved HEAD');
    assert.deepEqual(done.result.diff?.files.map((f) => f.path), ['committed.txt']);
    assert.equal(done.result.diff?.is_empty, false);
    assert.ok(!done.result.report.findings.some((f) => f.title === 'Undeclared change'));
  });

  it('cancel requested by another process ends as cancelled and is never overwritten (reference §8.2)', async () => {
    const repo = makeRepo();
    const { id } = await startFixture(repo, { mode: 'hang' });
    const store = new TaskStore(repo);
    await waitFor('running', async () => (await store.get(id))?.state.status === 'running' || undefined);
    // A separate process files the request, as `caesar cancel` from another terminal would.
    execFileSync(process.execPath, ['-e', `require('fs').writeFileSync(${JSON.stringify(taskPaths(repo, id).cancelRequest)}, '{}')`]);
    const done = await waitForFinished(repo, id);
    assert.equal(done.state.status, 'cancelled');
    assert.ok(done.events.some((e) => e.type === 'error' && /cancelled/.test(e.message)));
    assertWellFormedLog(done.events);
    const supervisorPid = done.state.supervisor_pid!;
    await waitFor('the supervisor to exit', () => !pidAlive(supervisorPid), 20_000);
    const later = await readJsonFile(taskPaths(repo, id).state, TaskStateSchema);
    assert.equal(later?.status, 'cancelled', 'still cancelled after the supervisor exited');
    assert.equal(later?.supervisor_pid, supervisorPid);
  });

  // Both modes: unconfined, the agent (its own process group) outlives its supervisor until gc stops it; sandboxed,
  // bwrap's --die-with-parent takes the agent with the supervisor. The rest is the same.
  for (const mode of ['off', 'auto'] as const) {
    it(`kill -9 of the supervisor: the task stays active with a dead pid, the store says lost, the worktree is kept and diffable (sandbox ${mode})`, async function () {
      if (mode === 'auto') await needs(this, 'bubblewrap');
      const repo = makeRepo();
      const { id } = await startFixture(repo, { mode: 'success', files: { 'kept.txt': 'x\n' }, sleepMs: 20_000 }, { sandbox: { mode } });
      const store = new TaskStore(repo);
      const running = await waitFor('running with a pid', async () => {
        const view = await store.get(id);
        return view?.state.status === 'running' && view.state.agent_pid && existsSync(path.join(view.state.worktree!, 'kept.txt')) ? view : undefined;
      });
      process.kill(running.state.supervisor_pid!, 'SIGKILL');
      await waitFor('supervisor dead', () => !pidAlive(running.state.supervisor_pid!) || undefined);
      const view = await store.get(id);
      assert.equal(view?.state.status, 'running');
      assert.equal(view?.observed, 'lost');
      assert.ok(existsSync(running.state.worktree!));
      const diff = await worktreeDiff(running.state.worktree!, running.state.base_ref!, []);
      assert.deepEqual(diff.files.map((f) => f.path), ['kept.txt']);
      if (mode === 'off') assert.ok(!groupGone(running.state.agent_pid!), 'the agent outlives its supervisor (own process group)');
      else await waitFor('the sandbox to end with its supervisor', () => groupGone(running.state.agent_pid!) || undefined);

      // `caesar gc` concludes it: stops the orphaned agent, writes result + one finished event + final state.
      const concluded = await concludeLostTasks(repo, { dryRun: false });
      assert.deepEqual(concluded, [{ id, supervisor_pid: running.state.supervisor_pid, agent_stopped: mode === 'off', changed_files: 1 }]);
      assert.ok(groupGone(running.state.agent_pid!), 'no process left in the agent group');
      const done = await readFinished(repo, id);
      assert.equal(done.state.status, 'failed');
      assert.match(done.state.error ?? '', /supervisor \(pid \d+\) disappeared/);
      assert.equal(done.result.report.status, 'failed');
      assert.deepEqual(done.result.diff?.files.map((f) => f.path), ['kept.txt']);
      assert.equal(done.events.filter((e) => e.type === 'finished').length, 1);
      assert.deepEqual(done.events.map((e) => e.seq), done.events.map((_, i) => i), 'seq stays unique and contiguous');
      assert.equal((await store.get(id))?.observed, 'failed');
      assert.ok(existsSync(running.state.worktree!), 'the worktree is kept for review');
      assert.deepEqual(await concludeLostTasks(repo, { dryRun: false }), [], 'concluding twice does nothing');
    });
  }

  it('a supervisor asked to stop (SIGTERM) stops the agent group and records the task as cancelled', async () => {
    const repo = makeRepo();
    const { id } = await startFixture(repo, { mode: 'hang' });
    const store = new TaskStore(repo);
    const running = await waitFor('running', async () => {
      const view = await store.get(id);
      return view?.state.status === 'running' && view.state.agent_pid ? view : undefined;
    });
    process.kill(running.state.supervisor_pid!, 'SIGTERM');
    const done = await waitForFinished(repo, id);
    assert.equal(done.state.status, 'cancelled');
    assert.ok(groupGone(running.state.agent_pid!));
  });

  it('max_parallel = 1: two tasks run one after the other (FIFO) and the second waits with a phase', async () => {
    const repo = makeRepo();
    const a = await startFixture(repo, { mode: 'success', sleepMs: 1500 }, { max_parallel: 1, id: 'task-a' });
    const store = new TaskStore(repo);
    await waitFor('a running', async () => (await store.get(a.id))?.state.status === 'running' || undefined);
    const b = await startFixture(repo, { mode: 'success' }, { max_parallel: 1, id: 'task-b' });
    const waiting = await waitFor('b waiting', async () => {
      const s = (await store.get(b.id))?.state;
      return s?.phase?.startsWith('waiting for a slot') ? s : undefined;
    });
    assert.equal(waiting.status, 'pending');
    // A commit while b waits: b branches from HEAD as it is when b gets its slot, not as it was when b was delegated.
    const before = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: repo, encoding: 'utf8' }).trim();
    execFileSync('git', ['commit', '-q', '--allow-empty', '-m', 'while b waits'], { cwd: repo });
    const after = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: repo, encoding: 'utf8' }).trim();
    const [doneA, doneB] = await Promise.all([waitForFinished(repo, a.id), waitForFinished(repo, b.id)]);
    assert.ok(Date.parse(doneB.state.started_at!) >= Date.parse(doneA.state.ended_at!) - 50, 'b started after a ended');
    assert.deepEqual([doneA.state.base_ref, doneB.state.base_ref], [before, after]);
  });

  it('max_parallel = 1: a slot held by a kill -9-ed process is reclaimed', async () => {
    const repo = makeRepo();
    const slots = path.join(repo, '.caesar/state/slots');
    execFileSync('mkdir', ['-p', slots]);
    const dead = spawn(process.execPath, ['-e', '0']);
    await new Promise((r) => dead.on('exit', r));
    writeFileSync(path.join(slots, '0.json'), JSON.stringify({ pid: dead.pid, host: require('node:os').hostname(), token: 'dead', started_at: new Date().toISOString() }));
    const { id } = await startFixture(repo, { mode: 'success' }, { max_parallel: 1 });
    const done = await waitForFinished(repo, id);
    assert.equal(done.state.status, 'succeeded');
  });

  it('in place outside git (allowed by the policy): degraded isolation finding, declaration-verified changes', async () => {
    const dir = makePlainDir();
    const { id } = await startFixture(dir, { mode: 'success' }, { isolation: 'auto', allow_inplace_write: true });
    const done = await waitForFinished(dir, id);
    assert.equal(done.state.isolation, 'inplace');
    assert.equal(done.result.changes_verified_by, 'declaration');
    assert.ok(existsSync(path.join(dir, 'fixture.txt')));
    assert.ok(done.result.report.findings.some((f) => f.title === 'Degraded isolation'));
  });

  it('outside git, a write the policy does not allow in place fails naming the key and the command, and writes nothing', async () => {
    const dir = makePlainDir();
    const { id } = await startFixture(dir, { mode: 'success' }, { isolation: 'auto' });
    const done = await waitForFinished(dir, id);
    assert.equal(done.state.status, 'failed');
    assert.match(done.state.error ?? '', /Writing in place is refused: no worktree is possible .*allow_inplace_write = false/);
    assert.match(done.state.error ?? '', /`caesar policy set allow_inplace_write true` \(sets allow_inplace_write in \[policy\] of \.caesar\/config\.toml\)/);
    assert.ok(!existsSync(path.join(dir, 'fixture.txt')), 'the agent never ran');
  });

  it('in place in git (allowed): changes are verified against the snapshot taken before the run', async () => {
    const repo = makeRepo({ 'dirty.txt': 'a\n' });
    writeFileSync(path.join(repo, 'dirty.txt'), 'a\nuser edit\n');
    const { id } = await startFixture(repo, { mode: 'success', files: { 'added.txt': 'z\n' } }, { isolation: 'inplace', allow_inplace_write: true });
    const done = await waitForFinished(repo, id);
    assert.equal(done.state.isolation, 'inplace');
    assert.equal(done.result.changes_verified_by, 'git');
    assert.deepEqual(done.result.diff?.files.map((f) => f.path), ['added.txt'], 'the user\'s earlier edit is not the agent\'s');
  });

  // Unconfined on purpose: it asserts the after-the-fact detection of a write in a read-only task, the protection a
  // task without the sandbox has. Sandboxed, the kernel refuses the write itself (test/engine/sandbox/sandbox-task.test.ts).
  it('read-only with an agent lacking a native read-only mode is forced into a worktree; a write gets a high finding', async () => {
    const repo = makeRepo();
    const { id } = await startFixture(repo, { mode: 'success' }, { mode: 'read-only', isolation: 'inplace', sandbox: { mode: 'off' } });
    const done = await waitForFinished(repo, id);
    assert.equal(done.state.isolation, 'worktree');
    assert.ok(!existsSync(path.join(repo, 'fixture.txt')), 'the checkout is untouched');
    const titles = done.result.report.findings.map((f) => `${f.severity}:${f.title}`);
    assert.ok(titles.includes('high:Write detected during a read-only task'), titles.join());
    assert.ok(titles.includes('low:Degraded isolation'), titles.join());
  });

  it('a worktree that cannot be created fails the task with the cause, a finished event and no silent death', async () => {
    const dir = makePlainDir();
    const { id } = await startFixture(dir, { mode: 'success' }, { isolation: 'worktree' });
    const done = await waitForFinished(dir, id);
    assert.equal(done.state.status, 'failed');
    assert.match(done.state.error ?? '', /not inside a git repository/);
    assertWellFormedLog(done.events);
    assert.equal(done.events.some((e) => e.type === 'started'), false, 'no agent was started');
  });

  it('a cancel filed while the task waits for a slot ends it as cancelled without starting the agent', async () => {
    const repo = makeRepo();
    const a = await startFixture(repo, { mode: 'hang' }, { max_parallel: 1 });
    const store = new TaskStore(repo);
    await waitFor('a running', async () => (await store.get(a.id))?.state.status === 'running' || undefined);
    const b = await startFixture(repo, { mode: 'success' }, { max_parallel: 1 });
    await waitFor('b waiting', async () => (await store.get(b.id))?.state.phase?.startsWith('waiting') || undefined);
    await requestCancel(repo, b.id);
    const doneB = await waitForFinished(repo, b.id);
    assert.equal(doneB.state.status, 'cancelled');
    assert.ok(!doneB.events.some((e) => e.type === 'started'));
    await requestCancel(repo, a.id);
    assert.equal((await waitForFinished(repo, a.id)).state.status, 'cancelled');
  });

  it('a 300 KiB context reaches an agent that reads its task from the file (no E2BIG: nothing on argv)', async () => {
    const repo = makeRepo();
    const big = 'x'.repeat(300 * 1024);
    const { id } = await startFixture(repo, { mode: 'success', pad: big });
    const done = await waitForFinished(repo, id);
    assert.equal(done.state.status, 'succeeded');
    const details = JSON.parse(done.result.report.details) as { argv: string[]; contextLength: number };
    assert.ok(details.contextLength > 300 * 1024);
    assert.deepEqual(details.argv, [], 'no prompt or context on argv');
  });

  it('the demo agent: prompt on stdin (not argv), events from its translated stream, a real edit in the worktree', async () => {
    const repo = makeRepo();
    const { id } = await delegate(
      {
        root: repo, workspace: repo, agent: 'demo', objective: 'Write NOTES.md please', context: 'y'.repeat(300 * 1024),
        mode: 'write', isolation: 'worktree', network: true, timeout_ms: 30_000,
      },
      { env: { CAESAR_DEMO_DELAY_MS: '5' } },
    );
    const done = await waitForFinished(repo, id);
    assert.equal(done.state.status, 'succeeded');
    assert.equal(done.result.report_source, 'file');
    assert.deepEqual(done.result.diff?.files.map((f) => [f.path, f.action]), [['NOTES.md', 'created']]);
    const started = done.events[0];
    assert.ok(started?.type === 'started' && !started.command.includes('Write NOTES.md') && !started.command.includes('yyyy'));
    const types = new Set(done.events.map((e) => e.type));
    for (const t of ['message', 'thinking', 'tool_use', 'progress', 'file_changed']) assert.ok(types.has(t as never), `has ${t}`);
    const brief = done.events.find((e) => e.type === 'message' && /brief of (\d+) characters/.test(e.text));
    assert.ok(brief && brief.type === 'message' && Number(/brief of (\d+)/.exec(brief.text)![1]) > 300 * 1024, 'the whole brief came through stdin');
    const fileChanged = done.events.find((e) => e.type === 'file_changed');
    assert.ok(fileChanged?.type === 'file_changed' && fileChanged.path === 'NOTES.md', 'paths are relative to the workspace');
    const tools = done.events.filter((e) => e.type === 'tool_use');
    assert.ok(tools.length >= 4 && tools.every((t) => t.type === 'tool_use' && t.id), 'paired by id');
    assertWellFormedLog(done.events);
    assert.equal(done.state.usage?.cost_usd, 0);
  });

  it('the demo agent asks when told to, waits for the answer through the file system, and uses it', async () => {
    const repo = makeRepo();
    const { id } = await delegate(
      { root: repo, workspace: repo, agent: 'demo', objective: 'ask me which greeting, then write it', mode: 'write', isolation: 'worktree', network: true, timeout_ms: 30_000 },
      { env: { CAESAR_DEMO_DELAY_MS: '5' } },
    );
    const store = new TaskStore(repo);
    const question = await waitFor('question', async () => (await store.get(id))?.pendingQuestions[0]);
    await answerQuestion(repo, id, question.id, 'Bonjour', 'test');
    const done = await waitForFinished(repo, id);
    assert.match(done.result.report.summary, /Bonjour/);
    const content = readFileSync(path.join(done.state.worktree!, 'CAESAR_DEMO.md'), 'utf8');
    assert.match(content, /answer: Bonjour/);
  });

  it('refuses to supervise a task twice', async () => {
    const repo = makeRepo();
    const { id, taskDir } = await startFixture(repo, { mode: 'success' });
    await waitForFinished(repo, id);
    const paths = taskPaths(repo, id);
    const before = { events: (await readFinished(repo, id)).events.length, state: readFileSync(paths.state, 'utf8'), result: readFileSync(paths.result, 'utf8') };
    const cli = await buildCli();
    const out = spawn(process.execPath, [cli, 'supervise', taskDir], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    out.stderr.on('data', (d) => (stderr += d));
    const code = await new Promise((r) => out.on('exit', r));
    assert.equal(code, 1);
    assert.match(stderr, /already succeeded/);
    assert.equal((await readFinished(repo, id)).events.length, before.events, 'no event appended by the refused run');
    assert.equal(readFileSync(paths.state, 'utf8'), before.state, 'state.json untouched');
    assert.equal(readFileSync(paths.result, 'utf8'), before.result, 'result.json untouched');
  });

  void fixtureAgent;
});

import { strict as assert } from 'node:assert';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { taskPaths } from '../../src/protocol';
import { runCli } from '../../src/cli/program';
import {
  ANSI,
  appendEvents,
  appendRaw,
  capture,
  cleanupAll,
  cli,
  event,
  fakeSupervisor,
  makeRepo,
  makeTask,
  writeQuestion,
  writeState,
} from './follow-helpers';
import { waitFor } from '../support/wait';

const minutesAgo = (m: number) => new Date(Date.now() - m * 60_000).toISOString();

describe('caesar ps', () => {
  after(cleanupAll);

  it('lists every active task and the 10 most recent finished ones, newest first, with lost tasks shown as lost', async () => {
    const repo = makeRepo();
    const finished = Array.from({ length: 12 }, (_, i) =>
      makeTask(repo, { status: 'succeeded', report_status: 'success', created_at: minutesAgo(100 - i), ended_at: minutesAgo(99 - i) }),
    );
    const oldRunning = makeTask(repo, { created_at: minutesAgo(200), role: 'reviewer', usage: { input_tokens: 12_345, output_tokens: 678, cost_usd: 0.4 } });
    const dead = fakeSupervisor();
    const lost = makeTask(repo, { created_at: minutesAgo(1), supervisor_pid: dead.pid! });
    dead.kill('SIGKILL');
    await new Promise((r) => dead.once('exit', r));

    const { code, stdout, stderr } = await cli(repo, ['ps']);
    assert.equal(code, 0, stderr);
    const lines = stdout.trim().split('\n');
    assert.match(lines[0]!, /^ID\s+TITLE\s+AGENT•ROLE\s+STATUS\s+REPORT\s+ISOLATION•MODE\s+AGE\s+USAGE$/);
    // Ids as short as still tells these 14 apart (10 characters unless two share their first 9), as the editor shows them.
    const ids = lines.slice(1).map((l) => l.split(/\s+/)[0]!);
    const short = (id: string) => id.slice(0, ids[0]!.length);
    assert.ok(ids[0]!.length >= 10 && ids[0]!.length < lost.id.length, ids[0]);
    // The lost task counts as finished: with it, 10 finished in all; the two oldest succeeded ones are left out.
    const expectedFinished = [lost.id, ...finished.slice(3).reverse().map((t) => t.id)];
    assert.deepEqual(ids, [lost.id, ...finished.slice(3).reverse().map((t) => t.id), oldRunning.id].filter((id, i, a) => a.indexOf(id) === i).map(short));
    assert.equal(expectedFinished.length, 10);
    const lostLine = lines.find((l) => l.startsWith(short(lost.id)))!;
    assert.match(lostLine, /\slost\s/);
    const runningLine = lines.find((l) => l.startsWith(short(oldRunning.id)))!;
    // The title is the objective's first line; the oldest of these 14 tasks sharing it is the first (no number).
    assert.match(runningLine, /^\S+\s+Add a line to src\/app\.txt\s+demo•reviewer\s+running\s+-\s+worktree•write\s+3h20m ago\s+12\.3k in \/ 678 out · \$0\.40/);
    assert.match(lostLine, /^\S+\s+Add a line to src\/app\.txt #14\s+demo\s/);
    assert.doesNotMatch(stdout, ANSI, 'no colour outside a TTY');
  });

  it('filters with --status (lost included), prints only JSON with --json, and refuses an unknown status with exit 2', async () => {
    const repo = makeRepo();
    const running = makeTask(repo);
    const failed = makeTask(repo, { status: 'failed', report_status: 'failed', ended_at: new Date().toISOString() });
    writeQuestion(repo, running.id, 'q1', 'Which file?', ['a.ts', 'b.ts']);

    const json = await cli(repo, ['ps', '--status', 'failed,running', '--json']);
    assert.equal(json.code, 0, json.stderr);
    const rows = JSON.parse(json.stdout) as Array<{ id: string; status: string; report_status: string | null; pending_questions: unknown[] }>;
    assert.deepEqual(rows.map((r) => r.id).sort(), [running.id, failed.id].sort());
    assert.equal(rows.find((r) => r.id === running.id)!.pending_questions.length, 1);
    assert.equal(rows.find((r) => r.id === failed.id)!.report_status, 'failed');

    const onlyFailed = await cli(repo, ['ps', '--status', 'failed']);
    assert.match(onlyFailed.stdout, new RegExp(failed.id.slice(0, 10)));
    assert.doesNotMatch(onlyFailed.stdout, new RegExp(running.id.slice(0, 10)));

    const bad = await cli(repo, ['ps', '--status', 'runing']);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /Unknown status "runing": expected one of pending, running, succeeded, failed, cancelled, timed_out, lost/);
  });

  it('finds the root from a subdirectory, and honours --root', async () => {
    const repo = makeRepo();
    const task = makeTask(repo);
    const fromSub = await cli(path.join(repo, 'src'), ['ps', '--json']);
    assert.deepEqual((JSON.parse(fromSub.stdout) as Array<{ id: string }>).map((r) => r.id), [task.id]);
    const elsewhere = makeRepo();
    const viaRoot = await cli(elsewhere, ['ps', '--json', '--root', repo]);
    assert.deepEqual((JSON.parse(viaRoot.stdout) as Array<{ id: string }>).map((r) => r.id), [task.id]);
    const empty = await cli(elsewhere, ['ps']);
    assert.match(empty.stdout, /No task yet/);
    const missing = await cli(elsewhere, ['ps', '--root', path.join(elsewhere, 'nope')]);
    assert.equal(missing.code, 2);
  });

  it('shows each task by title and the shortest id that names it, which every command takes back (a prefix that names several is refused)', async () => {
    const repo = makeRepo();
    // Two ids sharing their first 12 characters: ps must print 13 of each (of every id), or its ids would name both.
    const twinA = makeTask(repo, { id: 't_0123456789aaaaaaaaaaaaaaaaaaaaaaa'.slice(0, 34), objective: 'Rename the parser\nin every file' });
    const twinB = makeTask(repo, { id: 't_0123456789bbbbbbbbbbbbbbbbbbbbbbb'.slice(0, 34), objective: 'Rename the parser\nin every file', status: 'succeeded', ended_at: new Date().toISOString() });
    const other = makeTask(repo, { objective: 'Write the changelog' });
    appendEvents(repo, other.id, event(other.id, { type: 'started', agent: 'demo', command: 'demo-agent' }));
    const listed = await cli(repo, ['ps']);
    assert.equal(listed.code, 0, listed.stderr);
    const row = (id: string) => listed.stdout.split('\n').find((l) => id.startsWith(l.split(' ')[0]!) && l.includes(' '));
    assert.match(row(twinA.id) ?? '', /^t_0123456789a\s+Rename the parser\s+demo/, listed.stdout);
    assert.match(row(twinB.id) ?? '', /^t_0123456789b\s+Rename the parser #2\s+demo/, listed.stdout);
    assert.match(row(other.id) ?? '', new RegExp(`^${other.id.slice(0, 13)}\\s+Write the changelog\\s`));
    const json = JSON.parse((await cli(repo, ['ps', '--json'])).stdout) as Array<{ id: string; title: string }>;
    assert.equal(json.find((t) => t.id === twinB.id)?.title, 'Rename the parser #2');

    // What ps printed is accepted back, by every command that takes a task id.
    const logs = await cli(repo, ['logs', other.id.slice(0, 12)]);
    assert.equal(logs.code, 0, logs.stderr);
    assert.match(logs.stdout, /^\[0\] started demo/);
    const cancel = await cli(repo, ['cancel', twinA.id.slice(0, 13), '--json']);
    assert.equal(cancel.code, 0, cancel.stderr);
    assert.deepEqual(JSON.parse(cancel.stdout), { task_id: twinA.id, requested: true, status: 'running' });
    assert.ok(existsSync(taskPaths(repo, twinA.id).cancelRequest), 'the request was filed for the whole id');

    const ambiguous = await cli(repo, ['cancel', 't_0123456789']);
    assert.equal(ambiguous.code, 2);
    assert.match(ambiguous.stderr, /"t_0123456789" is the start of 2 task ids \(t_0123456789a, t_0123456789b\): type more of it\./);
    assert.equal(existsSync(taskPaths(repo, twinB.id).cancelRequest), false, 'nothing filed for an ambiguous prefix');
    const unknown = await cli(repo, ['logs', 't_fff']);
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr, /Unknown task "t_fff"/);
  });

  it('colours only on a TTY, and never with NO_COLOR', async () => {
    const repo = makeRepo();
    makeTask(repo);
    assert.match((await cli(repo, ['ps'], { tty: true })).stdout, ANSI);
    assert.doesNotMatch((await cli(repo, ['ps'], { tty: true, env: { NO_COLOR: '1' } })).stdout, ANSI);
  });
});

describe('caesar logs', () => {
  after(cleanupAll);

  it('prints `[seq] type …` lines and reports unreadable lines on stderr', async () => {
    const repo = makeRepo();
    const task = makeTask(repo, { status: 'succeeded', report_status: 'success' });
    appendEvents(
      repo,
      task.id,
      event(task.id, { type: 'started', agent: 'demo', command: 'demo-agent' }),
      event(task.id, { type: 'tool_use', tool: 'Edit', input_summary: 'src/app.txt', status: 'started', id: 'c1' }),
    );
    appendRaw(repo, task.id, 'this is not json\n');
    appendEvents(
      repo,
      task.id,
      event(task.id, { type: 'tool_use', tool: 'Edit', input_summary: 'src/app.txt', status: 'succeeded', id: 'c1' }),
      event(task.id, { type: 'finished', status: 'success', summary: 'Added a line', exit_code: 0 }),
    );
    const { code, stdout, stderr } = await cli(repo, ['logs', task.id]);
    assert.equal(code, 0, stderr);
    assert.deepEqual(stdout.trim().split('\n'), [
      '[0] started demo — demo-agent',
      '[1] tool_use started Edit src/app.txt [c1]',
      '[2] tool_use succeeded Edit src/app.txt [c1]',
      '[3] finished report "success" exit 0 — Added a line',
    ]);
    assert.match(stderr, /events\.jsonl line 3 is unreadable/);

    const json = await cli(repo, ['logs', task.id, '--json']);
    const parsed = json.stdout.trim().split('\n').map((l) => JSON.parse(l) as { seq: number });
    assert.deepEqual(parsed.map((e) => e.seq), [0, 1, 2, 3]);
  });

  it('--raw prints raw.log as written; unknown and malformed ids exit 2', async () => {
    const repo = makeRepo();
    const task = makeTask(repo, { status: 'failed' });
    writeFileSync(taskPaths(repo, task.id).rawLog, 'agent said hello\nand goodbye\n');
    const raw = await cli(repo, ['logs', task.id, '--raw']);
    assert.equal(raw.stdout, 'agent said hello\nand goodbye\n');
    assert.equal((await cli(repo, ['logs', 't_doesnotexist'])).code, 2);
    const traversal = await cli(repo, ['logs', '../../etc']);
    assert.equal(traversal.code, 2);
    assert.match(traversal.stderr, /Invalid task id/);
    assert.equal((await cli(repo, ['logs', task.id, '--raw', '--json'])).code, 2);
  });

  it('--follow prints events as they are appended and stops once the task has ended', async () => {
    const repo = makeRepo();
    const task = makeTask(repo);
    appendEvents(repo, task.id, event(task.id, { type: 'started', agent: 'demo' }));
    const c = capture(repo);
    const done = runCli(['logs', task.id, '--follow'], c.io);
    await waitFor('the first event', () => c.stdout().includes('[0] started'));
    appendEvents(repo, task.id, event(task.id, { type: 'progress', message: 'half way', pct: 50 }));
    await waitFor('the appended event', () => c.stdout().includes('[1] progress 50% half way'));
    appendRaw(repo, task.id, '{broken\n');
    await waitFor('the bad line on stderr', () => c.stderr().includes('unreadable event line'));
    appendEvents(repo, task.id, event(task.id, { type: 'finished', status: 'success', summary: 'ok' }));
    writeState(repo, { ...task, status: 'succeeded', report_status: 'success', ended_at: new Date().toISOString() });
    assert.equal(await done, 0);
    assert.match(c.stdout(), /\[2\] finished report "success" — ok\n$/);
  });

  it('--follow ends for a lost task (its supervisor died) and says so', async () => {
    const repo = makeRepo();
    const supervisor = fakeSupervisor();
    const task = makeTask(repo, { supervisor_pid: supervisor.pid! });
    appendEvents(repo, task.id, event(task.id, { type: 'started', agent: 'demo' }));
    const c = capture(repo);
    const done = runCli(['logs', task.id, '--follow'], c.io);
    await waitFor('the first event', () => c.stdout().includes('[0] started'));
    supervisor.kill('SIGKILL');
    assert.equal(await done, 0);
    assert.match(c.stderr(), /is lost: its supervisor died/);
  });
});

describe('caesar watch', () => {
  after(cleanupAll);

  it('refuses unknown ids with exit 2', async () => {
    const repo = makeRepo();
    const r = await cli(repo, ['watch', 't_0000000000000000000000000000dead', '--once']);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /Unknown task "t_0000000000000000000000000000dead"/);
  });

  it('--once: pending question first, silence after 30 s, unreadable lines counted, recent tasks linger, old ones ignored, no ANSI', async () => {
    const repo = makeRepo();
    const asking = makeTask(repo, { objective: 'Rename the helper' });
    appendEvents(
      repo,
      asking.id,
      event(asking.id, { type: 'started', agent: 'demo' }, new Date(Date.now() - 50_000)),
      event(asking.id, { type: 'tool_use', tool: 'Bash', input_summary: 'npm test', status: 'started', id: 'b' }, new Date(Date.now() - 45_000)),
      event(asking.id, { type: 'question', id: 'q1', question: 'Keep the old name as an alias?', options: ['yes', 'no'] }, new Date(Date.now() - 45_000)),
    );
    appendRaw(asking.id ? repo : repo, asking.id, 'garbage line\n');
    writeQuestion(repo, asking.id, 'q1', 'Keep the old name as an alias?', ['yes', 'no']);
    writeQuestion(repo, asking.id, 'q2', 'And the tests?');
    const busy = makeTask(repo, { agent: 'codex', objective: 'Fix the parser' });
    appendEvents(repo, busy.id, event(busy.id, { type: 'tool_use', tool: 'Read', input_summary: 'parser.ts', status: 'started', id: 'r' }));
    const recent = makeTask(repo, { status: 'succeeded', report_status: 'success', ended_at: minutesAgo(2) });
    const old = makeTask(repo, { status: 'failed', report_status: 'failed', ended_at: minutesAgo(30) });

    writeFileSync(path.join(repo, '.caesar', 'config.toml'), '[policy]\nmax_parallel = 2\n');
    const { code, stdout, stderr } = await cli(repo, ['watch', '--once']);
    assert.equal(code, 0, stderr);
    assert.doesNotMatch(stdout, ANSI);
    assert.match(stdout, /caesar · watch {2}2 active · max_parallel 2 · \d\d:\d\d:\d\d/);
    const lines = stdout.split('\n');
    const header = lines.findIndex((l) => l.includes(asking.id.slice(0, 10)) && l.startsWith('⚠'));
    assert.ok(header >= 0, `the asking task is flagged as stalled:\n${stdout}`);
    assert.match(lines[header + 1]!, /Rename the helper/);
    assert.match(lines[header + 2]!, /\? Keep the old name as an alias\? \(\+1\)/, 'the question comes before anything else');
    assert.match(lines[header + 3]!, /1\) yes {2}2\) no/);
    assert.match(lines[header + 4]!, new RegExp(`waiting for an answer — caesar answer ${asking.id} q1`));
    assert.match(lines[header + 5]!, /0 files · 3 events · 1 unreadable · silence 4\ds/);
    assert.doesNotMatch(stdout, /▸ Bash npm test/, 'the question replaces the headline');
    assert.match(stdout, /● t_\S+ {2}codex .*\n.*Fix the parser\n\s+▸ Read parser\.ts — \ds/);
    assert.match(stdout, new RegExp(`Recently finished\\n\\s+✓ ${recent.id.slice(0, 10)}\\s+demo\\s+succeeded / report success\\s+2m0\\ds ago`));
    assert.doesNotMatch(stdout, new RegExp(old.id.slice(0, 10)), 'a task that ended 30 minutes ago is not shown');
  });

  it('lists at most 5 recently finished tasks, the most recent first', async () => {
    const repo = makeRepo();
    const done = Array.from({ length: 7 }, (_, i) => makeTask(repo, { status: 'failed', report_status: 'failed', ended_at: minutesAgo(4 - i * 0.5) }));
    const { stdout } = await cli(repo, ['watch', '--once']);
    const shown = stdout.split('\n').filter((l) => /^\s+✗ /.test(l)).map((l) => l.trim().split(/\s+/)[1]);
    assert.deepEqual(shown, done.slice(2).reverse().map((t) => t.id.slice(0, 10)));
  });

  it('--once --json prints the events of all watched tasks as NDJSON, merged in time order', async () => {
    const repo = makeRepo();
    const a = makeTask(repo);
    const b = makeTask(repo);
    const t = Date.now() - 10_000;
    appendEvents(repo, a.id, event(a.id, { type: 'started', agent: 'demo' }, new Date(t)), event(a.id, { type: 'progress', message: 'a2' }, new Date(t + 2000)));
    appendEvents(repo, b.id, event(b.id, { type: 'started', agent: 'demo' }, new Date(t + 1000)), event(b.id, { type: 'progress', message: 'b2' }, new Date(t + 3000)));
    const { stdout } = await cli(repo, ['watch', '--once', '--json']);
    const events = stdout.trim().split('\n').map((l) => JSON.parse(l) as { task_id: string; seq: number });
    assert.deepEqual(events.map((e) => `${e.task_id === a.id ? 'a' : 'b'}${e.seq}`), ['a0', 'b0', 'a1', 'b1']);
  });

  it('outside a TTY prints one plain line per new event, prefixed by short id and agent, flags silence, and ends when the named tasks end', async () => {
    const repo = makeRepo();
    const quiet = makeTask(repo, { agent: 'claude' });
    appendEvents(repo, quiet.id, event(quiet.id, { type: 'started', agent: 'claude' }, new Date(Date.now() - 40_000)));
    const c = capture(repo);
    const done = runCli(['watch', quiet.id], c.io);
    await waitFor('the existing event', () => c.stdout().includes('started claude'));
    await waitFor('the silence line', () => /silence 4\ds/.test(c.stdout()), 5000);
    appendEvents(repo, quiet.id, event(quiet.id, { type: 'file_changed', path: 'src/app.txt', action: 'modified' }));
    await waitFor('the new event', () => c.stdout().includes('file_changed modified src/app.txt'));
    appendEvents(repo, quiet.id, event(quiet.id, { type: 'finished', status: 'success', summary: 'done' }));
    writeState(repo, { ...quiet, status: 'succeeded', report_status: 'success', ended_at: new Date().toISOString() });
    assert.equal(await done, 0);
    const lines = c.stdout().trim().split('\n');
    const prefix = `${quiet.id.slice(0, 10)} claude  `;
    assert.ok(lines.every((l) => l.startsWith(prefix)), c.stdout());
    assert.deepEqual(
      lines.map((l) => l.slice(prefix.length).replace(/\d+s/, 'Ns')),
      ['[0] started claude', 'silence Ns (no event since the last one)', '[1] file_changed modified src/app.txt', '[2] finished report "success" — done'],
    );
    assert.doesNotMatch(c.stdout(), ANSI);
  });

  it('--json streams raw events of every task as NDJSON, picking up tasks that start later', async () => {
    const repo = makeRepo();
    const first = makeTask(repo);
    appendEvents(repo, first.id, event(first.id, { type: 'started', agent: 'demo' }));
    const c = capture(repo);
    const done = runCli(['watch', '--json'], c.io);
    await waitFor('the first task event', () => c.out.length === 1);
    const second = makeTask(repo);
    appendEvents(repo, second.id, event(second.id, { type: 'started', agent: 'demo' }));
    await waitFor('the second task, started after watch', () => c.out.length === 2);
    appendEvents(repo, first.id, event(first.id, { type: 'message', text: 'hi' }));
    await waitFor('a later event of the first task', () => c.out.length === 3);
    c.abort.abort();
    assert.equal(await done, 0);
    const events = c.stdout().trim().split('\n').map((l) => JSON.parse(l) as { task_id: string; type: string });
    assert.deepEqual(events.map((e) => [e.task_id, e.type]), [[first.id, 'started'], [second.id, 'started'], [first.id, 'message']]);
  });

  it('on a TTY: alternate screen, redraws on change, a finished task lingers, q quits and restores the terminal', async () => {
    const repo = makeRepo();
    const task = makeTask(repo, { objective: 'Polish the README' });
    appendEvents(repo, task.id, event(task.id, { type: 'started', agent: 'demo' }));
    const c = capture(repo, { tty: true });
    const modes: boolean[] = [];
    c.stdin.setRawMode = (m: boolean) => modes.push(m);
    const done = runCli(['watch'], c.io);
    await waitFor('the first frame', () => c.stdout().includes('Polish the README'));
    assert.ok(c.stdout().startsWith('\x1b[?1049h\x1b[?25l'), 'alternate screen, cursor hidden');
    appendEvents(repo, task.id, event(task.id, { type: 'tool_use', tool: 'Edit', input_summary: 'README.md', status: 'started', id: 'e' }));
    await waitFor('the tool start, shown when it starts', () => /▸ Edit README\.md — \ds/.test(c.out.at(-1) ?? ''));
    mkdirSync(taskPaths(repo, task.id).questionsDir, { recursive: true });
    appendEvents(repo, task.id, event(task.id, { type: 'finished', status: 'success', summary: 'ok' }));
    writeState(repo, { ...task, status: 'succeeded', report_status: 'success', ended_at: new Date().toISOString() });
    const lastFrame = () => (c.out.at(-1) ?? '').replace(/\x1b\[[0-9;?]*[A-Za-z]/g, '');
    await waitFor('the finished task lingering', () => /Recently finished\n.*✓.*succeeded \/ report success/.test(lastFrame()));
    assert.match(lastFrame(), /No task in progress\. The window stays open\./);
    assert.match(c.out.at(-1)!, /\x1b\[32m✓/, 'colour on a TTY');
    c.stdin.write('q');
    assert.equal(await done, 0);
    assert.ok(c.stdout().endsWith('\x1b[?25h\x1b[?1049l\n'), 'cursor and screen restored');
    assert.deepEqual(modes, [true, false], 'raw mode on, then off');
  });
});

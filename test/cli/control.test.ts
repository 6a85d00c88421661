import { strict as assert } from 'node:assert';
import { existsSync, readFileSync, watch } from 'node:fs';
import * as path from 'node:path';
import { taskPaths } from '../../src/protocol';
import { runCli } from '../../src/cli/program';
import { capture, cleanupAll, cli, makeRepo, makeTask, writeQuestion, writeState } from './follow-helpers';
import type { TaskState } from '../../src/protocol';

/** Plays the supervisor's part for one request: when cancel.request appears, records `status` as the outcome. */
function supervisorHonouringCancel(repo: string, task: TaskState, status: TaskState['status']): Promise<void> {
  const paths = taskPaths(repo, task.id);
  return new Promise((resolve) => {
    const watcher = watch(paths.dir, () => {
      if (!existsSync(paths.cancelRequest)) return;
      watcher.close();
      writeState(repo, { ...task, status, ended_at: new Date().toISOString() });
      resolve();
    });
  });
}

describe('caesar cancel', () => {
  after(cleanupAll);

  it('files a cancel request for an active task and leaves the status to its supervisor', async () => {
    const repo = makeRepo();
    const task = makeTask(repo);
    const r = await cli(repo, ['cancel', task.id]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /Cancel requested/);
    const request = JSON.parse(readFileSync(taskPaths(repo, task.id).cancelRequest, 'utf8')) as { by: string };
    assert.equal(request.by, 'cli');
    const state = JSON.parse(readFileSync(taskPaths(repo, task.id).state, 'utf8')) as TaskState;
    assert.equal(state.status, 'running', 'the CLI never writes state.json (single writer)');
    const again = await cli(repo, ['cancel', task.id, '--json']);
    assert.equal(again.code, 0);
    assert.deepEqual(JSON.parse(again.stdout), { task_id: task.id, requested: true, status: 'running' });
  });

  it('says "nothing to cancel" for a finished task, exit 0, and files nothing', async () => {
    const repo = makeRepo();
    const task = makeTask(repo, { status: 'succeeded' });
    const r = await cli(repo, ['cancel', task.id]);
    assert.equal(r.code, 0);
    assert.match(r.stdout, /already ended \(succeeded\): nothing to cancel/);
    assert.equal(existsSync(taskPaths(repo, task.id).cancelRequest), false);
  });

  it('--wait follows until the final status: exit 0 when cancelled, 1 when the task ended otherwise', async () => {
    const repo = makeRepo();
    const task = makeTask(repo);
    const honoured = supervisorHonouringCancel(repo, task, 'cancelled');
    const r = await cli(repo, ['cancel', task.id, '--wait']);
    await honoured;
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, new RegExp(`Task ${task.id} cancelled\\.`));

    const racing = makeTask(repo);
    const finishedFirst = supervisorHonouringCancel(repo, racing, 'succeeded');
    const late = await cli(repo, ['cancel', racing.id, '--wait', '--json']);
    await finishedFirst;
    assert.equal(late.code, 1);
    assert.deepEqual(JSON.parse(late.stdout), { task_id: racing.id, requested: true, status: 'succeeded' });
  });

  it('--wait stops when interrupted, saying the request stays filed', async () => {
    const repo = makeRepo();
    const task = makeTask(repo);
    const c = capture(repo);
    const done = runCli(['cancel', task.id, '--wait'], c.io);
    setTimeout(() => c.abort.abort(), 300);
    assert.equal(await done, 1);
    assert.match(c.stderr(), /Stopped waiting; the cancel request stays filed/);
  });

  it('unknown or malformed ids exit 2', async () => {
    const repo = makeRepo();
    assert.equal((await cli(repo, ['cancel', 't_ffffffffffffffffffffffffffffffff'])).code, 2);
    assert.equal((await cli(repo, ['cancel', '../x'])).code, 2);
  });
});

describe('caesar answer', () => {
  after(cleanupAll);

  it('writes answers/<id>.json once; a second answer is refused with exit 1 naming the first', async () => {
    const repo = makeRepo();
    const task = makeTask(repo);
    writeQuestion(repo, task.id, 'q1', 'Which name?');
    const r = await cli(repo, ['answer', task.id, 'q1', 'use', 'parseConfig']);
    assert.equal(r.code, 0, r.stderr);
    const written = JSON.parse(readFileSync(path.join(taskPaths(repo, task.id).answersDir, 'q1.json'), 'utf8')) as { answer: string; by: string };
    assert.deepEqual([written.answer, written.by], ['use parseConfig', 'cli']);
    const second = await cli(repo, ['answer', task.id, 'q1', 'other']);
    assert.equal(second.code, 1);
    assert.match(second.stderr, /already answered from cli: "use parseConfig"/);
  });

  it('--option N answers with the N-th option; out of range, both forms, or neither exit 2', async () => {
    const repo = makeRepo();
    const task = makeTask(repo);
    writeQuestion(repo, task.id, 'q1', 'Proceed?', ['yes', 'no']);
    assert.equal((await cli(repo, ['answer', task.id, 'q1', '--option', '3'])).code, 2);
    assert.equal((await cli(repo, ['answer', task.id, 'q1', '--option', '0'])).code, 2);
    assert.equal((await cli(repo, ['answer', task.id, 'q1', 'yes', '--option', '1'])).code, 2);
    assert.equal((await cli(repo, ['answer', task.id, 'q1'])).code, 2);
    const r = await cli(repo, ['answer', task.id, 'q1', '--option', '2', '--json']);
    assert.equal(r.code, 0, r.stderr);
    assert.equal((JSON.parse(r.stdout) as { answer: string }).answer, 'no');
  });

  it('unknown and expired questions exit 1 with the reason; invalid ids exit 2; an ended task exits 1', async () => {
    const repo = makeRepo();
    const task = makeTask(repo);
    writeQuestion(repo, task.id, 'old', 'Still there?', [], { expired_at: new Date().toISOString() });
    const unknown = await cli(repo, ['answer', task.id, 'nope', 'x']);
    assert.equal(unknown.code, 1);
    assert.match(unknown.stderr, /has no question "nope"/);
    const expired = await cli(repo, ['answer', task.id, 'old', 'x']);
    assert.equal(expired.code, 1);
    assert.match(expired.stderr, /expired at/);
    const traversal = await cli(repo, ['answer', task.id, '../../state', 'x']);
    assert.equal(traversal.code, 2);
    assert.equal((await cli(repo, ['answer', 'bad/id', 'q1', 'x'])).code, 2);
    const ended = makeTask(repo, { status: 'failed' });
    writeQuestion(repo, ended.id, 'q1', 'Late?');
    const late = await cli(repo, ['answer', ended.id, 'q1', 'x']);
    assert.equal(late.code, 1);
    assert.match(late.stderr, /has ended \(failed\)/);
  });
});

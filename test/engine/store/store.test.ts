import { strict as assert } from 'node:assert';
import { spawn } from 'node:child_process';
import { appendFileSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { taskPaths } from '../../../src/protocol';
import { TaskStore, observedStatus } from '../../../src/engine/store/store';
import type { ProtocolEvent } from '../../../src/protocol';
import { eventLine, tempRoot, writeState } from './helpers';
import { waitFor } from '../../support/wait';
import { writeConclusion } from '../../../src/engine/run/finalize';
import { StateWriter } from '../../../src/engine/run/state-writer';
import type { Report } from '../../../src/protocol';

function finishedReport(taskId: string): Report {
  return { protocol: 'caesar.report/v1', task_id: taskId, status: 'success', summary: 'all done', details: '', changes: [], commands_run: [], findings: [], questions: [], next_steps: [], artifacts: [] };
}

describe('engine: TaskStore', () => {
  it('lists tasks: needing input first, then running, pending, then finished newest first', async () => {
    const root = tempRoot();
    writeState(root, 'done-old', { status: 'succeeded', ended_at: '2026-01-01T00:00:00.000Z' });
    writeState(root, 'done-new', { status: 'failed', ended_at: '2026-06-01T00:00:00.000Z' });
    writeState(root, 'queued', { status: 'pending' });
    writeState(root, 'busy', { status: 'running' });
    writeState(root, 'asking', { status: 'running' });
    const q = taskPaths(root, 'asking').questionsDir;
    mkdirSync(q, { recursive: true });
    writeFileSync(path.join(q, 'q1.json'), JSON.stringify({ id: 'q1', question: 'Proceed?', asked_at: new Date().toISOString() }));
    mkdirSync(path.join(root, '.caesar/tasks/.hidden-tmp'), { recursive: true });
    writeFileSync(path.join(root, '.caesar/tasks/stray.json'), '{}');
    const list = await new TaskStore(root).list();
    assert.deepEqual(list.map((t) => t.id), ['asking', 'busy', 'queued', 'done-new', 'done-old']);
    assert.equal(list[0]!.pendingQuestions[0]!.question, 'Proceed?');
  });

  it('skips a malformed state.json instead of failing the listing', async () => {
    const root = tempRoot();
    writeState(root, 'good');
    mkdirSync(taskPaths(root, 'bad').dir, { recursive: true });
    writeFileSync(taskPaths(root, 'bad').state, '{"id": "bad", "status": "runn');
    const list = await new TaskStore(root).list();
    assert.deepEqual(list.map((t) => t.id), ['good']);
  });

  it('summary(): a supervisor that wrote its final state and exited between the read and the liveness probe is not "lost"', async () => {
    const root = tempRoot();
    const exited = spawn('/bin/sh', ['-c', 'exit 0']);
    const pid = exited.pid!;
    await new Promise((resolve) => exited.on('exit', resolve));
    writeState(root, 'racy', { status: 'pending', supervisor_pid: pid });
    const store = new TaskStore(root);
    // The race, made deterministic: the first read sees `pending` and a dead pid; the supervisor's final write (made
    // before it exited) lands just after that read.
    const reader = store as unknown as { readSummary(id: string): Promise<{ observed: string } | undefined> };
    const original = reader.readSummary.bind(store);
    let reads = 0;
    reader.readSummary = async (id: string) => {
      const summary = await original(id);
      if (reads++ === 0) writeState(root, 'racy', { status: 'cancelled', supervisor_pid: pid, ended_at: new Date().toISOString() });
      return summary;
    };
    assert.equal((await store.summary('racy'))?.observed, 'cancelled');
    assert.equal(reads, 2, 'the lost verdict was confirmed by a second read');
    // A supervisor that really died without a final state stays lost.
    writeState(root, 'gone', { status: 'running', supervisor_pid: pid });
    assert.equal((await new TaskStore(root).summary('gone'))?.observed, 'lost');
  });

  it('summary(): a task concluded between the folder listing and the state read is shown finished with its result', async () => {
    const root = tempRoot();
    const running = writeState(root, 'ending', { status: 'running' });
    const paths = taskPaths(root, 'ending');
    const store = new TaskStore(root);
    // The race, made deterministic: the listing is taken while the task runs (no result.json yet); the supervisor
    // then concludes it in its own order (result.json, then the final state) before the reads that follow.
    const lister = store as unknown as { listTaskFolder(dir: string): Promise<Map<string, unknown> | undefined> };
    const original = lister.listTaskFolder.bind(store);
    let listings = 0;
    lister.listTaskFolder = async (dir: string) => {
      const listing = await original(dir);
      if (listings++ === 0) {
        await writeConclusion(
          { status: 'succeeded', report: finishedReport('ending'), source: 'file', verifiedBy: 'declaration', agentReportValid: true, exitCode: 0, signal: null },
          { resultFile: paths.result, state: new StateWriter(paths.state, running), release: async () => {}, finish: () => {} },
        );
      }
      return listing;
    };
    const summary = await store.summary('ending');
    assert.equal(summary?.observed, 'succeeded');
    assert.equal(summary?.result?.report.summary, 'all done', 'the result written before the final state is read with it');
    // A finished task that has no result.json (nothing concluded it with one) is still summarised, without one.
    writeState(root, 'bare', { status: 'cancelled', ended_at: new Date().toISOString() });
    const bare = await new TaskStore(root).summary('bare');
    assert.equal(bare?.observed, 'cancelled');
    assert.equal(bare?.result, undefined);
  });

  it('reports a task whose supervisor died as lost, and one that never started after the grace period', () => {
    const root = tempRoot();
    const dead = writeState(root, 'dead', { supervisor_pid: 2 ** 22 + 12345 });
    assert.equal(observedStatus(dead), 'lost');
    const alive = writeState(root, 'alive', { supervisor_pid: process.pid });
    assert.equal(observedStatus(alive), 'running');
    const neverStarted = writeState(root, 'never', { supervisor_pid: undefined, status: 'pending', created_at: new Date(Date.now() - 60_000).toISOString() });
    assert.equal(observedStatus(neverStarted), 'lost');
    const justCreated = writeState(root, 'fresh', { supervisor_pid: undefined, status: 'pending' });
    assert.equal(observedStatus(justCreated), 'pending');
    const finished = writeState(root, 'fin', { supervisor_pid: 2 ** 22 + 12345, status: 'succeeded' });
    assert.equal(observedStatus(finished), 'succeeded');
  });

  it('gives the last event and a resume offset that never splits a line', async () => {
    const root = tempRoot();
    writeState(root, 't1');
    const events = taskPaths(root, 't1').events;
    writeFileSync(events, eventLine(root, 't1', 0) + eventLine(root, 't1', 1) + '{"protocol":"caesar.event/v1","seq":2,"at"');
    const summary = await new TaskStore(root).summary('t1');
    assert.equal(summary!.lastEvent!.seq, 1);
    assert.equal(summary!.eventsBytes, Buffer.byteLength(eventLine(root, 't1', 0) + eventLine(root, 't1', 1)));
  });

  it('finds the last event further back past bad lines, in a file longer than the window it reads', async () => {
    const root = tempRoot();
    writeState(root, 't1');
    const events = taskPaths(root, 't1').events;
    // ~1 MB of events, then a good one, then a complete line that is not an event, then a partial line.
    let body = '';
    for (let seq = 0; body.length < 1024 * 1024; seq++) body += eventLine(root, 't1', seq);
    const good = eventLine(root, 't1', 99_999);
    writeFileSync(events, `${body}${good}not json at all\n{"protocol":"caesar.event/v1","seq":`);
    const summary = await new TaskStore(root).summary('t1');
    assert.equal(summary!.lastEvent!.seq, 99_999);
    assert.equal(summary!.eventsBytes, Buffer.byteLength(`${body}${good}not json at all\n`));
  });

  it('summarises a task from its state alone, and skips what is not a regular file beside it', async () => {
    const root = tempRoot();
    writeState(root, 'bare');
    const bare = await new TaskStore(root).summary('bare');
    assert.deepEqual([bare!.lastEvent, bare!.eventsBytes, bare!.result, bare!.applied, bare!.pendingQuestions], [undefined, 0, undefined, undefined, []]);
    writeState(root, 'odd', { status: 'succeeded' });
    mkdirSync(taskPaths(root, 'odd').result);
    symlinkSync(taskPaths(root, 'bare').state, taskPaths(root, 'odd').applied);
    const odd = await new TaskStore(root).summary('odd');
    assert.equal(odd!.state.status, 'succeeded');
    assert.deepEqual([odd!.result, odd!.applied], [undefined, undefined]);
  });

  it('follows events by byte offset across appends from another process, holding partial lines', async () => {
    const root = tempRoot();
    writeState(root, 't2');
    const file = taskPaths(root, 't2').events;
    // Half a line is there from the start, so the follower's first read certainly meets it.
    const line1 = eventLine(root, 't2', 1);
    writeFileSync(file, eventLine(root, 't2', 0) + line1.slice(0, 20));
    const seen: ProtocolEvent[] = [];
    const offsets: number[] = [];
    const bad: string[] = [];
    const store = new TaskStore(root);
    const sub = store.follow('t2', 0, (events, next) => {
      seen.push(...events);
      offsets.push(next);
    }, (_line, error) => bad.push(error));
    try {
      await waitFor('first event', () => seen.length === 1 || undefined, 3000);
      // The first read is done (it delivered event 0) and held the half line. A separate process appends the rest
      // plus a bad line, then a good one.
      const script = `require('fs').appendFileSync(${JSON.stringify(file)}, ${JSON.stringify(line1.slice(20) + 'not json\n' + eventLine(root, 't2', 2))});`;
      await new Promise((resolve) => spawn(process.execPath, ['-e', script], { stdio: 'ignore' }).on('exit', resolve));
      await waitFor('appended events', () => seen.length === 3 || undefined, 3000);
      assert.deepEqual(seen.map((e) => e.seq), [0, 1, 2]);
      assert.equal(bad.length, 1);
      assert.match(bad[0]!, /not valid JSON/);
      // Resuming from the last offset yields nothing old.
      const resumed: ProtocolEvent[] = [];
      const sub2 = store.follow('t2', offsets.at(-1)!, (events) => resumed.push(...events));
      appendFileSync(file, eventLine(root, 't2', 3));
      await waitFor('resumed event', () => resumed.length === 1 || undefined, 3000);
      assert.equal(resumed[0]!.seq, 3);
      sub2.dispose();
    } finally {
      sub.dispose();
    }
  });

  it('follows a file that does not exist yet', async () => {
    const root = tempRoot();
    writeState(root, 't3');
    const seen: ProtocolEvent[] = [];
    // The file is absent when follow() is called; whether its first read or its watch then finds it, it must.
    const sub = new TaskStore(root).follow('t3', 0, (events) => seen.push(...events));
    try {
      writeFileSync(taskPaths(root, 't3').events, eventLine(root, 't3', 0));
      await waitFor('event in a new file', () => seen.length === 1 || undefined, 3000);
    } finally {
      sub.dispose();
    }
  });

  it('watch() reports new tasks even before .caesar exists, and changes to existing ones', async () => {
    const root = tempRoot();
    const changes: string[][] = [];
    // .caesar is absent when watch() is called; whether its first scan or its watch then finds the task, it must.
    const sub = new TaskStore(root).watch((ids) => changes.push(ids), 20);
    try {
      writeState(root, 'born');
      await waitFor('new task', () => changes.flat().includes('born') || undefined, 3000);
      changes.length = 0;
      appendFileSync(taskPaths(root, 'born').events, eventLine(root, 'born', 0));
      await waitFor('changed task', () => changes.flat().includes('born') || undefined, 3000);
    } finally {
      sub.dispose();
    }
  });

  it('watch(…, only) follows that one task: its changes are reported, other tasks are neither watched nor named', async () => {
    const root = tempRoot();
    writeState(root, 'mine');
    writeState(root, 'other');
    const changes: string[][] = [];
    const sub = new TaskStore(root).watch((ids) => changes.push(ids), 20, 'mine');
    try {
      await waitFor('the first scan', () => changes.flat().includes('mine') || undefined, 3000);
      changes.length = 0;
      appendFileSync(taskPaths(root, 'other').events, eventLine(root, 'other', 0));
      appendFileSync(taskPaths(root, 'mine').events, eventLine(root, 'mine', 0));
      await waitFor('the change of the followed task', () => changes.flat().includes('mine') || undefined, 3000);
      writeState(root, 'newcomer');
      appendFileSync(taskPaths(root, 'mine').events, eventLine(root, 'mine', 1));
      await waitFor('a second change', () => changes.flat().filter((id) => id === 'mine').length >= 2 || undefined, 3000);
      assert.deepEqual([...new Set(changes.flat())], ['mine'], 'only the followed task is ever named');
    } finally {
      sub.dispose();
    }
  });

  it('require() names the unknown id; get() refuses traversal ids', async () => {
    const root = tempRoot();
    const store = new TaskStore(root);
    await assert.rejects(store.require('t_nope'), /Unknown task "t_nope"/);
    assert.equal(await store.get('../etc'), undefined);
  });
});

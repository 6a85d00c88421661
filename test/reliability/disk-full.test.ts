import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { EventsWriter } from '../../src/engine/run/events-writer';
import { runAgentProcess } from '../../src/engine/process/spawn';
import { WriteFault } from '../../src/engine/process/write-fault';
import { ACTIVE_STATUSES, EventSchema, TaskStateSchema, taskPaths } from '../../src/protocol';
import { readJsonFile } from '../../src/engine/store/atomic';
import { buildCli, groupGone, makeRepo, pidAlive, waitFor } from '../engine/runtime/helpers';
import { startHostile } from './helpers';

const LIMIT = 1024 * 1024;

/** Starts a hostile task whose supervisor runs under RLIMIT_FSIZE = LIMIT, and waits for its final state. */
async function underFileSizeLimit(fixture: Record<string, unknown>) {
  const root = makeRepo();
  const env = {
    CAESAR_SUPERVISOR_JS: path.join(__dirname, 'fsize-supervisor.cjs'),
    CAESAR_TEST_REAL_SUPERVISOR: await buildCli(),
    CAESAR_TEST_FSIZE: String(LIMIT),
  };
  const { id } = await startHostile(root, fixture, { timeout_ms: 60_000 }, env);
  const paths = taskPaths(root, id);
  const pids: number[] = [];
  const state = await waitFor(
    'a final state',
    async () => {
      const current = await readJsonFile(paths.state, TaskStateSchema);
      if (current?.agent_pid) pids.push(current.agent_pid);
      return current && !ACTIVE_STATUSES.includes(current.status) ? current : undefined;
    },
    45_000,
  );
  // The final state comes before the closing event (finalize.ts): read the log once the supervisor is gone.
  await waitFor('the supervisor to exit', () => !pidAlive(state.supervisor_pid!), 30_000);
  const lines = readFileSync(paths.events, 'utf8').split('\n');
  assert.equal(lines.pop(), '', 'events.jsonl ends with a whole line');
  const events = lines.map((line, i) => {
    const parsed = EventSchema.safeParse(JSON.parse(line));
    assert.ok(parsed.success, `line ${i + 1} is a valid event`);
    return parsed.data;
  });
  return { root, id, state, events, pids: [...new Set(pids)] };
}

/**
 * Runs `work` with this process's soft file-size limit (RLIMIT_FSIZE) lowered to `bytes`: a write past it fails with
 * EFBIG, as a write on a full disk fails with ENOSPC. (The writers refuse anything but a regular file, so /dev/full
 * cannot stand in for a full disk any more.) Node ignores SIGXFSZ; the previous soft limit is put back after.
 */
async function underOwnFileSizeLimit<T>(bytes: number, work: () => T | Promise<T>): Promise<T> {
  const previous = execFileSync('prlimit', ['--pid', String(process.pid), '--fsize', '--output', 'SOFT', '--noheadings'], { encoding: 'utf8' }).trim();
  execFileSync('prlimit', ['--pid', String(process.pid), `--fsize=${bytes}:`]);
  try {
    return await work();
  } finally {
    execFileSync('prlimit', ['--pid', String(process.pid), `--fsize=${previous}:`]);
  }
}

describe('reliability: writes that fail (a file-size limit: EFBIG on every write past it)', function () {
  this.timeout(30_000);

  it('the events writer: no throw, the fault latched with the error, later appends dropped, numbering unchanged', async () => {
    const file = path.join(mkdtempSync(path.join(tmpdir(), 'caesar-efbig-')), 'events.jsonl');
    writeFileSync(file, 'x'.repeat(1024));
    const fault = new WriteFault();
    const writer = new EventsWriter(file, 't_full');
    writer.fault = fault;
    await underOwnFileSizeLimit(1024, () => {
      assert.deepEqual(writer.appendAll([{ type: 'message', text: 'lost' }]), []);
      assert.match(fault.reason ?? '', /^events\.jsonl could not be written: EFBIG/);
      assert.equal(writer.count, 0, 'the lost batch leaves no gap');
      assert.deepEqual(writer.appendAll([{ type: 'message', text: 'after' }]), []);
      assert.equal(writer.finish({ type: 'finished', status: 'failed', summary: 'x' }), undefined);
    });
    assert.equal(readFileSync(file, 'utf8'), 'x'.repeat(1024), 'the torn write was cut back');
  });

  it('the agent run: raw.log that cannot be written stops the group and reports the write error', async () => {
    const fault = new WriteFault();
    const rawLogPath = path.join(mkdtempSync(path.join(tmpdir(), 'caesar-efbig-')), 'raw.log');
    const result = await underOwnFileSizeLimit(256, () => runAgentProcess({
      plan: { command: process.execPath, args: ['-e', "setInterval(()=>console.log('still talking'),20)"], cwd: tmpdir(), display: 'node' },
      env: process.env,
      rawLogPath,
      onStdoutLines: () => {},
      timeoutMs: 20_000,
      graceMs: 300,
      fault,
    }));
    assert.match(result.writeError ?? '', /^raw\.log could not be written: EFBIG/);
    assert.equal(result.timedOut, false, 'stopped by the fault, not by the deadline');
    assert.equal(result.signal, 'SIGTERM');
    assert.ok(result.pid && groupGone(result.pid));
  });
});

/** Item 6 of issue 13: a full disk (here a file-size limit: EFBIG) fails the task with the reason, loses nothing. */
describe('reliability: disk full (raw.log / events.jsonl cannot be written)', function () {
  this.timeout(90_000);

  it('raw.log past the limit: the agent is stopped, the task fails with the reason, every event is kept', async () => {
    const { state, events, pids } = await underFileSizeLimit({ mode: 'chatter', count: 1e9, size: 1000, pauseEvery: 200 });
    assert.equal(state.status, 'failed', JSON.stringify(state));
    assert.match(state.error ?? '', /raw\.log could not be written: .*(EFBIG|too large)/i);
    assert.deepEqual(events.map((e) => e.seq), events.map((_e, i) => i), 'seq runs from 0 without a gap');
    assert.equal(events[0]?.type, 'started');
    assert.equal(events.at(-1)?.type, 'finished', 'events.jsonl is small: the closing event was written');
    for (const pid of pids) assert.ok(groupGone(pid), `the agent's group ${pid} is gone`);
  });

  it('events.jsonl past the limit: no torn line, earlier events intact, the task fails with the reason', async () => {
    const { state, events, pids } = await underFileSizeLimit({ mode: 'outbox-flood', size: 1 });
    assert.equal(state.status, 'failed', JSON.stringify(state));
    assert.match(state.error ?? '', /events\.jsonl could not be written: .*(EFBIG|too large)/i);
    assert.ok(events.length > 50, `the events before the failure are kept (${events.length})`);
    assert.deepEqual(events.map((e) => e.seq), events.map((_e, i) => i), 'seq runs from 0 without a gap');
    const finished = events.filter((e) => e.type === 'finished');
    assert.ok(finished.length <= 1 && (finished.length === 0 || events.at(-1)?.type === 'finished'));
    for (const pid of pids) assert.ok(groupGone(pid), `the agent's group ${pid} is gone`);
  });
});

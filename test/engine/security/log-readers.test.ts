import { strict as assert } from 'node:assert';
import { symlinkSync, writeFileSync } from 'node:fs';
import { taskPaths } from '../../../src/protocol';
import { readRawLogPage } from '../../../src/engine/tasks/operations';
import { lastLogLines } from '../../../src/engine/run/report';
import { writeState } from '../store/helpers';
import { runBuiltCli } from '../runtime/helpers';
import { mkfifo, tempDir, within } from './helpers';

const runCaesar = runBuiltCli;

/*
 * Issue 13 item 2, the remaining readers: `caesar logs` (events.jsonl, and raw.log with --raw), the MCP raw-log pager
 * and the end of supervisor.log the editor shows read through the safe reader: a FIFO planted at the file (by an agent,
 * or committed) is refused at once instead of blocking open(2) forever, and a link to /dev/zero is not followed.
 */


const ID = 't_0123456789abcdef0123456789abcdef';

describe('security: the log readers refuse FIFOs and links (issue 13.2)', function () {
  this.timeout(60_000);

  it('caesar logs with a FIFO at events.jsonl returns promptly with the reason', async () => {
    const root = tempDir('caesar-sec-logs-');
    writeState(root, ID, { status: 'succeeded', supervisor_pid: undefined });
    mkfifo(taskPaths(root, ID).events);
    const run = await runCaesar(['logs', ID, '--root', root], root, 10_000);
    assert.equal(run.code, 1, run.stderr);
    assert.match(run.stderr, /events\.jsonl could not be read: .*FIFO/);
  });

  it('caesar logs --raw with a FIFO at raw.log, or raw.log linked to /dev/zero, returns promptly', async () => {
    const root = tempDir('caesar-sec-rawlogs-');
    writeState(root, ID, { status: 'succeeded', supervisor_pid: undefined });
    mkfifo(taskPaths(root, ID).rawLog);
    const fifo = await runCaesar(['logs', ID, '--raw', '--root', root], root, 10_000);
    assert.equal(fifo.code, 1, fifo.stderr);
    assert.match(fifo.stderr, /raw\.log could not be read: .*FIFO/);

    const other = 't_fedcba9876543210fedcba9876543210';
    writeState(root, other, { status: 'succeeded', supervisor_pid: undefined });
    symlinkSync('/dev/zero', taskPaths(root, other).rawLog);
    const zero = await runCaesar(['logs', other, '--raw', '--root', root], root, 10_000);
    assert.equal(zero.code, 1, zero.stderr);
    assert.match(zero.stderr, /raw\.log could not be read: .*symbolic link/);
  });

  it('the MCP raw-log pager refuses a FIFO and a /dev/zero link at raw.log, and still pages a genuine one', async () => {
    const root = tempDir('caesar-sec-rawpage-');
    writeState(root, ID, { status: 'succeeded', supervisor_pid: undefined });
    mkfifo(taskPaths(root, ID).rawLog);
    await assert.rejects(within(3_000, 'readRawLogPage(FIFO)', readRawLogPage(root, ID, { maxBytes: 1024 })), /raw\.log is a FIFO/);

    const other = 't_fedcba9876543210fedcba9876543210';
    writeState(root, other, { status: 'succeeded', supervisor_pid: undefined });
    symlinkSync('/dev/zero', taskPaths(root, other).rawLog);
    await assert.rejects(within(3_000, 'readRawLogPage(/dev/zero)', readRawLogPage(root, other, { maxBytes: 1024 })), /raw\.log is a symbolic link/);

    const genuine = 't_00000000000000000000000000000001';
    writeState(root, genuine, { status: 'succeeded', supervisor_pid: undefined });
    writeFileSync(taskPaths(root, genuine).rawLog, 'one\ntwo\n');
    const page = await readRawLogPage(root, genuine, { maxBytes: 4 });
    assert.deepEqual(page, { task_id: genuine, text: 'two\n', total_bytes: 8, truncated: true, next_cursor: 8 });
  });

  it('the end of supervisor.log (what the editor shows on a failure) is not read from a FIFO', async () => {
    const root = tempDir('caesar-sec-suplog-');
    writeState(root, ID, { status: 'failed', supervisor_pid: undefined });
    mkfifo(taskPaths(root, ID).supervisorLog);
    assert.deepEqual(await within(3_000, 'lastLogLines(FIFO)', lastLogLines(taskPaths(root, ID).supervisorLog, 20)), []);
  });
});

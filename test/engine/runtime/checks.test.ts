import { strict as assert } from 'node:assert';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { readTail } from '../../../src/engine/run/checks';
import { concludeLostTasks } from '../../../src/engine/run/conclude';
import { taskPaths, type TaskState } from '../../../src/protocol';
import { makeRepo, pidAlive, processesMatching, readFinished, startFixture, waitFor, waitForFinished } from './helpers';
import { needs } from '../../support/needs';

const check = (name: string, command: string, timeout_ms = 20_000) => ({ name, command, timeout_ms });

/** Checks through the real supervisor with the fixture agent: where they run and what they may touch. */
describe('checks: the supervisor runs them after the agent', function () {
  this.timeout(60_000);

  it('runs every check in order even after one failed, in the worktree, after the agent wrote its files', async () => {
    const root = makeRepo();
    const { id } = await startFixture(root, { mode: 'success' }, { checks: [check('first', 'exit 1'), check('second', 'ls fixture.txt')] });
    const done = await waitForFinished(root, id);
    assert.deepEqual(done.result.checks?.map((c) => [c.name, c.exit_code]), [['first', 1], ['second', 0]]);
    assert.equal(done.result.checks![1]!.output_tail, 'fixture.txt\n');
    assert.deepEqual(done.state.checks, { total: 2, failed: 1 });
  });

  it('a task without checks has none in result.json or state.json', async () => {
    const root = makeRepo();
    const { id } = await startFixture(root, { mode: 'success' });
    const done = await waitForFinished(root, id);
    assert.equal(done.result.checks, undefined);
    assert.equal(done.state.checks, undefined);
  });

  it('keeps only the last bytes of a loud check in result.json', async () => {
    const root = makeRepo();
    const { id } = await startFixture(root, { mode: 'success' }, { checks: [check('loud', 'seq 1 20000; echo the-end')] });
    const done = await waitForFinished(root, id);
    const tail = done.result.checks![0]!.output_tail;
    assert.ok(tail.length <= 4096, String(tail.length));
    assert.match(tail, /the-end\n$/);
    assert.match(tail, /^\d+\n/, 'cut at a line boundary');
  });

  it('readTail: the end of a file, whole when short, empty when missing', async () => {
    const file = path.join(makeRepo(), 'out.log');
    writeFileSync(file, 'short\n');
    assert.equal(await readTail(file, 4096), 'short\n');
    assert.equal(await readTail(path.join(file, 'missing'), 4096), '');
  });

  describe('inside the sandbox', function () {
    before(async function () {
      await needs(this, 'bubblewrap');
    });

    it("a read-only task's check runs read-only, as its agent did; a write task's check may write its worktree", async () => {
      const root = makeRepo();
      const writes = check('writes', 'echo x > check-wrote.txt && echo wrote');
      const readOnly = await startFixture(root, { mode: 'success' }, { mode: 'read-only', sandbox: { mode: 'required' }, checks: [writes] });
      const ro = await waitForFinished(root, readOnly.id);
      assert.deepEqual(ro.state.sandbox, { confined: true });
      assert.notEqual(ro.result.checks![0]!.exit_code, 0, ro.result.checks![0]!.output_tail);
      assert.equal(existsSync(path.join(ro.state.worktree!, 'check-wrote.txt')), false);

      const write = await startFixture(root, { mode: 'success' }, { sandbox: { mode: 'required' }, checks: [writes] });
      const rw = await waitForFinished(root, write.id);
      assert.equal(rw.result.checks![0]!.exit_code, 0, rw.result.checks![0]!.output_tail);
      assert.equal(existsSync(path.join(rw.state.worktree!, 'check-wrote.txt')), true);
    });

    it("a check's write into the task folder never becomes the agent's report", async () => {
      const root = makeRepo();
      const forge = check('forge', `echo '{"protocol":"caesar.report/v1","status":"failed","summary":"forged by a check"}' > "$CAESAR_REPORT_PATH"`);
      const { id } = await startFixture(root, { mode: 'success' }, { sandbox: { mode: 'required' }, checks: [forge] });
      const done = await waitForFinished(root, id);
      assert.equal(done.result.checks![0]!.exit_code, 0, done.result.checks![0]!.output_tail);
      assert.notEqual(done.result.report.summary, 'forged by a check');
      assert.equal(done.result.report.status, 'success');
    });

    it("the supervisor killed -9 during a check: gc keeps the agent's report, not what the check left in its view of the task folder", async () => {
      const root = makeRepo();
      // The check hangs after forging (sh is dash here: no `exec -a`); its sleep's argument, unique to this run, finds
      // it on the host afterwards (it outlives its supervisor). Sleeping ~3 years, it is killed below.
      const marker = `9${String(Date.now()).slice(-7)}.${process.pid}`;
      const forge = check('forge', `echo '{"protocol":"caesar.report/v1","status":"failed","summary":"forged by a check"}' > "$CAESAR_REPORT_PATH"; sleep ${marker}`, 600_000);
      const { id } = await startFixture(root, { mode: 'success' }, { sandbox: { mode: 'required' }, checks: [forge] });
      const paths = taskPaths(root, id);
      const inView = path.join(paths.dir, 'sandbox-view', 'report.json');
      const state = await waitFor('the check to forge a report in its view, the conclusion begun', () => {
        const now = JSON.parse(readFileSync(paths.state, 'utf8')) as TaskState;
        return now.concluding_since && existsSync(inView) && readFileSync(inView, 'utf8').includes('forged') ? now : undefined;
      }, 30_000);
      process.kill(state.supervisor_pid!, 'SIGKILL');
      await waitFor('the supervisor to die', () => !pidAlive(state.supervisor_pid!));
      try {
        await concludeLostTasks(root, { dryRun: false });
        const { result } = await readFinished(root, id);
        assert.equal(result.report.summary === 'forged by a check', false, JSON.stringify(result.report));
        assert.equal(result.report.status, 'success', "the agent's own report, taken back before the checks began");
      } finally {
        for (const pid of processesMatching(`sleep\0${marker}`)) process.kill(pid, 'SIGKILL');
      }
    });
  });
});

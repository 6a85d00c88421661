import { strict as assert } from 'node:assert';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { taskPaths, TaskStateSchema } from '../../src/protocol';
import { readJsonFile } from '../../src/engine/store/atomic';
import { concludeLostTasks } from '../../src/engine/run/conclude';
import { isPidAlive as processAlive } from '../../src/base/process';
import { taskProcesses } from '../../src/engine/process/process-sweep';
import { requestCancel } from '../../src/engine/store/requests';
import { makeRepo, pidAlive, waitFor, waitForFinished } from '../engine/runtime/helpers';
import { startHostile } from './helpers';

const linux = process.platform === 'linux';

function pidFile(): string {
  return path.join(mkdtempSync(path.join(tmpdir(), 'caesar-escapee-')), 'pid');
}

async function escapedPid(file: string): Promise<number> {
  return waitFor('the escaped process to write its pid', () => (existsSync(file) && Number(readFileSync(file, 'utf8'))) || undefined);
}

const started: number[] = [];

/*
 * Unconfined on purpose: these assert the supervisor's own sweep (processes that left the group are found by their
 * CAESAR_TASK_ID and ended), which is what ends an escapee of a task that runs without the sandbox (mode "off", macOS,
 * no bwrap). Sandboxed, the PID namespace ends them with bwrap (test/engine/sandbox/sandbox-task.test.ts), and the pid
 * an escapee writes here would be its namespace's, and to a /tmp the host does not see.
 */
const UNCONFINED = { sandbox: { mode: 'off' as const } };

/** Item 7 of issue 13: a descendant that leaves the process group (setsid, double fork) does not outlive its task. */
(linux ? describe : describe.skip)('reliability: nothing outlives its task', function () {
  this.timeout(60_000);
  after(() => {
    for (const pid of started) if (processAlive(pid)) process.kill(pid, 'SIGKILL');
  });

  for (const kind of ['setsid', 'double-fork'] as const) {
    it(`a ${kind} escapee that ignores SIGTERM is ended when the task finishes`, async () => {
      const root = makeRepo();
      const file = pidFile();
      const { id } = await startHostile(root, { mode: 'escape', kind, pidFile: file }, UNCONFINED);
      const pid = await escapedPid(file);
      started.push(pid);
      const { state } = await waitForFinished(root, id);
      assert.equal(state.status, 'succeeded');
      // The task is concluded only once the sweep ended it (no wait here: it must already be gone).
      assert.equal(processAlive(pid), false, `escaped process ${pid} (${kind}) outlived its task`);
    });
  }

  it('on cancel: the escapee of a hanging agent is ended too', async () => {
    const root = makeRepo();
    const file = pidFile();
    const { id } = await startHostile(root, { mode: 'escape', kind: 'setsid', pidFile: file, hang: true }, UNCONFINED);
    const pid = await escapedPid(file);
    started.push(pid);
    await requestCancel(root, id);
    const { state } = await waitForFinished(root, id);
    assert.equal(state.status, 'cancelled');
    assert.equal(processAlive(pid), false, `escaped process ${pid} outlived the cancelled task`);
  });

  it('supervisor killed -9: gc concludes the task and ends the escapee as well as the group', async () => {
    const root = makeRepo();
    const file = pidFile();
    const { id } = await startHostile(root, { mode: 'escape', kind: 'double-fork', pidFile: file, hang: true }, UNCONFINED);
    const pid = await escapedPid(file);
    started.push(pid);
    const paths = taskPaths(root, id);
    const running = await waitFor('the agent pid', async () => {
      const state = await readJsonFile(paths.state, TaskStateSchema);
      return state?.agent_pid && state.supervisor_pid ? state : undefined;
    });
    process.kill(running.supervisor_pid!, 'SIGKILL');
    // Reaped by this process (its parent): the store's liveness check is kill(pid, 0), which a zombie still passes.
    await waitFor('the supervisor to die', () => !pidAlive(running.supervisor_pid!));
    const concluded = await concludeLostTasks(root, { dryRun: false });
    assert.deepEqual(concluded.map((c) => [c.id, c.agent_stopped]), [[id, true]]);
    assert.equal(processAlive(pid), false, `escaped process ${pid} outlived the lost task`);
    assert.equal(processAlive(running.agent_pid!), false);
  });

  it("a sub-task's supervisor inherits the parent's id but is left alone, with its children (control)", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'caesar-sweep-'));
    const script = path.join(dir, 'fake-supervisor.js');
    writeFileSync(script, "require('child_process').spawn(process.execPath,['-e','setInterval(()=>{},1000)'],{stdio:'ignore'});setInterval(()=>{},1000)");
    const env = { ...process.env, CAESAR_TASK_ID: 't_sweeptest' };
    // As delegate() starts them (with a V8 option before the script), and as `caesar run` starts one ahead of its task.
    const supervisors = [
      spawn(process.execPath, [script, 'supervise', dir], { env, stdio: 'ignore', detached: true }),
      spawn(process.execPath, ['--max-semi-space-size=1', script, 'supervise', dir], { env, stdio: 'ignore', detached: true }),
      spawn(process.execPath, ['--max-semi-space-size=1', script, 'standby'], { env, stdio: 'ignore', detached: true }),
      // The user's warm supervisor (issue 27), once it has taken a task: still `… idle` on its command line.
      spawn(process.execPath, ['--max-semi-space-size=1', script, 'idle'], { env, stdio: 'ignore', detached: true }),
    ];
    const plain = spawn(process.execPath, ['-e', 'setInterval(()=>{},1000)'], { env, stdio: 'ignore', detached: true });
    started.push(...supervisors.map((s) => s.pid!), plain.pid!);
    try {
      const found = await waitFor('the plain process to be listed', async () => {
        const pids = await taskProcesses('t_sweeptest');
        return pids.includes(plain.pid!) ? pids : undefined;
      });
      assert.deepEqual(found, [plain.pid], 'only the plain process: the supervisors and their children are skipped');
      assert.deepEqual(await taskProcesses('t_other'), []);
    } finally {
      for (const supervisor of supervisors) process.kill(-supervisor.pid!, 'SIGKILL'); // its group: the fake supervisor and its child
      plain.kill('SIGKILL');
    }
  });
});

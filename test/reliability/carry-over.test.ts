import { strict as assert } from 'node:assert';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { ACTIVE_STATUSES, taskPaths, TaskStateSchema, type TaskState } from '../../src/protocol';
import { readJsonFile } from '../../src/engine/store/atomic';
import { concludeLostTasks } from '../../src/engine/run/conclude';
import { requestCancel } from '../../src/engine/store/requests';
import { slotsDir } from '../../src/engine/store/slots';
import { buildCli, makeRepo, pidAlive, readFinished, waitFor, waitForFinished } from '../engine/runtime/helpers';
import { hostileAgent, startHostile } from './helpers';
import { needs } from '../support/needs';

async function stateOf(root: string, id: string): Promise<TaskState | undefined> {
  return readJsonFile(taskPaths(root, id).state, TaskStateSchema);
}

/** Where a `hold` agent looks for its release: in the repository, which a sandboxed agent sees (the host's /tmp it does not). */
function visibleReleaseDir(root: string): string {
  const dir = path.join(root, '.caesar', 'release');
  mkdirSync(dir, { recursive: true });
  return dir;
}

/** Item 8 of issue 13: the engine's own list of faults, carried over. */
describe('reliability: carried-over faults', function () {
  this.timeout(120_000);

  // Both ways an agent may run: unconfined its report lands in the task folder; sandboxed it stays in the agent's view
  // of the task folder (sandbox-view/) until the run ends, and gc takes it back from there.
  for (const sandboxed of [false, true]) {
    it(`supervisor killed -9 after a success report${sandboxed ? ' (sandboxed)' : ''}: gc concludes failed, keeps the agent's report, and \`finished\` agrees with report_status`, async function () {
      if (sandboxed) await needs(this, 'bubblewrap');
      const root = makeRepo();
      const { id } = await startHostile(root, { mode: 'report-then-hang' }, { sandbox: { mode: sandboxed ? 'required' : 'off' } });
      const reportAt = sandboxed ? path.join(taskPaths(root, id).dir, 'sandbox-view', 'report.json') : taskPaths(root, id).report;
      const running = await waitFor('the report and a running agent', async () => {
        const state = await stateOf(root, id);
        return state?.agent_pid && existsSync(reportAt) ? state : undefined;
      });
      process.kill(running.supervisor_pid!, 'SIGKILL');
      await waitFor('the supervisor to die', () => !pidAlive(running.supervisor_pid!));
      await concludeLostTasks(root, { dryRun: false });
      const { state, result, events } = await readFinished(root, id);
      assert.equal(state.status, 'failed');
      assert.equal(result.report.status, 'success', "the agent's own report is kept");
      assert.equal(result.report_source, 'file', JSON.stringify(result.report.findings));
      const finished = events.filter((e) => e.type === 'finished');
      assert.equal(finished.length, 1);
      assert.equal(finished[0]!.type === 'finished' && finished[0]!.status, state.report_status, '`finished` and report_status agree');
      assert.deepEqual(events.map((e) => e.seq), events.map((_e, i) => i));
    });
  }

  it('the observing process (caesar logs -f) killed -9 mid-run and restarted: the task goes on, the new one sees it all', async () => {
    const cli = await buildCli();
    const root = makeRepo();
    const releaseDir = visibleReleaseDir(root);
    const { id } = await startHostile(root, { mode: 'hold', releaseDir });
    const first = spawn(process.execPath, [cli, 'logs', id, '--follow'], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
    let seen = '';
    first.stdout.on('data', (d: Buffer) => (seen += d.toString()));
    await waitFor('the first observer to print `started`', () => seen.includes('started'));
    first.kill('SIGKILL');
    await new Promise((resolve) => first.once('close', resolve));
    assert.equal((await stateOf(root, id))?.status, 'running', 'the task does not depend on its observer');
    const second = spawn(process.execPath, [cli, 'logs', id, '--follow'], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
    let again = '';
    second.stdout.on('data', (d: Buffer) => (again += d.toString()));
    await waitFor('the second observer to print `started`', () => again.includes('started'));
    writeFileSync(path.join(releaseDir, id), '');
    const code = await new Promise<number | null>((resolve) => second.once('close', resolve));
    assert.equal(code, 0);
    const { state, events } = await readFinished(root, id);
    assert.equal(state.status, 'succeeded');
    for (const event of events) assert.ok(again.includes(`[${event.seq}]`), `the restarted observer printed [${event.seq}] ${event.type}`);
    assert.match(again, /finished/);
  });

  it('a cancel racing the finish: one outcome, told the same way everywhere (4 races)', async () => {
    const root = makeRepo();
    const outcomes: string[] = [];
    // The cancel lands as the agent finishes: when its report appears (it exits right after), then a little later.
    for (const delayMs of [0, 0, 20, 80]) {
      const { id } = await startHostile(root, { mode: 'finish-after', delayMs: 0 });
      const report = path.join(taskPaths(root, id).dir, 'report.json');
      await waitFor('the report', () => existsSync(report), 30_000, 2);
      await new Promise((resolve) => setTimeout(resolve, delayMs));
      const asked = await requestCancel(root, id);
      const { state, result, events } = await waitForFinished(root, id);
      outcomes.push(`${delayMs}ms: ${state.status}${asked.requested ? '' : ' (cancel refused: already ' + asked.status + ')'}`);
      assert.ok(['succeeded', 'cancelled'].includes(state.status), state.status);
      assert.equal(events.filter((e) => e.type === 'finished').length, 1);
      assert.equal(events.at(-1)?.type, 'finished');
      const finished = events.at(-1)!;
      assert.equal(finished.type === 'finished' && finished.status, state.report_status);
      assert.equal(result.report.status, state.report_status);
      if (!asked.requested) assert.equal(state.status, 'succeeded', 'a refused cancel leaves the outcome alone');
      if (state.status === 'cancelled') assert.ok(events.some((e) => e.type === 'error' && /cancelled/i.test(e.message)));
    }
    console.log(`      races: ${outcomes.join(', ')}`);
  });

  it('3 processes delegate 12 tasks with max_parallel 4: never more than 4 running, started in queue order', async () => {
    await buildCli();
    const root = makeRepo();
    const releaseDir = visibleReleaseDir(root);
    const script = path.join(mkdtempSync(path.join(tmpdir(), 'caesar-delegate-')), 'delegate-four.ts');
    writeFileSync(
      script,
      `const { delegate } = require(${JSON.stringify(path.resolve(__dirname, '../../src/engine/launch/delegate.ts'))});
       (async () => { for (let i = 0; i < 4; i++) { const t = await delegate({ root: ${JSON.stringify(root)}, workspace: ${JSON.stringify(root)},
         agent: 'hostile', generic_agent: ${JSON.stringify(hostileAgent)}, objective: 'hold ' + i, mode: 'write', isolation: 'worktree',
         network: true, timeout_ms: 120000, max_parallel: 4, context: JSON.stringify({ mode: 'hold', releaseDir: ${JSON.stringify(releaseDir)} }) },
         { env: { CAESAR_KILL_GRACE_MS: '500' } }); console.log(t.id); } })();`,
    );
    const ids = (
      await Promise.all(
        [0, 1, 2].map(
          () =>
            new Promise<string[]>((resolve, reject) => {
              const child = spawn(process.execPath, ['-r', 'tsx/cjs', script], { stdio: ['ignore', 'pipe', 'inherit'] });
              let out = '';
              child.stdout.on('data', (d: Buffer) => (out += d.toString()));
              child.once('close', (code) => (code === 0 ? resolve(out.trim().split('\n')) : reject(new Error(`delegating process exit ${code}`))));
            }),
        ),
      )
    ).flat();
    assert.equal(ids.length, 12);
    const states = async () => Promise.all(ids.map(async (id) => (await stateOf(root, id))!));
    const queue = path.join(slotsDir(root), 'queue');
    const queued = () =>
      // The queue folder appears when the first supervisor asks for a slot: until then nobody is queued.
      (existsSync(queue) ? readdirSync(queue) : [])
        // Tickets only, as the slots read them: createExclusive's `.<name>.<uuid>.tmp` files come and go beside them.
        .filter((f) => f.endsWith('.json') && !f.startsWith('.'))
        .sort()
        .map((f) => {
          try {
            return (JSON.parse(readFileSync(path.join(queue, f), 'utf8')) as { label?: string }).label ?? '?';
          } catch {
            return '?'; // being written, or removed under us: not settled yet
          }
        });
    let maxRunning = 0;
    // Release one running task at a time: the task that starts next must be the head of the queue.
    for (let round = 0; round < 12; round++) {
      const { running, waiting } = await waitFor(
        `round ${round}: the running tasks and the queue to settle`,
        async () => {
          const all = await states();
          const running = all.filter((s) => s.status === 'running' && s.agent_pid).map((s) => s.id);
          const pending = all.filter((s) => s.status === 'pending').map((s) => s.id);
          const order = queued();
          const settled = !order.includes('?') && running.length === Math.min(4, 12 - round) && order.length === pending.length && pending.every((id) => order.includes(id));
          return settled ? { running, waiting: order } : undefined;
        },
        60_000,
      );
      maxRunning = Math.max(maxRunning, running.length);
      assert.ok(running.length <= 4, `${running.length} running`);
      const victim = running[0]!;
      writeFileSync(path.join(releaseDir, victim), '');
      await waitFor(`${victim} to end`, async () => !ACTIVE_STATUSES.includes((await stateOf(root, victim))!.status));
      if (waiting.length) {
        const next = waiting[0]!;
        const started = await waitFor(`the next task to start`, async () => {
          const all = await states();
          const newcomers = all.filter((s) => s.status === 'running' && !running.includes(s.id)).map((s) => s.id);
          return newcomers.length ? newcomers : undefined;
        });
        if (started.length !== 1 || started[0] !== next) {
          const phases = (await states()).map((s) => `${s.id} ${s.status} ${s.phase ?? ''} ${s.started_at ?? ''}`).join('\n');
          assert.fail(`FIFO: the head of the queue starts, and only it: expected ${next}, got ${started.join(', ')}; queue was ${waiting.join(', ')}\n${phases}`);
        }
      }
    }
    const all = await states();
    assert.ok(all.every((s) => s.status === 'succeeded'), all.map((s) => s.status).join(','));
    // The record agrees: at no instant were more than 4 of the 12 between started_at and ended_at.
    const marks = all.flatMap((s) => [
      { at: Date.parse(s.started_at!), d: 1 },
      { at: Date.parse(s.ended_at!), d: -1 },
    ]);
    marks.sort((a, b) => a.at - b.at || a.d - b.d);
    let alive = 0;
    let peak = 0;
    for (const m of marks) peak = Math.max(peak, (alive += m.d));
    assert.ok(peak <= 4, `peak ${peak}`);
    assert.equal(maxRunning, 4);
  });
});

import { strict as assert } from 'node:assert';
import { existsSync, mkdirSync, readFileSync, readdirSync, watch, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import * as path from 'node:path';
import { requestCancel } from '../../../src/engine/store/requests';
import { slotsDir } from '../../../src/engine/store/slots';
import { acquireWorkspaceWriter, WorkspaceBusyError } from '../../../src/engine/store/writer-lock';
import { stateDir } from '../../../src/protocol';
import { makeRepo, startFixture, waitFor, waitForFinished } from './helpers';
import { TaskStore } from '../../../src/engine/store/store';

/** state.json when it holds a final status; undefined while active or mid-rename. Read synchronously: no await between
 * seeing the final state and looking at the lease and slot folders. */
function readStateIfFinal(file: string): { status: string } | undefined {
  try {
    const state = JSON.parse(readFileSync(file, 'utf8')) as { status: string };
    return ['pending', 'running'].includes(state.status) ? undefined : state;
  } catch {
    return undefined;
  }
}

/**
 * Watches the task folder and, in the very callback where state.json is first seen final, takes `look()` — so the
 * look happens within a millisecond or two of the final state's rename, not a polling period later.
 */
function firstSightOfFinalState<T>(taskDir: string, look: () => T): Promise<T> {
  return new Promise((resolve, reject) => {
    const check = () => {
      if (!readStateIfFinal(path.join(taskDir, 'state.json'))) return;
      const seen = look();
      watcher.close();
      clearInterval(safety);
      resolve(seen);
    };
    const watcher = watch(taskDir, check);
    watcher.on('error', reject);
    const safety = setInterval(check, 200);
    check();
  });
}

const leases = (root: string) => {
  const dir = path.join(stateDir(root), 'workspace-writers');
  return existsSync(dir) ? readdirSync(dir) : [];
};

describe('engine: exclusive in-place writers (reference §2.3.5, §2.13)', () => {
  it('a second in-place writer fails at once naming the first; the lease is released when the first ends', async function () {
    this.timeout(60_000);
    const repo = makeRepo();
    const first = await startFixture(repo, { mode: 'hang' }, { isolation: 'inplace', allow_inplace_write: true });
    await waitFor('first task running', async () => ((await new TaskStore(repo).get(first.id))?.state.status === 'running' ? true : undefined));
    assert.equal(leases(repo).length, 1);

    const second = await startFixture(repo, { mode: 'success' }, { isolation: 'inplace', allow_inplace_write: true });
    const done = await waitForFinished(repo, second.id);
    assert.equal(done.state.status, 'failed');
    assert.match(done.state.error ?? '', new RegExp(`Task ${first.id} \\(pid \\d+\\) is already writing in place`));
    assert.ok(!existsSync(path.join(repo, 'fixture.txt')), 'the refused writer touched nothing');

    await requestCancel(repo, first.id);
    await waitForFinished(repo, first.id);
    assert.deepEqual(leases(repo), [], 'released at the end');

    const third = await startFixture(repo, { mode: 'success' }, { isolation: 'inplace', allow_inplace_write: true });
    assert.equal((await waitForFinished(repo, third.id)).state.status, 'succeeded', 'free again after the first ended');
  });

  // The contract observers rely on: a task seen in a final state — the `finished` event, or state.json — holds no
  // lease and no slot any more (the supervisor releases both before it publishes the final state). Checked at the
  // very moment each signal becomes visible, over several tasks, since a wrong order shows up as a race.
  it('a task seen finished holds no lease and no slot', async function () {
    this.timeout(120_000);
    const repo = makeRepo();
    const slots = () => (existsSync(slotsDir(repo)) ? readdirSync(slotsDir(repo)).filter((n) => n.endsWith('.json')) : []);
    for (let i = 0; i < 6; i++) {
      const { id, taskDir } = await startFixture(repo, { mode: 'success' }, { isolation: 'inplace', allow_inplace_write: true });
      const seenAtFinalState = await firstSightOfFinalState(taskDir, () => ({ leases: leases(repo), slots: slots() }));
      assert.deepEqual(seenAtFinalState, { leases: [], slots: [] }, `task ${i}: final state published while still holding resources`);
      await waitForFinished(repo, id);
      assert.deepEqual({ leases: leases(repo), slots: slots() }, { leases: [], slots: [] }, `task ${i}: \`finished\` seen while still holding resources`);
    }
  });

  it('reclaims a lease whose holder died, and refuses one held by a live process', async () => {
    const root = makeRepo();
    const dir = path.join(stateDir(root), 'workspace-writers');
    const first = await acquireWorkspaceWriter(root, root, 't_live');
    // The same workspace reached through another path spelling is the same lease.
    await assert.rejects(acquireWorkspaceWriter(root, `${root}/./`, 't_alias'), WorkspaceBusyError);
    await assert.rejects(acquireWorkspaceWriter(root, root, 't_other'), (err: Error) => err instanceof WorkspaceBusyError && /Task t_live \(pid \d+\)/.test(err.message));
    await first.release();
    assert.deepEqual(readdirSync(dir), []);

    mkdirSync(dir, { recursive: true });
    const [name] = await (async () => {
      const lease = await acquireWorkspaceWriter(root, root, 't_probe');
      const names = readdirSync(dir);
      await lease.release();
      return names;
    })();
    writeFileSync(path.join(dir, name!), JSON.stringify({ task_id: 't_dead', pid: 2 ** 22 + 4321, host: hostname(), token: 'x', acquired_at: '2026-01-01T00:00:00Z' }));
    const reclaimed = await acquireWorkspaceWriter(root, root, 't_new');
    await reclaimed.release();
    assert.deepEqual(readdirSync(dir), []);
  });

  it('a stale lease left by a dead task does not block a new in-place run', async function () {
    this.timeout(30_000);
    const repo = makeRepo();
    const lease = await acquireWorkspaceWriter(repo, repo, 't_probe');
    const [name] = leases(repo);
    await lease.release();
    const dir = path.join(stateDir(repo), 'workspace-writers');
    writeFileSync(path.join(dir, name!), JSON.stringify({ task_id: 't_gone', pid: 2 ** 22 + 99, host: hostname(), token: 'y', acquired_at: '2026-01-01T00:00:00Z' }));
    const { id } = await startFixture(repo, { mode: 'success' }, { isolation: 'inplace', allow_inplace_write: true });
    const done = await waitForFinished(repo, id);
    assert.equal(done.state.status, 'succeeded');
    assert.deepEqual(leases(repo), []);
  });
});

import { strict as assert } from 'node:assert';
import { cpSync, existsSync, readdirSync, rmSync, symlinkSync } from 'node:fs';
import * as path from 'node:path';
import { tasksDir } from '../../../src/protocol';
import { RequestError, applyTaskById, delegateTask, discardTask, removeTask, requireTaskView } from '../../../src/engine/tasks';
import { buildCli, git, makeRepo, waitForFinished } from '../runtime/helpers';

/** Remove a finished task for good (the Tasks view's Remove and Clear Finished), with real tasks of the demo agent. */
describe('engine/tasks: removeTask', function () {
  this.timeout(60_000);
  before(async () => {
    await buildCli();
  });
  const env = { ...process.env, CAESAR_DEMO_DELAY_MS: '0' };

  async function finishedTask(repo: string, objective = 'Write NOTES.md'): Promise<string> {
    const { id } = await delegateTask(repo, { objective, agent: 'demo', isolation: 'worktree' }, { env });
    const done = await waitForFinished(repo, id);
    assert.equal(done.state.status, 'succeeded', done.state.error);
    return id;
  }

  it('an applied task: its worktree, branch and folder go; the applied change stays in the workspace', async () => {
    const repo = makeRepo();
    const id = await finishedTask(repo);
    await applyTaskById(repo, id);
    const { state } = await requireTaskView(repo, id);
    const outcome = await removeTask(repo, id);
    assert.equal(outcome.worktree_removed, state.worktree);
    assert.ok(!existsSync(path.join(tasksDir(repo), id)), 'the task folder is gone');
    assert.ok(!existsSync(state.worktree!), 'the worktree is gone');
    assert.ok(!git(repo, 'worktree', 'list').includes(id));
    assert.ok(!git(repo, 'branch', '--list').includes(id), 'the branch is gone');
    assert.ok(existsSync(path.join(repo, 'NOTES.md')), 'the applied change stays');
    assert.deepEqual(readdirSync(tasksDir(repo)).filter((n) => n.startsWith('.removing')), []);
  });

  it('a discarded task goes; unapplied work is refused unless discarding is asked for', async () => {
    const repo = makeRepo();
    const discarded = await finishedTask(repo);
    await discardTask({ root: repo, state: (await requireTaskView(repo, discarded)).state });
    await removeTask(repo, discarded);
    assert.ok(!existsSync(path.join(tasksDir(repo), discarded)));

    const unapplied = await finishedTask(repo, 'Write OTHER.md');
    await assert.rejects(removeTask(repo, unapplied), (err: unknown) => err instanceof RequestError && /never applied/.test(err.message));
    assert.ok(existsSync(path.join(tasksDir(repo), unapplied)), 'nothing removed');
    const outcome = await removeTask(repo, unapplied, { discardUnapplied: true });
    assert.ok(outcome.worktree_removed && !existsSync(outcome.worktree_removed));
    assert.ok(!existsSync(path.join(tasksDir(repo), unapplied)));
  });

  it('refuses a malformed id and a task folder that is a link (nothing outside is touched)', async () => {
    const repo = makeRepo();
    await assert.rejects(removeTask(repo, '../../etc'), (err: unknown) => err instanceof RequestError && err.code === 'invalid_id');
    const id = await finishedTask(repo);
    await discardTask({ root: repo, state: (await requireTaskView(repo, id)).state });
    // The folder replaced by a link to a folder elsewhere holding a copy of the records.
    const outside = path.join(path.dirname(repo), `outside-${path.basename(repo)}`);
    const folder = path.join(tasksDir(repo), id);
    cpSync(folder, outside, { recursive: true });
    rmSync(folder, { recursive: true });
    symlinkSync(outside, folder);
    await assert.rejects(removeTask(repo, id));
    assert.ok(existsSync(path.join(outside, 'state.json')), 'the link target is untouched');
  });
});

import { strict as assert } from 'node:assert';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { taskPaths } from '../../../src/protocol';
import { landTasks, requireTaskView } from '../../../src/engine/tasks';
import { taskLifecycle } from '../../../src/common/lifecycle';
import { finishedTask, git, makeRepo } from '../runtime/helpers';

/**
 * Land tells the truth (issue 33, item 5): a task whose change is already in what the checkout holds — the same lines
 * written by a task landed before it, or committed since — is "already landed", never "the checkout changed" (its
 * replay is empty, and an empty patch was what git apply refused).
 */
describe('engine/tasks: landing a change the checkout already holds', function () {
  this.timeout(120_000);
  const NOTES = '# Notes\n\nShip on Friday.\n';

  it('the second of two tasks that wrote the same file is already landed, recorded as applied, and the queue goes on', async () => {
    const root = makeRepo({ 'README.md': 'hello\n' });
    const first = await finishedTask(root, { 'NOTES.md': NOTES });
    const second = await finishedTask(root, { 'NOTES.md': NOTES });
    const third = await finishedTask(root, { 'other.txt': 'more\n' });

    const outcome = await landTasks(root, [first, second, third]);
    assert.deepEqual(outcome.tasks.map((t) => t.status), ['landed', 'already_landed', 'landed'], JSON.stringify(outcome.tasks, null, 1));
    assert.equal(outcome.stopped_at, undefined);
    assert.deepEqual(outcome.landed, [first, second, third]);
    const contained = outcome.tasks[1]!;
    assert.match(contained.message, /^Already landed: every change it makes \(1 file\) is in what the tasks before it in this queue landed; nothing was left to write\. Recorded as applied\.$/);
    assert.doesNotMatch(outcome.message, /checkout changed/);
    assert.match(outcome.message, /^Landed 3 tasks \(1 of them was already in the checkout\) onto /);
    assert.equal(readFileSync(path.join(root, 'NOTES.md'), 'utf8'), NOTES);
    assert.equal(readFileSync(path.join(root, 'other.txt'), 'utf8'), 'more\n');
    // Its work is in the checkout: recorded as applied, so nothing offers to apply or land it again.
    assert.ok(existsSync(taskPaths(root, second).applied));
    // Every surface reads it as landed (the lifecycle), with nothing left to apply.
    for (const id of [first, second]) assert.equal(taskLifecycle(await requireTaskView(root, id)).label, 'landed');
    const again = await landTasks(root, [second]);
    assert.equal(again.tasks[0]!.reason, 'already_applied');
  });

  it('a task whose change was committed since its base is already landed, and says it is in HEAD', async () => {
    const root = makeRepo({ 'README.md': 'hello\n' });
    const task = await finishedTask(root, { 'NOTES.md': NOTES });
    writeFileSync(path.join(root, 'NOTES.md'), NOTES);
    git(root, 'add', 'NOTES.md');
    git(root, 'commit', '-qm', 'the user wrote the same notes');

    const outcome = await landTasks(root, [task]);
    assert.equal(outcome.tasks[0]!.status, 'already_landed', outcome.message);
    assert.match(outcome.tasks[0]!.message, /is in your checkout's HEAD already/);
    assert.equal(git(root, 'status', '--porcelain'), '');
  });
});

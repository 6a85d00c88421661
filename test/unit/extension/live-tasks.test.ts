import { strict as assert } from 'node:assert';
import { appendFileSync, rmSync } from 'node:fs';
import type * as vscode from 'vscode';
import { TaskStore } from '../../../src/engine/store/store';
import { LiveTasks, type EventsRead } from '../../../src/extension/tasks/liveTasks';
import { taskPaths } from '../../../src/protocol';
import { eventLine, tempRoot, writeState } from '../../engine/store/helpers';
import { waitFor } from '../../support/wait';

// LiveTasks imports only vscode's types: it runs here on real task folders, watched for real.
const log = { info: () => undefined, warn: () => undefined, error: () => undefined, debug: () => undefined } as unknown as vscode.LogOutputChannel;

describe("extension: LiveTasks, the one source of the window's task summaries", function () {
  this.timeout(20_000);
  let live: LiveTasks | undefined;
  afterEach(() => live?.dispose());

  it("lists every folder's tasks, tells which root each lives in, and sees tasks appear and go in any of them", async () => {
    const [a, b] = [tempRoot(), tempRoot()];
    writeState(a, 'task-a1');
    writeState(b, 'task-b1');
    live = new LiveTasks([{ root: a, name: 'a', store: new TaskStore(a) }, { root: b, name: 'b', store: new TaskStore(b) }], log);
    await live.ready();
    assert.deepEqual(live.list().map((s) => s.id).sort(), ['task-a1', 'task-b1']);
    assert.equal(live.rootOf('task-b1'), b);
    assert.deepEqual(live.list(a).map((s) => s.id), ['task-a1']);
    const changes: string[][] = [];
    live.onDidChange((ids) => changes.push(ids));
    writeState(b, 'task-b2');
    await waitFor('task-b2 listed', () => live!.get('task-b2'));
    assert.equal(live.rootOf('task-b2'), b);
    rmSync(taskPaths(b, 'task-b1').dir, { recursive: true });
    await waitFor('task-b1 gone', () => !live!.get('task-b1'));
    assert.ok(changes.flat().includes('task-b2') && changes.flat().includes('task-b1'));
    assert.ok(live.get('task-a1'), "the other folder's task stays");
  });

  it('nests a task under the parent that delegated it; an orphan (parent gone) has no parent', async () => {
    const root = tempRoot();
    writeState(root, 'parent-1');
    writeState(root, 'child-1', { parent_task_id: 'parent-1' });
    writeState(root, 'child-2', { parent_task_id: 'parent-1' });
    writeState(root, 'orphan-1', { parent_task_id: 'gone-parent' });
    live = new LiveTasks([{ root, name: 'r', store: new TaskStore(root) }], log);
    await live.ready();
    assert.equal(live.parentOf('child-1'), 'parent-1');
    assert.deepEqual(live.subtasksOf('parent-1').map((s) => s.id).sort(), ['child-1', 'child-2']);
    assert.equal(live.parentOf('orphan-1'), undefined);
    assert.equal(live.parentOf('parent-1'), undefined);
  });

  it("follows a task's events once, however many readers ask, and offers the raw batches to subscribers", async () => {
    const root = tempRoot();
    const id = 'followed-1';
    writeState(root, id);
    appendFileSync(taskPaths(root, id).events, eventLine(root, id, 1, { type: 'tool_use', tool: 'bash', id: 'c1', input_summary: 'ls', status: 'started' }));
    const store = new TaskStore(root);
    let follows = 0;
    const follow = store.follow.bind(store);
    store.follow = (...args: Parameters<TaskStore['follow']>) => {
      follows++;
      return follow(...args);
    };
    live = new LiveTasks([{ root, name: 'r', store }], log);
    await live.ready();
    const batches: EventsRead[] = [];
    live.onDidReadEvents((batch) => batches.push(batch));
    const [first, second] = await Promise.all([live.activity(id), live.activity(id)]);
    assert.equal(first, second);
    assert.equal(first!.toolCalls.length, 1);
    appendFileSync(taskPaths(root, id).events, eventLine(root, id, 2, { type: 'tool_use', tool: 'bash', id: 'c1', status: 'succeeded' }));
    await waitFor('the end of the call folded in', () => first!.toolCalls[0]?.status === 'succeeded');
    await live.activity(id);
    assert.equal(follows, 1, 'one follower per task');
    assert.deepEqual(batches.flatMap((b) => b.events.map((e) => e.seq)), [1, 2]);
    assert.ok(batches.every((b) => b.taskId === id));
  });
});

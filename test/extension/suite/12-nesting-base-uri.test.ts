import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as vscode from 'vscode';
import { caesar, find, handWrittenTask } from './helpers';

const finished = (objective: string, extra: Record<string, unknown> = {}) => {
  const t0 = new Date(Date.now() - 10_000).toISOString();
  return { status: 'succeeded', objective, created_at: t0, started_at: t0, ended_at: new Date().toISOString(), ...extra };
};

describe('Tasks tree nesting, and the base side of diffs served from its URI alone', () => {
  it('nests a task under the task that delegated it (the parent counts it); an orphan stays at the top', async () => {
    const api = await caesar();
    const parent = 'nest-parent-1';
    const child = 'nest-child-1';
    const orphan = 'nest-orphan-1';
    handWrittenTask(api.root, parent, finished('Plan the refactoring'));
    handWrittenTask(api.root, child, finished('Rename the helpers', { parent_task_id: parent, depth: 1 }));
    handWrittenTask(api.root, orphan, finished('A sub-task whose parent is gone', { parent_task_id: 'nest-gone-parent', depth: 1 }));
    const tree = await api.waitForTree(
      (t) => !!find(t, orphan) && (find(t, parent)?.children.some((c) => c.id === child) ?? false),
      15_000,
      [parent],
    );
    assert.equal(find(tree, child), undefined, 'the sub-task is not at the top level');
    assert.match(find(tree, parent)!.description, /· 1 subtask$/);
    const nested = find(tree, parent)!.children.find((c) => c.id === child)!;
    assert.equal(nested.label, 'Rename the helpers');
    assert.equal(nested.icon, 'pass');
    assert.equal(find(tree, orphan)!.label, 'A sub-task whose parent is gone');

    // Revealing a nested task walks up through its parent (getParent): the view can select it.
    await api.expandTask(child);
  });

  it('serves a base version from the URI alone: a task the list does not know, a commit and a root in the query', async () => {
    const api = await caesar();
    const head = spawnSync('git', ['rev-parse', 'HEAD'], { cwd: api.root, encoding: 'utf8' }).stdout.trim();
    assert.match(head, /^[0-9a-f]{40}$/);
    const taskId = 'never-listed-task-1';
    assert.equal((await api.treeSnapshot()).some((t) => t.id === taskId), false);
    const uri = (query: Record<string, string>, file = 'README.md') =>
      vscode.Uri.from({ scheme: 'caesar-base', path: `/${file}`, query: JSON.stringify(query) });
    const doc = await vscode.workspace.openTextDocument(uri({ task: taskId, commit: head, root: api.root }));
    assert.match(doc.getText(), /^# Test workspace\n/);
    assert.equal(doc.languageId, 'markdown', 'the path is the file, so the editor knows its language');

    const created = await vscode.workspace.openTextDocument(uri({ task: taskId, commit: head, root: api.root }, 'not/in/base.txt'));
    assert.equal(created.getText(), '', 'a file absent from the base is empty');
    // What git must never see: an option for a commit, a folder that is not this window's.
    const option = await vscode.workspace.openTextDocument(uri({ task: taskId, commit: '--output=/tmp/x', root: api.root }, 'a.txt'));
    assert.match(option.getText(), /refused.*base_ref/);
    const elsewhere = await vscode.workspace.openTextDocument(uri({ task: taskId, commit: head, root: '/' }, 'b.txt'));
    assert.match(elsewhere.getText(), /not a folder of this window/);
  });
});

import * as assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { TreeItemSnapshot } from '../../../src/extension/api';
import { caesar, record, rowsOf, runInTerminal, workspaceDir } from './helpers';

const XSS = '<img src=x onerror=alert(1)>';
const byObjective = (tree: TreeItemSnapshot[], objective: string) => tree.find((t) => t.label === objective);

describe('Tasks started from a terminal with `caesar run`', () => {
  afterEach(async () => {
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
  });

  it('a demo task appears while it runs, shows live tool calls while running, then its change opens in a diff', async function () {
    this.timeout(90_000);
    const api = await caesar();
    const objective = `Demo from a terminal: append to README.md (${Date.now()})`;
    const stateDir = process.env.CAESAR_TEST_STATE_DIR ?? workspaceDir();
    const exited = runInTerminal(
      'caesar demo',
      `caesar run --agent demo --isolation worktree ${JSON.stringify(objective)} --json > ${JSON.stringify(path.join(stateDir, 'demo-run.json'))}`,
      { CAESAR_DEMO_DELAY_MS: '700' },
    );
    let tree = await api.waitForTree((t) => !!byObjective(t, objective), 20_000);
    const id = byObjective(tree, objective)!.id;
    const created = Date.parse((await api.store.summary(id))!.state.created_at);
    // A figure, not a bound (speed is bench/'s question). What must hold is that the tree showed the task while it was
    // still running, live, not once it had finished: the first tree that had it shows it active.
    record('demoTaskAppearsAfterCreationMs', Date.now() - created);
    const firstSeen = byObjective(tree, objective)!;
    assert.ok(!['pass', 'error', 'circle-slash'].includes(firstSeen.icon), `first shown already ended: ${firstSeen.icon} ${firstSeen.description}`);

    // Live children: a tool call spins while the task runs.
    tree = await api.waitForTree(
      (t) => { const task = t.find((x) => x.id === id); return !!task && task.icon === 'sync~spin' && rowsOf(task).some((c) => c.contextValue.startsWith('tool.') && c.icon === 'loading~spin'); },
      30_000,
    );
    const spinning = rowsOf(tree.find((x) => x.id === id)!).find((c) => c.contextValue.startsWith('tool.') && c.icon === 'loading~spin')!;
    assert.match(spinning.description, /running/);
    assert.match(api.statusSnapshot().text, /\$\(sync~spin\) [1-9]/);

    tree = await api.waitForTree((t) => t.find((x) => x.id === id)?.icon === 'pass' && t.find((x) => x.id === id)!.children.some((c) => c.label === 'README.md'), 60_000, [id]);
    const task = tree.find((x) => x.id === id)!;
    // A real task ends with its sandbox mark (18-sandbox-mark.test.ts), whichever this machine gives it.
    assert.match(task.description, /^demo · succeeded · \d+s · (not )?sandboxed$/);
    const readme = task.children.find((c) => c.label === 'README.md')!;
    assert.equal(readme.description, '+1 −0 · modified');
    const tools = rowsOf(task).filter((c) => c.contextValue.startsWith('tool.'));
    assert.deepEqual(tools.map((c) => c.label), ['list', 'edit', 'check']);
    assert.ok(tools.every((c) => c.icon === 'tools' && !/running/.test(c.description)), JSON.stringify(tools));
    assert.equal(await exited, 0, 'caesar run exited 0');
    const printed = JSON.parse(readFileSync(path.join(stateDir, 'demo-run.json'), 'utf8')) as { task_id: string; status: string };
    assert.deepEqual([printed.task_id, printed.status], [id, 'succeeded']);

    // The diff: base version (git show base_ref:README.md) on the left, the worktree's on the right.
    await vscode.commands.executeCommand('caesar.openChange', id, 'README.md');
    const input = vscode.window.tabGroups.activeTabGroup.activeTab?.input;
    assert.ok(input instanceof vscode.TabInputTextDiff, 'a diff editor is active');
    assert.equal(input.original.scheme, 'caesar-base');
    const left = await vscode.workspace.openTextDocument(input.original);
    assert.equal(left.getText(), readFileSync(path.join(workspaceDir(), 'README.md'), 'utf8'));
    const right = await vscode.workspace.openTextDocument(input.modified);
    assert.ok(right.getText().startsWith(left.getText()) && right.getText().length > left.getText().length);
    assert.ok(input.modified.fsPath.includes(`${path.sep}.caesar${path.sep}wt${path.sep}${id}`), input.modified.fsPath);
  });

  it('a fixture (template) agent task: failed tool and error children, files with counts, and a live timeline that shows HTML as text', async function () {
    this.timeout(90_000);
    const api = await caesar();
    const objective = `Fixture from a terminal (${Date.now()})`;
    const exited = runInTerminal('caesar fixture', `caesar run --agent fixture --isolation worktree ${JSON.stringify(objective)}`, {
      FIXTURE_SLOW_MS: '4000',
    });
    let tree = await api.waitForTree((t) => !!byObjective(t, objective), 20_000);
    const id = byObjective(tree, objective)!.id;
    // Open the timeline while the task runs: it must receive the events that come after.
    await vscode.commands.executeCommand('caesar.openTimeline', id);
    tree = await api.waitForTree((t) => rowsOf(t.find((x) => x.id === id) ?? { children: [] } as unknown as TreeItemSnapshot).some((c) => c.label === 'slow_step' && c.icon === 'loading~spin'), 30_000);
    const during = await api.timeline.waitForStats(id, (s) => s.received > 3, 30_000);
    assert.ok(!during.recentLabels.some((l) => l.startsWith('Finished')), 'the timeline had events before the task finished');

    tree = await api.waitForTree((t) => t.find((x) => x.id === id)?.icon === 'pass' && t.find((x) => x.id === id)!.children.some((c) => c.label === 'fixture-notes.md'), 60_000, [id]);
    const task = tree.find((x) => x.id === id)!;
    assert.match(task.description, /^fixture · succeeded · \d+s · 1\.5k tok · \$0\.012 · (not )?sandboxed$/);
    const child = (label: string) => rowsOf(task).find((c) => c.label === label);
    assert.equal(child('shell')?.icon, 'error');
    assert.match(child('shell')!.description, /^npm test · failed · /);
    assert.equal(child('read')?.icon, 'tools');
    assert.equal(child('lint: 2 warnings <b>not bold</b>')?.icon, 'warning');
    assert.equal(child('fixture-notes.md')?.description, '+4 −0 · created');
    assert.equal(await exited, 0);

    const lines = readFileSync(path.join(api.root, '.caesar', 'tasks', id, 'events.jsonl'), 'utf8').trim().split('\n').length;
    const stats = await api.timeline.waitForStats(id, (s) => s.received === lines, 20_000);
    assert.ok(stats.recentLabels.includes(`Agent says ${XSS} and <script>alert(2)</script>`), JSON.stringify(stats.recentLabels));
    assert.ok(stats.recentLabels.some((l) => l.startsWith('Finished: success')));
  });
});

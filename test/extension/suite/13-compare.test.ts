import * as assert from 'node:assert/strict';
import { readFileSync, rmSync } from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { CaesarApi, TreeItemSnapshot } from '../../../src/extension/api';
import type { CompareShown } from '../../../src/extension/compare';
import { acceptQuickInput, caesar, quickInputSettled, runInTerminal, workspaceDir } from './helpers';

// Compare Tasks on two real tasks of one objective (the fixture agent, each in its worktree, writing different
// files); the document's figures are checked against the tasks' own result.json, and Compare File opens the two
// worktree versions in the diff editor.

const FAST = { FIXTURE_DELAY_MS: '20', FIXTURE_SLOW_MS: '20' };

async function run(name: string, objective: string, files: Record<string, string>): Promise<void> {
  const code = await runInTerminal(`caesar ${name}`, `caesar run --agent fixture --isolation worktree ${JSON.stringify(objective)}`, { ...FAST, FIXTURE_FILES: JSON.stringify(files) });
  assert.equal(code, 0, `caesar run (${name}) exited 0`);
}

interface ResultFile {
  diff: { files: { path: string; additions: number; deletions: number }[] };
}

describe('Compare: tasks of one objective side by side', () => {
  let api: CaesarApi;
  before(async () => {
    api = await caesar();
  });
  after(async () => {
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    for (const rel of ['cmp', 'fixture-notes.md']) rmSync(path.join(workspaceDir(), rel), { recursive: true, force: true });
  });

  it('shows agent, status, duration, usage, files and +/- lines of each task from its records, and diffs two tasks’ versions of a file', async function () {
    this.timeout(180_000);
    const objective = `Compare test (${Date.now()})`;
    await run('compare-a', objective, { 'cmp/a.txt': 'first\nsecond\n' });
    await run('compare-b', objective, { 'cmp/a.txt': 'uno\n', 'cmp/b.txt': 'b\nb\nb\n' });
    // Two runs of one objective: the second is numbered in the tree, as re-runs are.
    const same = (x: TreeItemSnapshot) => x.label === objective || x.label === `${objective} #2`;
    const tree = await api.waitForTree((t: TreeItemSnapshot[]) => t.filter((x) => same(x) && x.icon === 'pass').length === 2, 60_000);
    const ids = tree.filter(same).map((x) => x.id);
    assert.deepEqual(tree.filter(same).map((x) => x.label).sort(), [objective, `${objective} #2`].sort());

    const shown = (await vscode.commands.executeCommand('caesar.compareTasks', ids[0])) as CompareShown;
    assert.deepEqual([...shown.ids].sort(), [...ids].sort(), 'one task brings every task of its objective');
    assert.equal(vscode.window.activeTextEditor?.document.uri.toString(), shown.uri.toString(), 'the comparison is the active editor');
    const text = shown.content;
    assert.match(text, new RegExp(`^\\| Task \\| ${shown.ids[0]} \\| ${shown.ids[1]} \\|$`, 'm'), 'one column per task');
    assert.match(text, /^\| Agent \| fixture \| fixture \|$/m);
    assert.match(text, /^\| Status \| succeeded \| succeeded \|$/m);
    assert.match(text, /^\| Duration \| \d+s \| \d+s \|$/m);
    for (const id of shown.ids) {
      const result = JSON.parse(readFileSync(path.join(api.root, '.caesar', 'tasks', id, 'result.json'), 'utf8')) as ResultFile;
      const adds = result.diff.files.reduce((n, f) => n + f.additions, 0);
      const dels = result.diff.files.reduce((n, f) => n + f.deletions, 0);
      assert.ok(text.includes(`+${adds} −${dels}`), `task ${id}'s +${adds} −${dels} from result.json is shown`);
    }
    const column = (id: string) => shown.ids.indexOf(id) + 1;
    const aRow = text.split('\n').find((l) => l.startsWith('| cmp/a.txt |'))!.split(' | ');
    const bRow = text.split('\n').find((l) => l.startsWith('| cmp/b.txt |'))!.split(' | ');
    const taskSecond = ids.find((id) => readFileSync(path.join(api.root, '.caesar', 'tasks', id, 'result.json'), 'utf8').includes('cmp/b.txt'))!;
    const taskFirst = ids.find((id) => id !== taskSecond)!;
    assert.match(aRow[column(taskFirst)]!, /^\+2 −0/, 'the first task wrote two lines of cmp/a.txt');
    assert.match(aRow[column(taskSecond)]!, /^\+1 −0/);
    assert.match(bRow[column(taskFirst)]!, /^—/, 'the first task did not touch cmp/b.txt');

    // Selected tasks (the tree's multi-selection) are compared as given.
    const selected = (await vscode.commands.executeCommand('caesar.compareTasks', [taskSecond, taskFirst])) as CompareShown;
    assert.deepEqual(selected.ids, [taskSecond, taskFirst]);

    // From the palette: the tasks first (named by title, the re-run numbered), then a file they changed; titled pickers.
    const fromPalette = vscode.commands.executeCommand('caesar.compareFile');
    const tasksPick = await api.pickers.waitFor(/^Caesar: Compare File Across Tasks \(1\/2\): tasks$/, 10_000);
    const rows = (tasksPick.input as vscode.QuickPick<vscode.QuickPickItem & { id?: string }>).items;
    assert.deepEqual(rows.map((r) => r.label).sort(), [objective, `${objective} #2`].sort(), 'no raw ids');
    await quickInputSettled(); // the workbench's echo of what it drew comes before the test's own choice
    (tasksPick.input as vscode.QuickPick<vscode.QuickPickItem>).selectedItems = rows;
    await acceptQuickInput();
    const filePick = await api.pickers.waitFor(/^Caesar: Compare File Across Tasks \(2\/2\): file$/, 10_000);
    const fileRows = (filePick.input as vscode.QuickPick<vscode.QuickPickItem>).items;
    assert.deepEqual(fileRows.map((r) => [r.label, r.description]), [['cmp/a.txt', 'changed by both'], ['cmp/b.txt', 'changed by one'], ['fixture-notes.md', 'changed by both']]);
    await quickInputSettled(); // the workbench's echo of the first active item, before the test picks another
    (filePick.input as vscode.QuickPick<vscode.QuickPickItem>).activeItems = [fileRows[1]!];
    await acceptQuickInput();
    const paletteSides = (await fromPalette) as [vscode.Uri, vscode.Uri];
    assert.ok(paletteSides?.some((u) => u.path.endsWith('cmp/b.txt')), `the chosen file is diffed: ${JSON.stringify(paletteSides)}`);

    const sides = (await vscode.commands.executeCommand('caesar.compareFile', 'cmp/a.txt', taskFirst, taskSecond)) as [vscode.Uri, vscode.Uri];
    const input = vscode.window.tabGroups.activeTabGroup.activeTab?.input;
    assert.ok(input instanceof vscode.TabInputTextDiff, 'a diff editor is in front');
    assert.equal(input.original.fsPath, sides[0].fsPath);
    assert.equal(input.modified.fsPath, sides[1].fsPath);
    assert.equal(readFileSync(input.original.fsPath, 'utf8'), 'first\nsecond\n');
    assert.equal(readFileSync(input.modified.fsPath, 'utf8'), 'uno\n');
  });
});

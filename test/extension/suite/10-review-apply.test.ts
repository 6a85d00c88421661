import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { CaesarApi, TreeItemSnapshot } from '../../../src/extension/api';
import type { ApplyOutcome, DelegatedTask, DiscardOutcome } from '../../../src/engine/tasks';
import { EXTENSION_ID, caesar, rowsOf, runInTerminal, until, workspaceDir } from './helpers';

// Real tasks: the fixture agent runs under `caesar run --isolation worktree` from a terminal, writing FIXTURE_FILES in
// its worktree; the commands then act on the real workspace, and each test checks the files on disk.

const byObjective = (tree: TreeItemSnapshot[], objective: string) => tree.find((t) => t.label === objective);
const FAST = { FIXTURE_DELAY_MS: '20', FIXTURE_SLOW_MS: '20' };

/** Runs the fixture agent in a worktree and waits until the task succeeded; resolves with its id. */
async function fixtureTask(api: CaesarApi, name: string, files: Record<string, string>, env: Record<string, string> = {}): Promise<string> {
  const objective = `Review test ${name} (${Date.now()})`;
  const exited = runInTerminal(`caesar ${name}`, `caesar run --agent fixture --isolation worktree ${JSON.stringify(objective)}`, {
    ...FAST,
    FIXTURE_FILES: JSON.stringify(files),
    ...env,
  });
  const tree = await api.waitForTree((t) => byObjective(t, objective)?.icon === 'pass', 60_000);
  assert.equal(await exited, 0, 'caesar run exited 0');
  return byObjective(tree, objective)!.id;
}

function workspaceFile(rel: string): string {
  return path.join(workspaceDir(), ...rel.split('/'));
}

function git(...args: string[]): string {
  const r = spawnSync('git', args, { cwd: workspaceDir(), encoding: 'utf8' });
  assert.equal(r.status, 0, `git ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
}

describe('Review and apply a task from the editor', () => {
  const created: string[] = [];
  let api: CaesarApi;
  let confirmations: { message: string; detail: string; action: string }[] = [];
  let answer = true;
  const readme = () => readFileSync(workspaceFile('README.md'), 'utf8');
  let readmeBefore = '';
  let gitignoreBefore = '';

  before(async () => {
    api = await caesar();
    readmeBefore = readme();
    gitignoreBefore = readFileSync(workspaceFile('.gitignore'), 'utf8');
    api.review!.setConfirm!(async (message, detail, action) => {
      confirmations.push({ message, detail, action });
      return answer;
    });
  });
  beforeEach(() => {
    confirmations = [];
    answer = true;
  });
  afterEach(async () => {
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    for (const rel of created.splice(0)) rmSync(workspaceFile(rel), { recursive: true, force: true });
    writeFileSync(workspaceFile('README.md'), readmeBefore);
    writeFileSync(workspaceFile('.gitignore'), gitignoreBefore);
  });

  it('contributes its commands, each registered', async () => {
    const contributed = (vscode.extensions.getExtension(EXTENSION_ID)!.packageJSON as { contributes: { commands: { command: string }[] } }).contributes.commands.map((c) => c.command);
    const registered = new Set(await vscode.commands.getCommands(true));
    for (const id of ['caesar.reviewAll', 'caesar.apply', 'caesar.applySelected', 'caesar.discard', 'caesar.cancel', 'caesar.rerun', 'caesar.openRawLog', 'caesar.revealTaskFolder']) {
      assert.ok(contributed.includes(id), `${id} is contributed in package.json`);
      assert.ok(registered.has(id), `${id} is registered`);
    }
  });

  it('decorates the changed files, opens them all in the multi-file diff editor, and Apply writes every file into the workspace', async function () {
    this.timeout(120_000);
    const id = await fixtureTask(api, 'apply-all', { 'review-all/one.txt': 'one\n', 'review-all/two.txt': 'two\n', '.gitignore': `${gitignoreBefore}# a line from the review test\n` });
    created.push('review-all', 'fixture-notes.md');
    const task = (await api.treeSnapshot([id])).find((t) => t.id === id)!;
    assert.equal(task.contextValue, 'task:review;review;apply;applySelected;land;discard;continue;rerun;compare;remove;', 'the tree offers Review / Apply / Discard on it');
    assert.deepEqual(task.children.filter((c) => c.contextValue === 'file').map((c) => c.label).sort(), ['.gitignore', 'fixture-notes.md', 'one.txt', 'two.txt']);

    // Decorations: the tree's file item and the worktree file (the right side of its diff) are coloured as "added".
    const item = api.review!.fileDecoration(api.review!.treeFileUri(id, 'review-all/one.txt'));
    assert.equal(item?.badge, 'A');
    assert.equal((item?.color as vscode.ThemeColor | undefined)?.id, 'gitDecoration.addedResourceForeground');
    const worktree = (await api.store.summary(id))!.state.worktree!;
    assert.equal(api.review!.fileDecoration(vscode.Uri.file(path.join(worktree, 'review-all', 'two.txt')))?.badge, 'A');
    assert.equal(api.review!.fileDecoration(vscode.Uri.file(workspaceFile('review-all/two.txt'))), undefined, 'the workspace file is not decorated');

    // Review All Changes: the multi-file diff editor (VS Code >= 1.85 has vscode.changes).
    assert.equal(await vscode.commands.executeCommand('caesar.reviewAll', id), 'multiDiff');
    const tab = await until('the multi-file diff editor', () => {
      const active = vscode.window.tabGroups.activeTabGroup.activeTab;
      return active?.label.startsWith('Caesar: Review test apply-all') ? active : undefined;
    });
    assert.ok(!(tab.input instanceof vscode.TabInputTextDiff) && !(tab.input instanceof vscode.TabInputText), 'one editor for all the files, not a single diff');
    // A modified file's two sides share a path, as Source Control's do: the editor shows it "M", not "R" (renamed),
    // which it shows whenever the paths differ.
    const sides = (tab.input as { textDiffs: vscode.TabInputTextDiff[] }).textDiffs;
    const modifiedSides = sides.find((d) => d.modified.path.endsWith('/.gitignore'))!;
    assert.ok(modifiedSides, JSON.stringify(sides.map((d) => d.modified.toString())));
    assert.equal(modifiedSides.original.scheme, 'caesar-base');
    assert.equal(modifiedSides.original.path, modifiedSides.modified.path);
    // Apply sits in the multi-file diff editor's title bar.
    const titleMenu = (vscode.extensions.getExtension(EXTENSION_ID)!.packageJSON as { contributes: { menus: Record<string, { command: string; when: string }[]> } }).contributes.menus['editor/title']!;
    assert.ok(titleMenu.some((m) => m.command === 'caesar.apply' && /activeEditor == multiDiffEditor && caesar\.reviewingTaskChanges/.test(m.when)), 'Apply in the multi-file diff title bar');
    await until('the title bar context key', () => api.review!.reviewingTaskChanges(), 10_000);

    // Apply from that title bar: VS Code passes the multi-file diff editor's own resource, which names no task; the
    // editor shown does. No warning (nothing changed in the workspace since the base), every file written.
    const outcome = (await vscode.commands.executeCommand('caesar.apply', vscode.Uri.parse(`multi-diff-editor:${Date.now()}`))) as ApplyOutcome;
    assert.ok(outcome, 'the title bar Apply applied the task of the multi-file diff editor');
    assert.equal(outcome.applied, true, outcome.message);
    assert.deepEqual(confirmations, []);
    assert.deepEqual([...outcome.files].sort(), ['.gitignore', 'fixture-notes.md', 'review-all/one.txt', 'review-all/two.txt']);
    assert.equal(readFileSync(workspaceFile('review-all/one.txt'), 'utf8'), 'one\n');
    assert.equal(readFileSync(workspaceFile('review-all/two.txt'), 'utf8'), 'two\n');
    assert.ok(existsSync(workspaceFile('fixture-notes.md')));
    const applied = JSON.parse(readFileSync(path.join(api.root, '.caesar', 'tasks', id, 'applied.json'), 'utf8')) as { files: string[] };
    assert.equal(applied.files.length, 4);
    await api.waitForTree((t) => /applied/.test(t.find((x) => x.id === id)?.description ?? ''), 10_000);

    // The timeline agrees with the tree: applied, so it offers no Apply any more, only the review and the worktree's removal.
    await vscode.commands.executeCommand('caesar.openTimeline', id);
    const stats = await api.timeline.waitForStats(id, (s) => s.caughtUp && s.actions.length > 0 && !s.actions.includes('apply'), 60_000);
    assert.deepEqual(stats.actions, ['reviewAll', 'discard']);
  });

  it('Apply Selected Files writes only the chosen files', async function () {
    this.timeout(120_000);
    const id = await fixtureTask(api, 'apply-selected', { 'review-sel/a.txt': 'a\n', 'review-sel/b.txt': 'b\n', 'review-sel/c.txt': 'c\n' });
    created.push('review-sel', 'fixture-notes.md');
    const outcome = (await vscode.commands.executeCommand('caesar.applySelected', id, ['review-sel/a.txt', 'review-sel/c.txt'])) as ApplyOutcome;
    assert.equal(outcome.applied, true, outcome.message);
    assert.deepEqual([...outcome.files].sort(), ['review-sel/a.txt', 'review-sel/c.txt']);
    assert.equal(readFileSync(workspaceFile('review-sel/a.txt'), 'utf8'), 'a\n');
    assert.equal(readFileSync(workspaceFile('review-sel/c.txt'), 'utf8'), 'c\n');
    assert.ok(!existsSync(workspaceFile('review-sel/b.txt')), 'the file left out was not applied');
    assert.ok(!existsSync(workspaceFile('fixture-notes.md')), 'the file left out was not applied');
  });

  it('warns before applying over files changed since the base, and a conflict applies nothing and names the file; Discard removes the worktree', async function () {
    this.timeout(120_000);
    const id = await fixtureTask(api, 'conflict', { 'README.md': '# Changed by the agent\n', 'review-conflict/new.txt': 'new\n' });
    created.push('review-conflict', 'fixture-notes.md');
    // The user edits the same file in the workspace meanwhile.
    writeFileSync(workspaceFile('README.md'), '# Changed by the user\n');

    // Backing out of the warning writes nothing.
    answer = false;
    assert.equal(await vscode.commands.executeCommand('caesar.apply', id), undefined);
    assert.equal(confirmations.length, 1);
    assert.match(confirmations[0]!.message, /changed in your workspace since the task started/);
    assert.match(confirmations[0]!.message, /^Task “Review test conflict \(\d+\)” \(fixture\) changed files/, 'named by its objective and agent, not its id');
    assert.match(confirmations[0]!.detail, /^README\.md \(changed in the workspace\)$/m);
    assert.doesNotMatch(confirmations[0]!.detail, /review-conflict/, 'only the files changed since the base are listed');
    assert.ok(!existsSync(workspaceFile('review-conflict/new.txt')));

    // Going ahead: git refuses README.md, so nothing at all is written.
    answer = true;
    const outcome = (await vscode.commands.executeCommand('caesar.apply', id)) as ApplyOutcome;
    assert.equal(outcome.applied, false);
    assert.equal(outcome.reason, 'conflicts');
    assert.deepEqual(outcome.conflicts, ['README.md']);
    assert.match(outcome.message, /README\.md/);
    assert.equal(readme(), '# Changed by the user\n', "the user's edit is untouched");
    assert.ok(!existsSync(workspaceFile('review-conflict/new.txt')), 'all or nothing: the other file was not applied');
    assert.ok(!existsSync(workspaceFile('fixture-notes.md')));
    assert.ok(!existsSync(path.join(api.root, '.caesar', 'tasks', id, 'applied.json')));

    // Discard: the worktree goes (the workspace is untouched), and the tree stops offering Apply.
    const worktree = (await api.store.summary(id))!.state.worktree!;
    assert.ok(existsSync(worktree));
    const discarded = (await vscode.commands.executeCommand('caesar.discard', id)) as DiscardOutcome;
    assert.equal(discarded.discarded, true, discarded.message);
    assert.match(confirmations.at(-1)!.message, /^Discard the worktree of “Review test conflict \(\d+\)” \(fixture\)\?$/);
    assert.ok(!existsSync(worktree), 'the worktree directory is removed');
    assert.ok(!git('worktree', 'list', '--porcelain').includes(worktree), 'git no longer lists the worktree');
    assert.ok(existsSync(path.join(api.root, '.caesar', 'tasks', id, 'discarded.json')));
    const gone = (await api.waitForTree((t) => t.find((x) => x.id === id)?.contextValue === 'task:discarded;rerun;compare;remove;', 10_000, [id])).find((x) => x.id === id)!;
    assert.equal(readme(), '# Changed by the user\n');
    // Discarded, as `caesar ps` says: the tree says so, its files are named but no longer offered as diffs, and
    // neither the commands nor the timeline offer to apply or review it.
    assert.match(gone.description, /^fixture · discarded/);
    assert.equal(gone.icon, 'trash');
    const files = gone.children.filter((c) => c.contextValue.startsWith('file'));
    assert.ok(files.length > 0 && files.every((c) => c.contextValue === 'file.gone' && /discarded/.test(c.description)), JSON.stringify(files));
    assert.equal(await vscode.commands.executeCommand('caesar.apply', id), undefined, 'nothing to apply');
    assert.equal(await vscode.commands.executeCommand('caesar.reviewAll', id), 'nothing');
    await vscode.commands.executeCommand('caesar.openTimeline', id);
    // The page has the task message once it shows the review note: its header actions are then final.
    const shown = await api.timeline.waitForStats(id, (s) => s.caughtUp && s.received > 0 && s.reviewNote.startsWith('Discarded'), 60_000);
    assert.deepEqual(shown.actions, []);
  });

  it('Cancel stops a running task; Re-run starts the same objective again; Open Raw Log and Reveal Task Folder open its files', async function () {
    this.timeout(150_000);
    const objective = `Review test cancel (${Date.now()})`;
    const gate = path.join(api.root, '.caesar', `never-opened-${Date.now()}`);
    const exited = runInTerminal('caesar cancel', `caesar run --agent fixture --isolation worktree ${JSON.stringify(objective)}`, { ...FAST, FIXTURE_GATE: gate });
    let tree = await api.waitForTree((t) => rowsOf(byObjective(t, objective) ?? ({ children: [] } as unknown as TreeItemSnapshot)).some((c) => c.label === 'slow_step' && c.icon === 'loading~spin'), 60_000);
    const id = byObjective(tree, objective)!.id;
    assert.match(byObjective(tree, objective)!.contextValue, /^task:running;cancel;$/);
    // Cancel asks first (it cannot be undone): declined, nothing is requested and the task runs on.
    answer = false;
    assert.equal(await vscode.commands.executeCommand('caesar.cancel', id), undefined);
    assert.deepEqual(confirmations.map((c) => c.action), ['Cancel Task']);
    assert.match(confirmations[0]!.message, /^Cancel “Review test cancel/);
    assert.equal(existsSync(path.join(api.root, '.caesar', 'tasks', id, 'cancel.request')), false, 'declined: no cancel request filed');
    answer = true;
    const cancel = (await vscode.commands.executeCommand('caesar.cancel', id)) as { requested: boolean };
    assert.equal(cancel.requested, true);
    tree = await api.waitForTree((t) => t.find((x) => x.id === id)?.icon === 'circle-slash', 30_000);
    assert.equal((await api.store.summary(id))!.state.status, 'cancelled');
    await exited;

    // Re-run: a new task, same objective, agent, mode and isolation, which runs to the end.
    const rerun = (await vscode.commands.executeCommand('caesar.rerun', id)) as DelegatedTask;
    assert.ok(rerun?.id && rerun.id !== id, 'a new task was delegated');
    const again = (await api.store.summary(rerun.id))!.state;
    const first = (await api.store.summary(id))!.state;
    assert.deepEqual([again.objective, again.agent, again.mode, again.isolation], [first.objective, first.agent, first.mode, first.isolation]);
    await api.waitForTree((t) => t.find((x) => x.id === rerun.id)?.icon === 'pass', 60_000);
    created.push('fixture-notes.md');

    // Open Raw Log: the agent's own output in an editor.
    await vscode.commands.executeCommand('caesar.openRawLog', rerun.id);
    const doc = vscode.window.activeTextEditor?.document;
    assert.equal(doc?.uri.fsPath, path.join(api.root, '.caesar', 'tasks', rerun.id, 'raw.log'));
    assert.match(doc!.getText(), /Fixture agent/);

    // Reveal Task Folder: revealed in the Explorer (the folder is inside the open workspace).
    const revealed = (await vscode.commands.executeCommand('caesar.revealTaskFolder', rerun.id)) as vscode.Uri;
    assert.equal(revealed.fsPath, path.join(api.root, '.caesar', 'tasks', rerun.id));
  });
});

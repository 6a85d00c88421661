import * as assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { CaesarApi, TreeItemSnapshot } from '../../../src/extension/api';
import { EXTENSION_ID, caesar, record, runInTerminal, until, workspaceDir } from './helpers';

// One lifecycle, one list of next actions (src/common/next-actions.ts): after Apply (from another process: a terminal)
// and after Discard, no surface offers Apply — the tree item's context value, package.json's menus evaluated against
// it, the diff editor's title bar (its context key) and the timeline's buttons and next steps.

type MenuItem = { command: string; when?: string };
const menus = () => (vscode.extensions.getExtension(EXTENSION_ID)!.packageJSON as { contributes: { menus: Record<string, MenuItem[]> } }).contributes.menus;

/**
 * A `when` clause evaluated as VS Code does for the forms package.json uses: `a == b`, `a =~ /re/`, `!a`, `a`, `&&`,
 * `||` and parentheses. An unknown key is undefined (false).
 */
export function evaluateWhen(when: string, context: Record<string, string | boolean | undefined>): boolean {
  // A regex literal ends at a `/` outside a character class: `[\\/]` holds one.
  const tokens = when.match(/\(|\)|&&|\|\||!(?!=)|[\w.]+\s*=~\s*\/(?:\\.|\[(?:\\.|[^\]])*\]|[^/[])*\/|[\w.]+\s*(?:==|!=)\s*[^\s()&|]+|[\w.]+/g) ?? [];
  let at = 0;
  const or = (): boolean => {
    let value = and();
    while (tokens[at] === '||') (at++, (value = and() || value));
    return value;
  };
  const and = (): boolean => {
    let value = unary();
    while (tokens[at] === '&&') (at++, (value = unary() && value));
    return value;
  };
  const unary = (): boolean => {
    const token = tokens[at++]!;
    if (token === '!') return !unary();
    if (token === '(') {
      const value = or();
      at++; // ')'
      return value;
    }
    const match = /^([\w.]+)\s*=~\s*\/(.*)\/$/s.exec(token);
    if (match) return new RegExp(match[2]!).test(String(context[match[1]!] ?? ''));
    const compare = /^([\w.]+)\s*(==|!=)\s*(.+)$/.exec(token);
    if (compare) return (String(context[compare[1]!] ?? '') === compare[3]) === (compare[2] === '==');
    return !!context[token];
  };
  return or();
}

/** The commands a menu shows in that context. */
function offered(menu: string, context: Record<string, string | boolean | undefined>): string[] {
  return (menus()[menu] ?? []).filter((m) => !m.when || evaluateWhen(m.when, context)).map((m) => m.command);
}

const REVIEW_COMMANDS = ['caesar.apply', 'caesar.applySelected', 'caesar.land', 'caesar.landSelected'];
const byObjective = (tree: TreeItemSnapshot[], objective: string) => tree.find((t) => t.label === objective);
const activeTaskActions = () => vscode.commands.executeCommand<string>('caesar.activeTaskActions');

/** Runs the fixture agent in a worktree from a terminal and waits until the task succeeded; resolves with its id. */
async function fixtureTask(api: CaesarApi, name: string): Promise<string> {
  const objective = `Lifecycle test ${name} (${Date.now()})`;
  const exited = runInTerminal(`caesar ${name}`, `caesar run --agent fixture --isolation worktree ${JSON.stringify(objective)}`, {
    FIXTURE_DELAY_MS: '20',
    FIXTURE_SLOW_MS: '20',
    FIXTURE_FILES: JSON.stringify({ [`lifecycle-${name}/a.txt`]: 'a\n' }),
    FIXTURE_NEXT_STEPS: JSON.stringify(['Review the diff, then apply it (caesar apply <id>)', 'Run the tests']),
  });
  const tree = await api.waitForTree((t) => byObjective(t, objective)?.icon === 'pass', 60_000);
  assert.equal(await exited, 0, 'caesar run exited 0');
  return byObjective(tree, objective)!.id;
}

const row = async (api: CaesarApi, id: string) => (await api.treeSnapshot([id])).find((t) => t.id === id)!;
const treeContext = (item: TreeItemSnapshot) => ({ view: 'caesar.tasks', viewItem: item.contextValue, listMultiSelection: false });

describe('One lifecycle: after Apply or Discard no surface offers Apply', () => {
  let api: CaesarApi;
  before(async () => {
    api = await caesar();
    api.review!.setConfirm!(async () => true);
  });
  after(async () => {
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    for (const name of ['applied', 'discarded', 'fixture-notes.md']) rmSync(path.join(workspaceDir(), name.endsWith('.md') ? name : `lifecycle-${name}`), { recursive: true, force: true });
  });

  it('applied from a terminal: the tree, its menus, the diff editor title bar and the timeline drop Apply, within a second or so', async function () {
    this.timeout(150_000);
    const id = await fixtureTask(api, 'applied');
    const item = await row(api, id);
    assert.deepEqual(REVIEW_COMMANDS.filter((c) => offered('view/item/context', treeContext(item)).includes(c)), ['caesar.apply', 'caesar.applySelected', 'caesar.land']);

    // The diff editor of one of its files: its title bar offers Apply while the lifecycle does.
    await vscode.commands.executeCommand('caesar.openChange', id, `lifecycle-applied/a.txt`);
    await until('the title bar context key to name the task’s actions', async () => /;apply;/.test(await activeTaskActions()), 10_000);
    const worktree = (await api.store.summary(id))!.state.worktree!;
    const titleContext = async () => ({ resourceScheme: 'file', resourcePath: path.join(worktree, 'lifecycle-applied', 'a.txt'), 'caesar.activeTask.actions': await activeTaskActions() });
    assert.ok(offered('editor/title', await titleContext()).includes('caesar.apply'));

    await vscode.commands.executeCommand('caesar.openTimeline', id);
    const open = await api.timeline.waitForStats(id, (s) => s.caughtUp && s.actions.includes('apply'), 60_000);
    assert.deepEqual(open.nextSteps, ['Review the diff, then apply it (caesar apply <id>)', 'Run the tests']);

    // Applied by another process: the records change on disk, every surface follows.
    assert.equal(await runInTerminal('caesar apply', `caesar apply ${id}`), 0, 'caesar apply exited 0');
    // From the moment the other process is done (applied.json written) to the surfaces following it.
    const started = Date.now();
    const applied = (await api.waitForTree((t) => /^task:applied;/.test(t.find((x) => x.id === id)?.contextValue ?? ''), 10_000, [id])).find((x) => x.id === id)!;
    record('lifecycleTreeAfterApplyMs', Date.now() - started);
    assert.equal(applied.contextValue, 'task:applied;review;discard;continue;rerun;compare;remove;');
    assert.deepEqual(REVIEW_COMMANDS.filter((c) => offered('view/item/context', treeContext(applied)).includes(c)), []);
    assert.ok(offered('view/item/context', treeContext(applied)).includes('caesar.discard'), 'the worktree can still be removed');
    const file = applied.children.find((c) => c.label === 'a.txt')!;
    assert.equal(file.contextValue, 'file.done', 'no file of it is offered to Apply Selected Files');

    await until('the title bar to drop Apply', async () => !/;apply;/.test(await activeTaskActions()), 10_000);
    await vscode.commands.executeCommand('caesar.openChange', id, `lifecycle-applied/a.txt`);
    const titleNow = await titleContext();
    assert.deepEqual(REVIEW_COMMANDS.filter((c) => offered('editor/title', titleNow).includes(c)), []);

    const shown = await api.timeline.waitForStats(id, (s) => s.caughtUp && !s.actions.includes('apply') && s.reviewNote !== '', 30_000);
    record('lifecycleTimelineAfterApplyMs', Date.now() - started);
    assert.deepEqual(shown.actions, ['reviewAll', 'discard']);
    assert.deepEqual(shown.nextSteps, ['Run the tests'], 'the agent’s step about applying is gone once applied');
    // The command itself agrees: nothing is applied a second time.
    assert.equal(await vscode.commands.executeCommand('caesar.apply', id), undefined);
  });

  it('discarded: nothing offers Review, Apply, Land or Discard, and the timeline lists no step about applying', async function () {
    this.timeout(150_000);
    const id = await fixtureTask(api, 'discarded');
    await vscode.commands.executeCommand('caesar.openTimeline', id);
    await api.timeline.waitForStats(id, (s) => s.caughtUp && s.actions.includes('apply'), 60_000);
    const outcome = (await vscode.commands.executeCommand('caesar.discard', id)) as { discarded: boolean; message: string };
    assert.equal(outcome.discarded, true, outcome.message);
    const item = (await api.waitForTree((t) => /^task:discarded;/.test(t.find((x) => x.id === id)?.contextValue ?? ''), 10_000, [id])).find((x) => x.id === id)!;
    assert.equal(item.contextValue, 'task:discarded;rerun;compare;remove;');
    const shownInTree = offered('view/item/context', treeContext(item));
    for (const command of [...REVIEW_COMMANDS, 'caesar.reviewAll', 'caesar.discard', 'caesar.continueWithFeedback']) assert.ok(!shownInTree.includes(command), `${command} is not offered`);
    assert.ok(item.children.filter((c) => c.contextValue.startsWith('file')).every((c) => c.contextValue === 'file.gone'));

    const shown = await api.timeline.waitForStats(id, (s) => s.caughtUp && s.reviewNote.startsWith('Discarded'), 30_000);
    assert.deepEqual(shown.actions, []);
    assert.deepEqual(shown.nextSteps, ['Run the tests']);
    // The timeline is the active editor: its title bar's context key names no review action either.
    await until('the title bar to offer nothing of the review', async () => {
      const actions = await activeTaskActions();
      return actions.includes(';rerun;') && !/;(apply|applySelected|review|discard|land);/.test(actions);
    }, 10_000);
  });

  it('evaluates when clauses as VS Code does for the forms package.json uses (the check above reads them so)', () => {
    assert.ok(evaluateWhen('view == caesar.tasks && viewItem =~ /;apply;/', { view: 'caesar.tasks', viewItem: 'task:review;apply;' }));
    assert.ok(!evaluateWhen('view == caesar.tasks && viewItem =~ /;apply;/', { view: 'caesar.tasks', viewItem: 'task:review;applySelected;' }));
    assert.ok(evaluateWhen('view == caesar.tasks && (viewItem == question || viewItem =~ /;answer;/)', { view: 'caesar.tasks', viewItem: 'question' }));
    assert.ok(!evaluateWhen('view == caesar.tasks && viewItem =~ /;land;/ && !listMultiSelection', { view: 'caesar.tasks', viewItem: ';land;', listMultiSelection: true }));
    const worktreeFile = 'resourcePath =~ /[\\\\/]\\.caesar[\\\\/]wt[\\\\/][^\\\\/]+[\\\\/]/ && caesar.activeTask.actions =~ /;apply;/';
    assert.ok(evaluateWhen(worktreeFile, { resourcePath: '/r/.caesar/wt/t_1/a.txt', 'caesar.activeTask.actions': ';review;apply;' }));
    assert.ok(!evaluateWhen(worktreeFile, { resourcePath: '/r/.caesar/wt/t_1/a.txt', 'caesar.activeTask.actions': ';review;discard;' }));
    assert.ok(!evaluateWhen(worktreeFile, { resourcePath: '/r/a.txt', 'caesar.activeTask.actions': ';apply;' }));
  });
});

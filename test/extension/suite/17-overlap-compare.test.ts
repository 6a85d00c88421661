import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';
import type { CaesarApi, TreeItemSnapshot } from '../../../src/extension/api';
import type { CompareShown } from '../../../src/extension/compare';
import type { DelegateOutcome } from '../../../src/extension/delegate/delegateCommands';
import type { ShownStep } from '../../../src/extension/delegate/quickSteps';
import { CHECKS_TOOLTIP } from '../../../src/extension/delegate/severalSteps';
import { acceptQuickInput, caesar, quickInputSettled, runInTerminal, until } from './helpers';

// Issue 25 in the editor: two real tasks that changed one file differently show the overlap (and git's prediction)
// on both rows of the Tasks tree; Compare Tasks ranks them by the checks Caesar ran; Delegate to Several Agents
// asks for checks and runs them for every agent.

const FAST = { FIXTURE_DELAY_MS: '20', FIXTURE_SLOW_MS: '20' };
type Pick = vscode.QuickPick<vscode.QuickPickItem>;

const enter = acceptQuickInput;

async function step(api: CaesarApi, name: Parameters<CaesarApi['delegation']['waitForStep']>[0]): Promise<ShownStep> {
  const shown = await api.delegation.waitForStep(name, 10_000);
  await quickInputSettled(); // the workbench's echo of what it drew comes before the test's own input
  return shown;
}

async function settled(api: CaesarApi, id: string): Promise<string> {
  return until(`task ${id} to end`, async () => {
    const s = await api.store.summary(id).catch(() => undefined);
    return s && !['pending', 'running'].includes(s.observed) ? s.observed : undefined;
  }, 90_000);
}

function itemNamed(shown: ShownStep, name: string): vscode.QuickPickItem {
  const item = (shown.input as Pick).items.find((i) => i.kind !== vscode.QuickPickItemKind.Separator && i.label.replace(/^\$\([\w-]+\) /, '') === name);
  assert.ok(item, `no row "${name}"`);
  return item;
}

describe('Overlap and best of N in the editor', () => {
  let api: CaesarApi;
  before(async () => {
    api = await caesar();
  });
  after(async () => {
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
  });

  it('two tasks changing one file differently both say so in the tree, with git’s prediction; Compare ranks the one whose check passed first', async function () {
    this.timeout(240_000);
    const objective = `Overlap test (${Date.now()})`;
    const run = (name: string, check: string, content: string) =>
      runInTerminal(name, `caesar run --agent fixture --isolation worktree --check ${JSON.stringify(check)} ${JSON.stringify(objective)}`, {
        ...FAST,
        FIXTURE_FILES: JSON.stringify({ 'ovl/shared.txt': content }),
      });
    assert.equal(await run('overlap-pass', 'true', 'from the first task\n'), 0, 'the passing task exits 0');
    assert.notEqual(await run('overlap-fail', 'exit 3', 'from the second task\nwith two lines\n'), 0, 'a failed check makes caesar run exit non-zero');

    const ours = (x: TreeItemSnapshot) => x.label === objective || x.label === `${objective} #2`;
    const tree = await api.waitForTree((t) => t.filter((x) => ours(x) && /conflicts with fixture · /.test(x.description)).length === 2, 60_000);
    const rows = tree.filter(ours);
    for (const row of rows) {
      const other = rows.find((r) => r !== row)!;
      assert.match(row.description, new RegExp(`conflicts with fixture · ${other.label.replace(/[()#]/g, '\\$&')}$`), 'each row names the other task');
      // The tooltip is Markdown whose text parts are escaped (appendText): read as a person sees it.
      const tooltip = row.tooltip.replace(/&nbsp;/g, ' ').replace(/\\(.)/g, '$1');
      assert.match(tooltip, new RegExp(`overlaps fixture · .*\\(${other.id}\\) on ovl/shared\\.txt: will conflict in ovl/shared\\.txt`));
    }

    const summaries = await Promise.all(rows.map((r) => api.store.summary(r.id)));
    const passing = summaries.find((s) => s?.state.checks?.failed === 0)!.id;
    const failing = summaries.find((s) => s?.state.checks?.failed === 1)!.id;
    const shown = (await vscode.commands.executeCommand('caesar.compareTasks', [failing, passing])) as CompareShown;
    const ranking = shown.content.slice(shown.content.indexOf('## Ranking'));
    assert.ok(shown.content.includes('## Ranking'), shown.content);
    assert.match(ranking, new RegExp(`^\\| #1 \\| ${passing} \\| fixture \\| succeeded, checks 1/1 passed, .*first: fewer failed checks \\(0 vs 1\\) than #2 \\(fixture\\) \\|$`, 'm'));
    assert.match(ranking, new RegExp(`^\\| #2 \\| ${failing} \\| fixture \\| succeeded, checks 0/1 passed, .*after #1 \\(fixture\\), which has fewer failed checks \\(0 vs 1\\) \\|$`, 'm'));
  });

  it('Delegate to Several Agents: the beaker button asks for checks, which each agent’s task runs', async function () {
    this.timeout(240_000);
    const objective = `Several with checks (${Date.now()})`;
    const done = vscode.commands.executeCommand<DelegateOutcome | undefined>('caesar.delegateSeveral');
    ((await step(api, 'objective')).input as vscode.InputBox).value = objective;
    await enter();
    const agents = await step(api, 'targets');
    (agents.input as Pick).selectedItems = [itemNamed(agents, 'demo'), itemNamed(agents, 'fixture')];
    await quickInputSettled();
    assert.ok(agents.press, 'the agents step has its own button');
    agents.press!(CHECKS_TOOLTIP);
    const checks = await step(api, 'checks');
    (checks.input as vscode.InputBox).value = 'test -d . ;; exit 4';
    await enter();
    const back = await step(api, 'targets');
    assert.match(back.input.title ?? '', /\(checks: test -d \. ;; exit 4\)$/);
    assert.deepEqual((back.input as Pick).selectedItems.map((i) => i.label.replace(/^\$\([\w-]+\) /, '')).sort(), ['demo', 'fixture'], 'the checked agents stay checked');
    await enter();

    const outcome = await done; // bounded by the test's timeout
    assert.ok(outcome, 'the command resolved with its tasks');
    assert.deepEqual(outcome.tasks.map((t) => t.launch.agent).sort(), ['demo', 'fixture']);
    for (const task of outcome.tasks) {
      await settled(api, task.id);
      const summary = await api.store.summary(task.id);
      assert.deepEqual(summary?.state.checks, { total: 2, failed: 1 }, `${task.launch.agent} ran both checks`);
      assert.deepEqual(summary?.result?.checks?.map((c) => [c.command, c.exit_code]), [['test -d .', 0], ['exit 4', 4]]);
    }
  });
});

import * as assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { CaesarApi } from '../../../src/extension/api';
import type { DelegateOutcome } from '../../../src/extension/delegate/delegateCommands';
import type { ShownStep } from '../../../src/extension/delegate/quickSteps';
import { acceptQuickInput, caesar, quickInputSettled, sleep, until } from './helpers';

/**
 * Accepts the quick input on screen, as Enter does. The extension's quick-input changes reach the workbench
 * asynchronously (and the workbench echoes its active item back): acceptQuickInput waits for both, not for a time.
 */
const enter = acceptQuickInput;

/** Waits for a step, then for the workbench to have drawn it (and for its echo of the first active item). */
async function step(api: CaesarApi, name: Parameters<CaesarApi['delegation']['waitForStep']>[0]): Promise<ShownStep> {
  const shown = await api.delegation.waitForStep(name, 10_000);
  await quickInputSettled();
  return shown;
}

/** The command's outcome, or a failure naming the step still on screen and what it says. */
async function outcomeOf(api: CaesarApi, done: Thenable<DelegateOutcome | undefined>): Promise<DelegateOutcome | undefined> {
  const timeout = sleep(60_000).then(() => {
    const open = api.delegation.currentStep();
    throw new Error(`the delegate command did not finish; on screen: ${open ? `${open.step}: ${open.input.title} / ${(open.input as Pick).placeholder ?? ''}` : 'nothing'}`);
  });
  return Promise.race([done, timeout]);
}

type Pick = vscode.QuickPick<vscode.QuickPickItem>;
function itemNamed(step: ShownStep, name: string): vscode.QuickPickItem {
  const items = (step.input as Pick).items;
  const item = items.find((i) => i.kind !== vscode.QuickPickItemKind.Separator && i.label.replace(/^\$\([\w-]+\) /, '') === name);
  assert.ok(item, `no row "${name}" in ${JSON.stringify(items.map((i) => i.label))}`);
  return item;
}
function choose(step: ShownStep, name: string): void {
  (step.input as Pick).activeItems = [itemNamed(step, name)];
}

function stateOf(api: CaesarApi, id: string): Record<string, unknown> {
  return JSON.parse(readFileSync(path.join(api.root, '.caesar', 'tasks', id, 'state.json'), 'utf8')) as Record<string, unknown>;
}

async function settled(api: CaesarApi, id: string): Promise<string> {
  return until(`task ${id} to end`, async () => {
    const s = await api.store.summary(id).catch(() => undefined); // read while the supervisor rewrites it: retry
    return s && !['pending', 'running'].includes(s.observed) ? s.observed : undefined;
  }, 60_000);
}

describe('Caesar: Delegate Task', () => {
  before(async () => {
    await vscode.workspace.getConfiguration('caesar').update('defaultAgent', 'demo', vscode.ConfigurationTarget.Global);
  });
  after(async () => {
    await vscode.workspace.getConfiguration('caesar').update('defaultAgent', undefined, vscode.ConfigurationTarget.Global);
  });

  it('objective, Enter, Enter on the default agent: a task delegated with the configured defaults, revealed and selected', async function () {
    this.timeout(90_000);
    const api = await caesar();
    const objective = `Delegated from the palette (${Date.now()})`;
    const done = vscode.commands.executeCommand<DelegateOutcome | undefined>('caesar.delegate');

    const first = await step(api, 'objective');
    (first.input as vscode.InputBox).value = objective;
    await enter();

    const agents = await step(api, 'target');
    const pick = agents.input as Pick;
    // Every agent row says whether it can be used, and why not.
    const rows = pick.items.filter((i) => i.kind !== vscode.QuickPickItemKind.Separator);
    for (const row of rows.filter((r) => !r.label.includes('role: '))) {
      assert.match(row.description ?? '', /^(installed|not found|refused by policy)/, JSON.stringify(row));
    }
    const demo = itemNamed(agents, 'demo');
    assert.match(demo.description ?? '', /installed · default/);
    assert.equal(pick.activeItems[0], demo, 'the default agent is the active row: Enter picks it');
    const missing = rows.find((r) => r.description?.startsWith('not found'));
    if (missing) assert.match(missing.detail ?? '', /not found on PATH/);
    // What works comes first; what cannot be used here sits after its own separator (roles with no agent among them).
    const separators = pick.items.filter((i) => i.kind === vscode.QuickPickItemKind.Separator).map((i) => i.label);
    const unusableAt = pick.items.findIndex((i) => i.kind === vscode.QuickPickItemKind.Separator && i.label === 'Not usable here');
    const before = unusableAt < 0 ? pick.items : pick.items.slice(0, unusableAt);
    assert.ok(before.filter((i) => i.kind !== vscode.QuickPickItemKind.Separator).every((i) => i.label.startsWith('$(check)')), JSON.stringify(pick.items.map((i) => i.label)));
    assert.ok(pick.items.slice(unusableAt + 1).every((i) => !i.label.startsWith('$(check)')), JSON.stringify(separators));
    assert.equal(pick.items.find((i) => i.kind !== vscode.QuickPickItemKind.Separator), demo, 'the default agent is the first row');
    // The detail says what the agent is, not where a binary lies (the demo runs on Node's own).
    assert.match(demo.detail ?? '', /^Demo agent \(built in, no model\) · over its native stream/);
    assert.ok(rows.every((r) => !(r.detail ?? '').includes(process.execPath)), JSON.stringify(rows.map((r) => r.detail)));
    await enter();

    const outcome = await outcomeOf(api, done);
    assert.ok(outcome, 'the command resolved with what it did');
    assert.deepEqual(outcome.refused, []);
    assert.equal(outcome.tasks.length, 1);
    const id = outcome.tasks[0]!.id;
    // The progress notification stayed up until the agent ran (or had already finished).
    assert.ok(['running', 'succeeded'].includes(outcome.statuses[id]!), JSON.stringify(outcome.statuses));
    const state = stateOf(api, id);
    assert.equal(state.agent, 'demo');
    assert.equal(state.objective, objective);
    assert.equal(state.mode, 'write'); // the policy defaults: write, auto isolation (a worktree here: a git repository)
    assert.equal(state.isolation, 'worktree');
    assert.deepEqual(api.delegation.selection(), [id], 'the new task is selected in the Tasks view');
    assert.equal(await settled(api, id), 'succeeded');
  });

  it('the gear path: mode, isolation and network chosen in the flow are the task’s settings on disk', async function () {
    this.timeout(90_000);
    const api = await caesar();
    const objective = `Delegated with chosen settings (${Date.now()})`;
    const done = vscode.commands.executeCommand<DelegateOutcome | undefined>('caesar.delegate', { objective, customize: true });

    const first = await step(api, 'objective');
    assert.equal((first.input as vscode.InputBox).value, objective, 'the preset objective is filled in');
    assert.equal(first.input.totalSteps, 6);
    await enter();
    choose(await step(api, 'target'), 'demo');
    await enter();
    const mode = await step(api, 'mode');
    assert.match(itemNamed(mode, 'write').description ?? '', /configured default/);
    choose(mode, 'read-only');
    await enter();
    choose(await step(api, 'isolation'), 'worktree');
    await enter();
    choose(await step(api, 'network'), 'off');
    await enter(); // demo takes no model: no model step

    const outcome = await outcomeOf(api, done);
    assert.ok(outcome && outcome.tasks.length === 1, JSON.stringify(outcome));
    const task = outcome.tasks[0]!;
    // What the engine was asked for (the request's isolation, not "auto" resolved), then the task on disk.
    assert.deepEqual([task.launch.mode, task.launch.isolation], ['read-only', 'worktree']);
    const state = stateOf(api, task.id);
    assert.deepEqual([state.agent, state.mode, state.isolation], ['demo', 'read-only', 'worktree']);
    // The demo agent cannot close its network itself: the user is told at once; the sandbox cuts it where it runs.
    assert.ok(task.warnings.some((w) => /network was requested closed/.test(w)), JSON.stringify(task.warnings));
    assert.equal(await settled(api, task.id), 'succeeded');
    const ended = stateOf(api, task.id) as { network: boolean; sandbox?: { confined: boolean } };
    assert.equal(ended.network, !ended.sandbox?.confined, JSON.stringify(ended));
  });

  it('from the editor’s context menu: the selection goes to the agent as context', async function () {
    this.timeout(90_000);
    const api = await caesar();
    const doc = await vscode.workspace.openTextDocument(path.join(api.root, 'README.md'));
    const editor = await vscode.window.showTextDocument(doc);
    editor.selection = new vscode.Selection(0, 0, 0, doc.lineAt(0).text.length);
    const objective = `Explain the selection (${Date.now()})`;
    const done = vscode.commands.executeCommand<DelegateOutcome | undefined>('caesar.delegate', doc.uri); // what the menu passes
    const first = await step(api, 'objective');
    assert.match((first.input as vscode.InputBox).prompt ?? '', /selection is sent as context/);
    (first.input as vscode.InputBox).value = objective;
    await enter();
    await step(api, 'target');
    await enter();
    const outcome = await outcomeOf(api, done);
    assert.ok(outcome?.tasks.length === 1, JSON.stringify(outcome));
    const id = outcome.tasks[0]!.id;
    const launch = JSON.parse(readFileSync(path.join(api.root, '.caesar', 'tasks', id, 'launch.json'), 'utf8')) as { context: string; objective: string };
    assert.equal(launch.objective, objective);
    assert.match(launch.context, /^Selected in README\.md, lines 1–1:\n```markdown\n# Test workspace\n```$/);
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    assert.equal(await settled(api, id), 'succeeded');
  });

  it('a refused delegation says why and writes nothing', async () => {
    const api = await caesar();
    const before = readdirSync(path.join(api.root, '.caesar', 'tasks')).length;
    const outcome = await vscode.commands.executeCommand<DelegateOutcome>('caesar.delegate', { objective: 'never runs', agent: 'no-such-agent' });
    assert.equal(outcome.tasks.length, 0);
    assert.match(outcome.refused[0]!.message, /Unknown agent "no-such-agent"/);
    assert.equal(readdirSync(path.join(api.root, '.caesar', 'tasks')).length, before);
  });

  it('in an untrusted workspace nothing is delegated: the command says why (and offers Manage Workspace Trust)', async () => {
    const api = await caesar();
    const tasksDir = path.join(api.root, '.caesar', 'tasks');
    const before = readdirSync(tasksDir).length;
    const previous = api.delegation.setTrustProbe!(() => false);
    try {
      for (const command of ['caesar.delegate', 'caesar.delegateSeveral']) {
        const outcome = await vscode.commands.executeCommand<DelegateOutcome>(command, { objective: 'never runs', agent: 'demo', agents: ['demo'] });
        assert.equal(outcome.tasks.length, 0, command);
        assert.match(outcome.refused[0]!.message, /cannot delegate in an untrusted workspace/);
        assert.equal(api.delegation.currentStep(), undefined, 'no quick input was opened');
      }
    } finally {
      api.delegation.setTrustProbe!(previous);
    }
    assert.equal(readdirSync(tasksDir).length, before, 'no task directory was written');
  });

  it('Delegate to Several Agents: one checked agent runs alone (saying so); unusable agents have no checkbox', async function () {
    this.timeout(120_000);
    const api = await caesar();
    const done = vscode.commands.executeCommand<DelegateOutcome | undefined>('caesar.delegateSeveral');
    const first = await step(api, 'objective');
    (first.input as vscode.InputBox).value = `Only one agent (${Date.now()})`;
    await enter();
    const agents = await step(api, 'targets');
    const pick = agents.input as Pick;
    // What cannot be used is a separator (no checkbox) that gives the reason in full, never a checkable row.
    const checkable = pick.items.filter((i) => i.kind !== vscode.QuickPickItemKind.Separator);
    assert.ok(checkable.every((i) => !/cannot be used|not found/.test(`${i.label} ${i.description ?? ''}`)), JSON.stringify(checkable.map((i) => i.label)));
    const unusable = pick.items.filter((i) => i.kind === vscode.QuickPickItemKind.Separator && /cannot be used here: /.test(i.label));
    assert.ok(unusable.length > 0, `the test config declares agents that are not installed: ${JSON.stringify(pick.items.map((i) => i.label))}`);
    pick.selectedItems = [itemNamed(agents, 'demo')];
    await enter();
    const outcome = await outcomeOf(api, done);
    assert.deepEqual(outcome?.tasks.map((t) => t.launch.agent), ['demo'], 'the one checked agent ran, instead of the Enter doing nothing');
    // A new task opens its timeline: the work is watched from there.
    assert.ok(api.timeline.openTaskIds().includes(outcome!.tasks[0]!.id), JSON.stringify(api.timeline.openTaskIds()));
    assert.equal(await settled(api, outcome!.tasks[0]!.id), 'succeeded');
  });

  it('Delegate to Several Agents: one objective, each checked agent in its own worktree, in parallel', async function () {
    this.timeout(120_000);
    const api = await caesar();
    const objective = `Compare agents (${Date.now()})`;
    const done = vscode.commands.executeCommand<DelegateOutcome | undefined>('caesar.delegateSeveral');
    const first = await step(api, 'objective');
    (first.input as vscode.InputBox).value = objective;
    await enter();
    const agents = await step(api, 'targets');
    const pick = agents.input as Pick;
    assert.ok(pick.canSelectMany);
    pick.selectedItems = [itemNamed(agents, 'demo'), itemNamed(agents, 'fixture')];
    await enter();

    const outcome = await outcomeOf(api, done);
    assert.ok(outcome, 'the command resolved');
    assert.deepEqual(outcome.refused, []);
    assert.deepEqual(outcome.tasks.map((t) => t.launch.agent).sort(), ['demo', 'fixture']);
    const states = outcome.tasks.map((t) => stateOf(api, t.id));
    for (const s of states) assert.equal(s.objective, objective);
    const worktrees = states.map((s) => s.worktree as string);
    assert.ok(worktrees.every((w) => w && existsSync(w)), JSON.stringify(worktrees));
    assert.notEqual(worktrees[0], worktrees[1]);
    // Both ran at once: each started before the other ended.
    const ends = await Promise.all(outcome.tasks.map((t) => settled(api, t.id)));
    assert.deepEqual(ends, ['succeeded', 'succeeded']);
    const views = await Promise.all(outcome.tasks.map((t) => api.store.summary(t.id)));
    const [a, b] = views.map((v) => ({ start: Date.parse(v!.state.started_at!), end: Date.parse(v!.state.ended_at!) }));
    assert.ok(a!.start < b!.end && b!.start < a!.end, `overlapping runs: ${JSON.stringify([a, b])}`);
  });
});

import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';
import type { DelegateOutcome } from '../../../src/extension/delegate/delegateCommands';
import { spawnSync } from 'node:child_process';
import { acceptQuickInput, caesar, find, handWrittenTask, quickInputSettled } from './helpers';

/**
 * Whether a task started now would be confined, found without the code under test: bubblewrap itself, run the way a
 * sandbox needs it (every namespace), succeeds on this machine, and no one turned the sandbox off for this editor.
 */
function bwrapRunsHere(): boolean {
  if (process.env.CAESAR_SANDBOX === 'off') return false;
  const run = spawnSync('bwrap', ['--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--unshare-all', '--die-with-parent', '--', 'true'], { stdio: 'ignore' });
  return !run.error && run.status === 0;
}

/** A Markdown tooltip's source as the user reads it (appendText escapes punctuation and spaces). */
const shown = (markdown: string) => markdown.replace(/&nbsp;/g, ' ').replace(/\\([\\`*_{}[\]()#+\-.!|<>])/g, '$1');

/** Issue 21 item 5: whether a task ran sandboxed, on its row and on hover; and in Delegate's picker, before it runs. */
describe('Sandbox mark', () => {
  it('each task row says sandboxed or not sandboxed, and the hover says why not and what its network was', async () => {
    const api = await caesar();
    const at = new Date().toISOString();
    const finished = { status: 'succeeded', started_at: at, ended_at: at, created_at: at };
    handWrittenTask(api.root, 'mark-confined', { ...finished, objective: 'Confined task', sandbox: { confined: true }, network: false });
    handWrittenTask(api.root, 'mark-open-net', { ...finished, objective: 'Confined, network open', sandbox: { confined: true }, network: true });
    handWrittenTask(api.root, 'mark-unconfined', { ...finished, objective: 'Unconfined task', sandbox: { confined: false, reason: 'bubblewrap (bwrap) is not installed' } });
    handWrittenTask(api.root, 'mark-none', { ...finished, objective: 'From before the sandbox' });
    const ids = ['mark-confined', 'mark-open-net', 'mark-unconfined', 'mark-none'];
    const tree = await api.waitForTree((t) => ids.every((id) => find(t, id)?.icon === 'pass'), 5_000, ids);

    const confined = find(tree, 'mark-confined')!;
    assert.match(confined.description, / · sandboxed$/);
    assert.match(shown(confined.tooltip), /sandboxed \(bubblewrap\)/);
    assert.match(shown(confined.tooltip), /network cut/);
    assert.match(shown(find(tree, 'mark-open-net')!.tooltip), /network open/);
    const unconfined = find(tree, 'mark-unconfined')!;
    assert.match(unconfined.description, / · not sandboxed$/);
    assert.match(shown(unconfined.tooltip), /not sandboxed: bubblewrap \(bwrap\) is not installed/);
    // A task whose supervisor recorded nothing gets no guess.
    const none = find(tree, 'mark-none')!;
    assert.doesNotMatch(none.description, /sandboxed/);
    assert.doesNotMatch(shown(none.tooltip), /sandboxed/);
  });

  it('Delegate\'s agent picker marks each usable agent with what a task started now would get', async function () {
    this.timeout(60_000);
    const api = await caesar();
    const confined = bwrapRunsHere();
    const done = vscode.commands.executeCommand<DelegateOutcome | undefined>('caesar.delegate');
    const first = await api.delegation.waitForStep('objective', 10_000);
    await quickInputSettled(); // the workbench's echo of what it drew comes before the test's own input
    (first.input as vscode.InputBox).value = 'Only looking at the picker';
    await acceptQuickInput();
    const target = await api.delegation.waitForStep('target', 10_000);
    const rows = (target.input as vscode.QuickPick<vscode.QuickPickItem>).items.filter((i) => i.kind !== vscode.QuickPickItemKind.Separator);
    const usable = rows.filter((r) => r.label.startsWith('$(check)') && !r.label.includes('role: '));
    assert.ok(usable.length > 0, JSON.stringify(rows.map((r) => r.label)));
    for (const row of usable) {
      assert.match(row.description ?? '', confined ? / · sandboxed$/ : / · not sandboxed$/, JSON.stringify(row));
      if (!confined) assert.match(row.detail ?? '', /not sandboxed: /, JSON.stringify(row));
    }
    await vscode.commands.executeCommand('workbench.action.closeQuickOpen');
    await done;
  });
});

import * as assert from 'node:assert/strict';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { CaesarApi } from '../../../src/extension/api';
import type { DelegateOutcome } from '../../../src/extension/delegate/delegateCommands';
import type { WalkthroughState } from '../../../src/extension/walkthrough/walkthrough';
import { caesar, sleep, until, workspaceDir } from './helpers';

// "Get Started with Caesar" end to end with the real demo agent: its buttons act on the task it started (none of them
// asks which task: a picker would keep the command from resolving) and each step is marked done by what happened —
// the answer given from the notification's button, not from the walkthrough.

const state = () => vscode.commands.executeCommand<WalkthroughState>('caesar.walkthrough.state');

/** The command resolves by itself, without a picker waiting for a person. */
async function resolvesAlone(command: string): Promise<unknown> {
  const asked = sleep(20_000).then(() => {
    throw new Error(`${command} did not resolve: it is waiting for a choice (a picker asking which task?)`);
  });
  return Promise.race([vscode.commands.executeCommand(command), asked]);
}

describe('Walkthrough: Get Started with Caesar', () => {
  let api: CaesarApi;
  before(async () => {
    api = await caesar();
    api.review!.setConfirm!(async () => true);
  });
  after(async () => {
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    rmSync(path.join(workspaceDir(), 'HELLO.md'), { force: true });
  });

  it('delegates the demo task, then opens its timeline, reviews and applies that task without asking; steps done by what happened', async function () {
    this.timeout(180_000);
    const outcome = (await vscode.commands.executeCommand('caesar.walkthrough.delegateDemo')) as DelegateOutcome;
    const id = outcome.tasks[0]!.id;
    assert.equal((await state()).taskId, id, 'the walkthrough remembers the task it started');
    assert.ok((await state()).done.includes('delegated'));

    await resolvesAlone('caesar.walkthrough.openTimeline');
    assert.ok(api.timeline.openTaskIds().includes(id), `the timeline of ${id} is open: ${JSON.stringify(api.timeline.openTaskIds())}`);

    // Answered from the notification's button (as a newcomer does): the walkthrough's "answer" step is done anyway.
    // (Earlier suites answered questions and applied tasks in this window too, which also counts.)
    const notice = await api.questions.waitForNotice(id, 30_000);
    await api.questions.choose(id, notice.questionId, 'Ciao');
    await until('the answer step to be done', async () => ((await state()).done.includes('answered') ? true : undefined), 30_000);

    await until(`task ${id} to succeed`, async () => ((await api.store.summary(id))?.observed === 'succeeded' ? true : undefined), 60_000);
    await resolvesAlone('caesar.walkthrough.reviewAll');
    assert.ok((await state()).done.includes('reviewed'));

    await resolvesAlone('caesar.walkthrough.apply');
    const hello = path.join(workspaceDir(), 'HELLO.md');
    assert.ok(existsSync(hello), 'the walkthrough task was applied to the workspace');
    assert.match(readFileSync(hello, 'utf8'), /\(answer: Ciao\)/);
    await until('the apply step to be done', async () => ((await state()).done.includes('applied') ? true : undefined), 10_000);
  });
});

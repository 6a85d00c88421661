import * as assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { CaesarApi } from '../../../src/extension/api';
import type { DelegateOutcome } from '../../../src/extension/delegate/delegateCommands';
import type { AnswerOutcome } from '../../../src/extension/questions/inbox';
import { caesar, until } from './helpers';

/**
 * An agent over ACP asks before it writes (`session/request_permission`); the engine turns that into a question, and
 * the editor puts it in the same inbox as any other: a notification whose buttons are the agent's own options. The
 * demo agent speaks ACP (`demo-agent.js --acp`), so this runs offline with the real supervisor and the real SDK.
 */
async function delegateOverAcp(objective: string): Promise<string> {
  const outcome = await vscode.commands.executeCommand<DelegateOutcome>('caesar.delegate', {
    objective,
    agent: 'demo',
    isolation: 'worktree',
    mode: 'write',
    transport: 'acp',
  });
  assert.equal(outcome.tasks.length, 1, JSON.stringify(outcome.refused));
  return outcome.tasks[0]!.id;
}

async function settled(api: CaesarApi, id: string): Promise<string> {
  return until(`task ${id} to end`, async () => {
    const s = await api.store.summary(id).catch(() => undefined);
    return s && !['pending', 'running'].includes(s.observed) ? s.observed : undefined;
  }, 60_000);
}

describe('ACP: a permission request answered from the notification', () => {
  it('shows the agent\'s options as buttons; "Allow" lets the write happen, and the answer is the editor\'s', async function () {
    this.timeout(90_000);
    const api = await caesar();
    const id = await delegateOverAcp(`Write ACP_ALLOWED.md (${Date.now()})`);
    const launch = JSON.parse(readFileSync(path.join(api.root, '.caesar', 'tasks', id, 'launch.json'), 'utf8')) as { transport: string };
    assert.equal(launch.transport, 'acp');

    const notice = await api.questions.waitForNotice(id, 45_000);
    assert.match(notice.questionId, /^perm_/);
    assert.match(notice.message, /^Demo agent \(built in, no model\) asks permission to edit: Write ACP_ALLOWED\.md/, 'the request names its agent once');
    // The buttons show the options' names; the answer written is the option itself, kind included.
    assert.deepEqual(notice.buttons, ['Allow', 'Reject', 'Allow always', 'Answer…']);

    const answered = (await api.questions.choose(id, notice.questionId, 'Allow')) as AnswerOutcome;
    assert.equal(answered.answered, true, answered.message);
    const answer = JSON.parse(readFileSync(path.join(api.root, '.caesar', 'tasks', id, 'answers', `${notice.questionId}.json`), 'utf8')) as { by?: string; answer?: string };
    assert.equal(answer.by, 'vscode');
    assert.equal(answer.answer, 'Allow (allow_once)');

    assert.equal(await settled(api, id), 'succeeded');
    const worktree = (await api.store.summary(id))!.state.worktree!;
    assert.ok(existsSync(path.join(worktree, 'ACP_ALLOWED.md')), 'the allowed write happened in the task\'s worktree');
  });

  it('"Reject" from the notification: the agent never writes', async function () {
    this.timeout(90_000);
    const api = await caesar();
    const id = await delegateOverAcp(`Write ACP_REJECTED.md (${Date.now()})`);
    const notice = await api.questions.waitForNotice(id, 45_000);
    const answered = (await api.questions.choose(id, notice.questionId, 'Reject')) as AnswerOutcome;
    assert.equal(answered.answered, true, answered.message);
    const answer = JSON.parse(readFileSync(path.join(api.root, '.caesar', 'tasks', id, 'answers', `${notice.questionId}.json`), 'utf8')) as { by?: string; answer?: string };
    assert.deepEqual([answer.by, answer.answer], ['vscode', 'Reject (reject_once)']);
    // The agent got the rejection and went on without the write: the task ends well, having changed nothing.
    assert.equal(await settled(api, id), 'succeeded');
    const events = readFileSync(path.join(api.root, '.caesar', 'tasks', id, 'events.jsonl'), 'utf8');
    assert.match(events, /Permission to write ACP_REJECTED\.md was rejected; I leave it alone/, 'the agent heard the rejection');
    const state = (await api.store.summary(id))!.state;
    assert.ok(state.worktree && existsSync(state.worktree), `the task's worktree is there to look in: ${state.worktree}`);
    assert.ok(!existsSync(path.join(state.worktree, `ACP_REJECTED.md`)), 'the rejected write never happened');
  });
});

import { strict as assert } from 'node:assert';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { taskPaths } from '../../../src/protocol';
import { answerQuestion, pendingQuestions, requestCancel } from '../../../src/engine/store/requests';
import { closeQuestions } from '../../../src/engine/store/questions-closed';
import { tempRoot, writeState } from './helpers';

function ask(root: string, id: string, qid: string, patch: Record<string, unknown> = {}) {
  const dir = taskPaths(root, id).questionsDir;
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, `${qid}.json`), JSON.stringify({ id: qid, question: `Q ${qid}?`, options: ['yes', 'no'], asked_at: new Date().toISOString(), ...patch }));
}

describe('engine: requests (cancel, answer)', () => {
  it('files a cancel request for an active task and does nothing for a finished one', async () => {
    const root = tempRoot();
    writeState(root, 'run1');
    assert.deepEqual(await requestCancel(root, 'run1'), { requested: true, status: 'running' });
    assert.ok(existsSync(taskPaths(root, 'run1').cancelRequest));
    assert.deepEqual(await requestCancel(root, 'run1'), { requested: true, status: 'running' }, 'a second request is harmless');
    writeState(root, 'fin', { status: 'succeeded' });
    assert.deepEqual(await requestCancel(root, 'fin'), { requested: false, status: 'succeeded' });
    assert.ok(!existsSync(taskPaths(root, 'fin').cancelRequest));
    await assert.rejects(requestCancel(root, 'ghost'), /Unknown task "ghost"/);
  });

  it('an answered question stays answered once its task has ended and closed the mailbox: a late second answer says so', async () => {
    const root = tempRoot();
    writeState(root, 't');
    ask(root, 't', 'q1');
    await answerQuestion(root, 't', 'q1', 'yes', 'vscode');
    // The task ends: the relay closes every question at once, and the state is final.
    await closeQuestions(taskPaths(root, 't').questionsDir, new Date().toISOString());
    writeState(root, 't', { status: 'succeeded' });
    await assert.rejects(answerQuestion(root, 't', 'q1', 'no'), (err: any) => err.code === 'already_answered' && /already answered from vscode: "yes"/.test(err.message));
  });

  it('answers once; a second answer fails and names the first', async () => {
    const root = tempRoot();
    writeState(root, 't');
    ask(root, 't', 'q1');
    assert.equal((await pendingQuestions(root, 't')).length, 1);
    const answer = await answerQuestion(root, 't', 'q1', 'yes', 'vscode');
    assert.equal(answer.answer, 'yes');
    const written = JSON.parse(readFileSync(path.join(taskPaths(root, 't').answersDir, 'q1.json'), 'utf8'));
    assert.equal(written.by, 'vscode');
    assert.deepEqual(await pendingQuestions(root, 't'), []);
    await assert.rejects(answerQuestion(root, 't', 'q1', 'no'), (err: any) => err.code === 'already_answered' && /already answered from vscode: "yes"/.test(err.message));
  });

  it('lets exactly one of many concurrent answering processes win', async () => {
    const root = tempRoot();
    writeState(root, 't');
    ask(root, 't', 'race');
    const target = path.join(taskPaths(root, 't').answersDir, 'race.json');
    const moduleUrl = path.resolve(__dirname, '../../../src/engine/store/requests.ts');
    const runs = Array.from({ length: 6 }, (_, i) =>
      new Promise<number>((resolve) => {
        const code = `require(${JSON.stringify(moduleUrl)}).answerQuestion(${JSON.stringify(root)}, 't', 'race', 'answer ${i}', 'p${i}').then(() => process.exit(0), () => process.exit(3));`;
        spawn(process.execPath, ['--require', 'tsx/cjs', '-e', code], { stdio: 'ignore' }).on('exit', (c) => resolve(c ?? -1));
      }),
    );
    const codes = await Promise.all(runs);
    assert.equal(codes.filter((c) => c === 0).length, 1, `exit codes ${codes}`);
    assert.equal(codes.filter((c) => c === 3).length, 5);
    assert.match(JSON.parse(readFileSync(target, 'utf8')).answer, /^answer \d$/);
  });

  it('refuses unknown tasks, unknown questions, expired questions and hostile ids, each clearly', async () => {
    const root = tempRoot();
    writeState(root, 't');
    ask(root, 't', 'old', { expired_at: '2026-01-01T00:00:00.000Z' });
    await assert.rejects(answerQuestion(root, 'nope', 'q1', 'x'), (e: any) => e.code === 'unknown_task');
    await assert.rejects(answerQuestion(root, 't', 'q404', 'x'), (e: any) => e.code === 'unknown_question' && /no question "q404"/.test(e.message));
    await assert.rejects(answerQuestion(root, 't', 'old', 'x'), (e: any) => e.code === 'expired');
    await assert.rejects(answerQuestion(root, 't', '../../state', 'x'), (e: any) => e.code === 'invalid_id');
    await assert.rejects(answerQuestion(root, '../t', 'q1', 'x'), (e: any) => e.code === 'invalid_id');
    assert.ok(!existsSync(path.join(root, '.caesar/tasks/state.json')));
    assert.deepEqual(await pendingQuestions(root, 't'), [], 'expired questions are not pending');
  });

  it('a question of a cancelled task is refused as such, not as "expired … went on with its own judgment"', async () => {
    const root = tempRoot();
    const ended = new Date();
    // The supervisor expires the unanswered question as the agent exits, then records the end.
    writeState(root, 'c', { status: 'cancelled', ended_at: ended.toISOString() });
    ask(root, 'c', 'q1', { expired_at: new Date(ended.getTime() - 300).toISOString() });
    await assert.rejects(answerQuestion(root, 'c', 'q1', 'x'), (e: any) =>
      e.code === 'finished' && /^Task "c" was cancelled before question "q1" was answered/.test(e.message) && !/judgment/.test(e.message));
    // Not expired at all (an agent that failed without expiring it): refused too, nothing written.
    writeState(root, 'l', { status: 'failed', ended_at: ended.toISOString() });
    ask(root, 'l', 'q2');
    await assert.rejects(answerQuestion(root, 'l', 'q2', 'x'), (e: any) => e.code === 'finished' && /ended \(failed\)/.test(e.message));
    assert.ok(!existsSync(path.join(taskPaths(root, 'l').answersDir, 'q2.json')));
    // Expired in a task that went on to the end: the agent did stop waiting and go on, and that is what it says.
    writeState(root, 'e', { status: 'succeeded', ended_at: ended.toISOString() });
    ask(root, 'e', 'q3', { expired_at: new Date(ended.getTime() - 300).toISOString() });
    await assert.rejects(answerQuestion(root, 'e', 'q3', 'x'), (e: any) => e.code === 'expired' && /went on with its own judgment/.test(e.message));
  });
});

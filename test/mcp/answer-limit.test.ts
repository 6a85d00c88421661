import { strict as assert } from 'node:assert';
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { MAX_ANSWER_BYTES, answerTooLarge, taskPaths } from '../../src/protocol';
import { buildCli, runBuiltCli, waitFor } from '../engine/runtime/helpers';
import { call, fixtureContext, makeFixtureRepo, serve, structured, textOf, type Served } from './orchestrator-helpers';

/*
 * Issue 34: a 10 MB caesar_answer was written whole. An answer is bounded (MAX_ANSWER_BYTES, 1 MiB, what the return
 * channel hands an asking agent whole) where every answerer writes it (answerQuestion: MCP, CLI, editor,
 * elicitation, a sub-task's relay): past it, a clear error and nothing written, the question still waiting.
 */
describe('MCP and CLI: an answer past 1 MiB is refused, nothing written (issue 34)', function () {
  this.timeout(120_000);
  let repo: string;
  let served: Served;

  before(async () => {
    await buildCli();
    repo = makeFixtureRepo();
    served = await serve(repo);
  });
  after(async () => {
    await served?.close();
  });

  it('the bound: exactly 1 MiB fits, one byte more does not (UTF-8 bytes, not characters)', () => {
    assert.equal(answerTooLarge('y'.repeat(MAX_ANSWER_BYTES)), undefined);
    assert.match(answerTooLarge('y'.repeat(MAX_ANSWER_BYTES + 1)) ?? '', /over the 1\.0 MiB limit: nothing was written/);
    assert.ok(answerTooLarge('é'.repeat(MAX_ANSWER_BYTES / 2 + 1)), 'two bytes a character');
  });

  it('a 10 MB caesar_answer and a 1.2 MB `caesar answer` are refused; the question still waits; a short answer then goes through', async () => {
    const release = path.join(repo, '.caesar', 'release-answer-limit');
    const delegated = structured(
      await call(served.client, 'caesar_delegate', { objective: 'fixture ask', agent: 'fixture', isolation: 'worktree', mode: 'write', context: fixtureContext({ mode: 'ask', question: 'Use plan A?', holdUntil: release }) }),
    );
    const id = delegated.task_id as string;
    const question = await waitFor('the question to be pending', async () => {
      const r = structured(await call(served.client, 'caesar_await', { task_ids: [id], timeout_ms: 500 }));
      return r.tasks[id].pending_questions?.[0] as { id: string } | undefined;
    });
    const answersDir = taskPaths(repo, id).answersDir;
    const written = () => (existsSync(answersDir) ? readdirSync(answersDir) : []);

    const huge = await call(served.client, 'caesar_answer', { task_id: id, question_id: question.id, answer: 'y'.repeat(10_000_000) });
    assert.equal(huge.isError, true);
    assert.match(textOf(huge), /The answer is 9\.5 MiB, over the 1\.0 MiB limit: nothing was written/);
    assert.deepEqual(written(), []);

    // A command line takes ~2 MB of arguments (one at most 128 KiB): twelve words of 100 KiB.
    const words = Array.from({ length: 12 }, () => 'w'.repeat(100 * 1024));
    const cli = await runBuiltCli(['answer', id, question.id, ...words], repo, 30_000);
    assert.notEqual(cli.code, 0);
    assert.match(cli.stderr, /over the 1\.0 MiB limit: nothing was written/);
    assert.deepEqual(written(), []);

    const still = structured(await call(served.client, 'caesar_await', { task_ids: [id], timeout_ms: 500 }));
    assert.equal(still.tasks[id].pending_questions?.[0]?.id, question.id, 'the question still waits for an answer');
    const answered = structured(await call(served.client, 'caesar_answer', { task_id: id, question_id: question.id, answer: 'yes' }));
    assert.equal(answered.answered, true);
    writeFileSync(release, '');
    const done = structured(await call(served.client, 'caesar_await', { task_ids: [id], timeout_ms: 60_000 }));
    assert.equal(done.tasks[id].report.summary, 'Answer was: yes');
  });
});

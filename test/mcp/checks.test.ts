import { strict as assert } from 'node:assert';
import { buildCli } from '../engine/runtime/helpers';
import { call, fixtureContext, makeFixtureRepo, serve, structured, textOf, type Served } from './orchestrator-helpers';

/** caesar_delegate's `checks` and what caesar_await says of them, through a real MCP client and server. */
describe('MCP: checks on caesar_delegate, "checks failed" in caesar_await', function () {
  this.timeout(60_000);
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

  it('an agent that says success, a check that fails: succeeded · checks failed, the claim beside the observation', async () => {
    const delegated = structured(
      await call(served.client, 'caesar_delegate', { objective: 'fixture success', agent: 'fixture', isolation: 'worktree', mode: 'write', context: fixtureContext({ mode: 'success' }), checks: ['test -f fixture.txt', 'echo "lint: 3 errors"; exit 2'] }),
    );
    assert.deepEqual(delegated.checks.map((c: { name: string; command: string }) => [c.name, c.command]), [['check-1', 'test -f fixture.txt'], ['check-2', 'echo "lint: 3 errors"; exit 2']]);
    const id = delegated.task_id as string;
    const result = await call(served.client, 'caesar_await', { task_ids: [id], timeout_ms: 60_000 });
    const outcome = structured(result).tasks[id];
    assert.equal(outcome.status, 'succeeded');
    assert.equal(outcome.checks_failed, true);
    assert.equal(outcome.status_label, 'succeeded · checks failed');
    assert.equal(outcome.report.status, 'success', "the agent's word is kept, beside the checks");
    assert.deepEqual(outcome.report.checks.map((c: { exit_code: number }) => c.exit_code), [0, 2]);
    assert.equal(outcome.report.checks[1].output_tail, 'lint: 3 errors\n');
    assert.match(textOf(result), new RegExp(`${id}: succeeded · checks failed`));
  });

  it('refuses an empty check', async () => {
    const result = await call(served.client, 'caesar_delegate', { objective: 'fixture success', agent: 'fixture', checks: [''] });
    assert.equal(result.isError, true);
  });
});

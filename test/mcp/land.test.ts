import { strict as assert } from 'node:assert';
import { readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { buildCli, git } from '../engine/runtime/helpers';
import { call, fixtureContext, makeFixtureRepo, serve, structured, textOf, type Served } from './orchestrator-helpers';

const lines = (prefix: string, n = 12) => Array.from({ length: n }, (_, i) => `${prefix} ${i + 1}`).join('\n') + '\n';
const withLine = (text: string, n: number, line: string) => text.split('\n').map((l, i) => (i === n - 1 ? line : l)).join('\n');

/** caesar_land through a real MCP client (the SDK over stdio), the built server, real git and supervisors. */
describe('MCP: caesar_land', function () {
  this.timeout(120_000);
  let repo: string;
  let served: Served;
  const A = lines('a');

  before(async () => {
    await buildCli();
    repo = makeFixtureRepo();
    writeFileSync(path.join(repo, 'a.txt'), A);
    git(repo, 'add', 'a.txt');
    git(repo, 'commit', '-qm', 'a.txt');
    served = await serve(repo);
  });
  after(async () => {
    await served?.close();
  });

  async function task(files: Record<string, string>, checks: string[] = []): Promise<string> {
    const delegated = structured(
      await call(served.client, 'caesar_delegate', { objective: 'fixture success', agent: 'fixture', isolation: 'worktree', mode: 'write', context: fixtureContext({ mode: 'success', files }), ...(checks.length ? { checks } : {}) }),
    );
    const id = delegated.task_id as string;
    const awaited = structured(await call(served.client, 'caesar_await', { task_ids: [id], timeout_ms: 60_000 }));
    assert.equal(awaited.tasks[id].status, 'succeeded');
    return id;
  }

  it('lands two compatible tasks onto a moved HEAD and stops at the conflicting third, with the follow-up', async () => {
    const first = await task({ 'a.txt': withLine(A, 2, 'a two by the first task') }, ['grep -q "a eleven by the user" a.txt']);
    const second = await task({ 'b.txt': 'b\n' });
    const third = await task({ 'a.txt': withLine(A, 2, 'a two by the third task') });
    writeFileSync(path.join(repo, 'a.txt'), withLine(A, 11, 'a eleven by the user'));
    git(repo, 'commit', '-qam', 'the user moves the base');

    const result = await call(served.client, 'caesar_land', { task_ids: [first, second, third] });
    assert.notEqual(result.isError, true, textOf(result));
    const outcome = structured(result);
    assert.deepEqual(outcome.landed, [first, second]);
    assert.equal(outcome.stopped_at, third);
    assert.deepEqual(outcome.tasks.map((t: { status: string }) => t.status), ['landed', 'landed', 'conflict']);
    assert.equal(outcome.tasks[0].checks[0].exit_code, 0, 'the check ran on the combined result');
    assert.deepEqual(outcome.tasks[2].conflicts.map((c: { path: string }) => c.path), ['a.txt']);
    assert.deepEqual(outcome.tasks[2].follow_up.command.slice(0, 3), ['caesar', 'continue', third]);
    assert.match(textOf(result), /stopped at .*a\.txt \(lines \d+-\d+\)[\s\S]*Follow-up: caesar continue /);
    assert.match(readFileSync(path.join(repo, 'a.txt'), 'utf8'), /a two by the first task[\s\S]*a eleven by the user/);
    assert.doesNotMatch(readFileSync(path.join(repo, 'a.txt'), 'utf8'), /third/);
  });

  it('a bad request is a tool error naming the problem', async () => {
    const unknown = await call(served.client, 'caesar_land', { task_ids: ['t_00000000000000000000000000000000'] });
    assert.equal(unknown.isError, true);
    assert.match(textOf(unknown), /Unknown task/);
    const empty = await call(served.client, 'caesar_land', { task_ids: [] });
    assert.equal(empty.isError, true);
  });
});

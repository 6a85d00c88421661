import { strict as assert } from 'node:assert';
import { buildCli, makeRepo, runBuiltCli, startFixture, waitForFinished } from '../engine/runtime/helpers';

const check = (command: string) => ({ name: 'tests', command, timeout_ms: 20_000 });

/**
 * `caesar compare`: four real tasks (fixture agent, real git, checks Caesar runs itself), ranked by the one function
 * the editor's Compare Tasks uses too.
 */
describe('cli: caesar compare ranks tasks on evidence (real tasks, real checks, real git)', function () {
  this.timeout(90_000);
  let repo: string;
  const ids: Record<string, string> = {};

  before(async () => {
    await buildCli();
    repo = makeRepo();
    const start = async (name: string, fixture: Record<string, unknown>, command: string) =>
      (ids[name] = (await startFixture(repo, fixture, { objective: 'the same objective', checks: [check(command)] })).id);
    // Started one after the other so the machine is not asked for four agents at once.
    for (const [name, fixture, command] of [
      ['small', { mode: 'success', files: { 'a.txt': 'one\n' } }, 'test -f a.txt'],
      ['large', { mode: 'success', files: { 'a.txt': 'one\ntwo\nthree\n', 'b.txt': 'four\n' } }, 'test -f a.txt'],
      ['checkFails', { mode: 'success', files: { 'a.txt': 'x\n' } }, 'echo "1 test failed"; exit 1'],
      ['runFails', { mode: 'fail' }, 'true'],
      ['twinOfSmall', { mode: 'success', files: { 'a.txt': 'one\n' } }, 'test -f a.txt'],
    ] as const) {
      await start(name, fixture, command);
      await waitForFinished(repo, ids[name]!);
    }
  });

  it('prints the table best first, and one line per task saying why', async () => {
    // Given in the worst order, so the ranking (not the arguments) decides the rows.
    const run = await runBuiltCli(['compare', ids.runFails!, ids.checkFails!, ids.large!, ids.small!, '--root', repo], repo, 20_000, { ...process.env, NO_COLOR: '1' });
    assert.equal(run.code, 0, run.stderr);
    const rows = run.stdout.slice(0, run.stdout.indexOf('Why:')).split('\n').filter((line) => /^#\d/.test(line));
    // Short ids, as ps and the editor show them (and every command takes back).
    assert.deepEqual(rows.map((line) => /t_[0-9a-f]{8}\b/.exec(line)?.[0]), [ids.small, ids.large, ids.checkFails, ids.runFails].map((id) => id!.slice(0, 10)));
    assert.match(rows[0]!, /succeeded\s+1\/1\s+1 line, 1 file/);
    assert.match(rows[1]!, /succeeded\s+1\/1\s+4 lines, 2 files/);
    assert.match(rows[2]!, /succeeded\s+0\/1/);
    const why = run.stdout.slice(run.stdout.indexOf('Why:')).split('\n').slice(1);
    assert.match(why[0]!, /^#1 fixture: .*first: a smaller diff \(1 vs 4 lines\) than #2/);
    assert.match(why[1]!, /^#2 fixture: .*after #1 \(fixture\), which has a smaller diff/);
    assert.match(why[2]!, /^#3 fixture: .*checks 0\/1 passed.*after #2 \(fixture\), which has fewer failed checks \(0 vs 1\)/);
    assert.match(why[3]!, /^#4 fixture: failed, .*after #3 \(fixture\), which has a run that succeeded \(vs failed\)/);
  });

  it('says which tasks made the very same change, and calls runs a person could not tell apart a tie, not a reason', async () => {
    const run = await runBuiltCli(['compare', ids.small!, ids.twinOfSmall!, '--root', repo, '--json'], repo, 20_000);
    assert.equal(run.code, 0, run.stderr);
    const ranked = JSON.parse(run.stdout) as Array<{ id: string; place: number; same_change_as?: string; duration_ms?: number; why: string }>;
    // Both fixture runs take about the same time: never "a shorter run (1s vs 1s)".
    assert.deepEqual(ranked.map((r) => r.place), [1, 1], run.stdout);
    assert.doesNotMatch(run.stdout, /shorter run/);
    const [first, second] = ranked;
    assert.equal(second!.same_change_as, first!.id);
    assert.match(second!.why, /the same change as #1 \(fixture\); tied with #1 \(fixture\): no figure tells them apart$/);
    const text = await runBuiltCli(['compare', ids.small!, ids.twinOfSmall!, '--root', repo], repo, 20_000, { ...process.env, NO_COLOR: '1' });
    assert.match(text.stdout, /1 line, 1 file \(same as #1\)/);
  });

  it('--json gives the same order with the figures', async () => {
    const run = await runBuiltCli(['compare', ids.checkFails!, ids.small!, ids.runFails!, ids.large!, '--root', repo, '--json'], repo, 20_000);
    assert.equal(run.code, 0, run.stderr);
    const ranked = JSON.parse(run.stdout) as Array<{ id: string; place: number; checks: { passed: number; failed: number; total: number }; changed_lines: number; files: number; why: string }>;
    assert.deepEqual(ranked.map((r) => r.id), [ids.small, ids.large, ids.checkFails, ids.runFails]);
    assert.deepEqual(ranked.map((r) => r.place), [1, 2, 3, 4]);
    assert.deepEqual(ranked[0]!.checks, { passed: 1, failed: 0, total: 1 });
    assert.deepEqual(ranked[2]!.checks, { passed: 0, failed: 1, total: 1 });
    assert.deepEqual([ranked[0]!.changed_lines, ranked[0]!.files, ranked[1]!.changed_lines, ranked[1]!.files], [1, 1, 4, 2]);
    assert.ok(ranked.every((r) => r.why.length > 0));
  });

  it('one task, a repeated id or an unknown one is a usage error (exit 2) that says what to type', async () => {
    const one = await runBuiltCli(['compare', ids.small!, ids.small!, '--root', repo], repo, 20_000);
    assert.equal(one.code, 2);
    assert.match(one.stderr, /Name two tasks or more/);
    const unknown = await runBuiltCli(['compare', ids.small!, `t_${'0'.repeat(32)}`, '--root', repo], repo, 20_000);
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr, /Unknown task "t_0{32}"/);
  });
});

import { strict as assert } from 'node:assert';
import { requestCancel } from '../../src/engine/tasks';
import { makeRepo, runBuiltCli, runningTask, TEN_LINES, withLine } from '../engine/runtime/helpers';

describe('cli: caesar ps shows overlapping tasks and git\'s prediction (real running tasks, real git)', function () {
  this.timeout(120_000);
  let repo: string;
  let a: string;
  let b: string;
  let c: string;

  before(async () => {
    repo = makeRepo({ 'shared.txt': TEN_LINES });
    a = await runningTask(repo, { 'shared.txt': withLine(TEN_LINES, 1, 'one, by A') });
    b = await runningTask(repo, { 'shared.txt': withLine(TEN_LINES, 10, 'ten, by B') });
    c = await runningTask(repo, { 'shared.txt': withLine(TEN_LINES, 1, 'one, by C') });
  });
  after(async () => {
    for (const id of [a, b, c]) await requestCancel(repo, id).catch(() => undefined);
  });

  it('lists each overlapping pair once, with "merge cleanly" or "will conflict in <files>"', async () => {
    const run = await runBuiltCli(['ps', '--root', repo], repo, 30_000, { ...process.env, NO_COLOR: '1' });
    assert.equal(run.code, 0, run.stderr);
    const lines = run.stdout.split('\n');
    const at = lines.indexOf('OVERLAPS');
    assert.ok(at > 0, run.stdout);
    const pairs = lines.slice(at + 1).filter(Boolean);
    assert.equal(pairs.length, 3, run.stdout);
    const line = (x: string, y: string) => pairs.find((l) => l.includes(x.slice(0, 10)) && l.includes(y.slice(0, 10)));
    assert.match(line(a, b) ?? '', /both changed shared\.txt: merge cleanly$/);
    assert.match(line(b, c) ?? '', /both changed shared\.txt: merge cleanly$/);
    assert.match(line(a, c) ?? '', /both changed shared\.txt: will conflict in shared\.txt$/);
  });

  it('--json gives each task its overlaps', async () => {
    const run = await runBuiltCli(['ps', '--root', repo, '--json'], repo, 30_000);
    assert.equal(run.code, 0, run.stderr);
    const rows = JSON.parse(run.stdout) as Array<{ id: string; overlaps: Array<{ with: string; files: string[]; prediction: string; conflicts: string[] }> }>;
    const of = (id: string) => rows.find((r) => r.id === id)!.overlaps.sort((x, y) => x.with.localeCompare(y.with));
    assert.deepEqual(of(a), [
      { with: b, files: ['shared.txt'], prediction: 'clean', conflicts: [] },
      { with: c, files: ['shared.txt'], prediction: 'conflict', conflicts: ['shared.txt'] },
    ].sort((x, y) => x.with.localeCompare(y.with)));
    assert.deepEqual(of(c).map((o) => [o.with, o.prediction]).sort(), [[a, 'conflict'], [b, 'clean']].sort());
  });
});

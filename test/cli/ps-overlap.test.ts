import { strict as assert } from 'node:assert';
import { existsSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { TaskStore, requestCancel } from '../../src/engine/tasks';
import { makeRepo, runBuiltCli, startFixture, waitFor } from '../engine/runtime/helpers';

const BASE = Array.from({ length: 10 }, (_, i) => `line ${i + 1}`).join('\n') + '\n';
const withLine = (n: number, text: string) => BASE.split('\n').map((l, i) => (i === n - 1 ? text : l)).join('\n');

/** A fixture task that has written `files` in its worktree and stays running until cancelled. */
async function runningTask(repo: string, files: Record<string, string>): Promise<string> {
  const { id } = await startFixture(repo, { mode: 'success', files, sleepMs: 120_000 });
  await waitFor(`task ${id} wrote its files`, async () => {
    const s = await new TaskStore(repo).summary(id);
    const wrote = (f: string) => existsSync(path.join(s!.state.worktree!, f)) && readFileSync(path.join(s!.state.worktree!, f), 'utf8') === files[f];
    return s?.state.worktree && s.state.status === 'running' && Object.keys(files).every(wrote);
  }, 30_000);
  return id;
}

describe('cli: caesar ps shows overlapping tasks and git\'s prediction (real running tasks, real git)', function () {
  this.timeout(120_000);
  let repo: string;
  let a: string;
  let b: string;
  let c: string;

  before(async () => {
    repo = makeRepo({ 'shared.txt': BASE });
    a = await runningTask(repo, { 'shared.txt': withLine(1, 'one, by A') });
    b = await runningTask(repo, { 'shared.txt': withLine(10, 'ten, by B') });
    c = await runningTask(repo, { 'shared.txt': withLine(1, 'one, by C') });
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

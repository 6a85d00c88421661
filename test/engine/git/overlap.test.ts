import { strict as assert } from 'node:assert';
import { cpSync, existsSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { LIVE_REFRESH_MS, OverlapTracker, TaskStore, applyTaskById, requestCancel, type TaskSummary } from '../../../src/engine/tasks';
import { git, makeRepo, runningTask, startFixture, TEN_LINES, withLine, waitForFinished } from '../runtime/helpers';

async function summaries(repo: string): Promise<TaskSummary[]> {
  return new TaskStore(repo).list();
}

describe('engine: overlap between running and unapplied tasks (real tasks, real git, merge-tree)', function () {
  this.timeout(120_000);
  let repo: string;
  const ids: Record<string, string> = {};

  before(async () => {
    repo = makeRepo({ 'shared.txt': TEN_LINES, 'other.txt': 'other\n' });
    ids.first = await runningTask(repo, { 'shared.txt': withLine(TEN_LINES, 1, 'first line, by task A') });
    ids.last = await runningTask(repo, { 'shared.txt': withLine(TEN_LINES, 10, 'last line, by task B') });
    ids.clash = await runningTask(repo, { 'shared.txt': withLine(TEN_LINES, 1, 'first line, by task C'), 'new.txt': 'c\n' });
    ids.apart = await runningTask(repo, { 'other.txt': 'changed by task D\n' });
  });
  after(async () => {
    for (const id of Object.values(ids)) await requestCancel(repo, id).catch(() => undefined);
  });

  it('names the shared files on both tasks and predicts clean merges and conflicts while they run', async () => {
    // `git status` may refresh an index: asked first, so the index read next is the one the tracker must leave alone.
    const statusBefore = git(repo, 'status', '--porcelain');
    const userIndex = path.join(repo, '.git', 'index');
    const indexBefore = readFileSync(userIndex);
    const mtimeBefore = statSync(userIndex).mtimeMs;
    const worktreeIndexes = await Promise.all(Object.values(ids).map(async (id) => {
      const wt = (await new TaskStore(repo).summary(id))!.state.worktree!;
      return { wt, status: git(wt, 'status', '--porcelain') };
    }));

    const overlaps = await new OverlapTracker(repo).compute(await summaries(repo));
    const of = (a: string, b: string) => overlaps.get(ids[a]!)?.find((o) => o.with === ids[b]);

    assert.deepEqual(of('first', 'last'), { with: ids.last, files: ['shared.txt'], prediction: 'clean', conflicts: [] });
    assert.deepEqual(of('last', 'first'), { with: ids.first, files: ['shared.txt'], prediction: 'clean', conflicts: [] });
    assert.deepEqual(of('first', 'clash'), { with: ids.clash, files: ['shared.txt'], prediction: 'conflict', conflicts: ['shared.txt'] });
    assert.deepEqual(of('clash', 'first')?.prediction, 'conflict');
    assert.deepEqual(of('last', 'clash')?.prediction, 'clean', 'line 10 and line 1 merge');
    assert.equal(overlaps.get(ids.apart!), undefined, 'a task touching only other.txt overlaps nothing');
    assert.equal(overlaps.get(ids.first!)?.length, 2);

    // Nothing of the user's checkout or the agents' worktrees was touched: not the index, not the status.
    assert.deepEqual(readFileSync(userIndex), indexBefore);
    assert.equal(statSync(userIndex).mtimeMs, mtimeBefore);
    assert.equal(git(repo, 'status', '--porcelain'), statusBefore);
    for (const { wt, status } of worktreeIndexes) assert.equal(git(wt, 'status', '--porcelain'), status, `${wt} unchanged`);
  });

  it('follows a running task as it writes more, and reuses what did not change', async () => {
    // Read again as soon as the task moves on (the default waits LIVE_REFRESH_MS between reads of a busy task).
    const tracker = new OverlapTracker(repo, { liveRefreshMs: 0 });
    const first = await tracker.compute(await summaries(repo));
    assert.equal(first.get(ids.apart!), undefined);
    // Task D's agent now also edits the shared file's middle line (as an agent's shell would: no event of its own);
    // the tracker sees it once the task's log moves on.
    const wtD = (await new TaskStore(repo).summary(ids.apart!))!.state.worktree!;
    writeFileSync(path.join(wtD, 'shared.txt'), withLine(TEN_LINES, 5, 'middle line, by task D'));
    const same = await tracker.compute(await summaries(repo));
    assert.equal(same.get(ids.apart!), undefined, 'no event since: the cached state stands');
    const moved = (await summaries(repo)).map((s) => (s.id === ids.apart ? { ...s, eventsBytes: s.eventsBytes + 1 } : s));
    const again = await tracker.compute(moved);
    assert.deepEqual(again.get(ids.apart!)?.map((o) => [o.with, o.prediction]).sort(), [[ids.first, 'clean'], [ids.last, 'clean'], [ids.clash, 'clean']].sort());
  });

  it('a busy running task is read again only once liveRefreshMs has passed (the default is LIVE_REFRESH_MS)', async () => {
    assert.ok(LIVE_REFRESH_MS >= 5_000, 'views read a busy worktree every few seconds at most');
    const tracker = new OverlapTracker(repo, { liveRefreshMs: 600_000 });
    const wtD = (await new TaskStore(repo).summary(ids.apart!))!.state.worktree!;
    writeFileSync(path.join(wtD, 'shared.txt'), TEN_LINES);
    const first = await tracker.compute(await summaries(repo));
    assert.equal(first.get(ids.apart!), undefined, 'D no longer changes shared.txt');
    writeFileSync(path.join(wtD, 'shared.txt'), withLine(TEN_LINES, 5, 'middle line, by task D'));
    const moved = (await summaries(repo)).map((s) => (s.id === ids.apart ? { ...s, eventsBytes: s.eventsBytes + 1 } : s));
    assert.equal((await tracker.compute(moved)).get(ids.apart!), undefined, 'read moments ago: the state stands');
  });

  it('a planted merge driver in the shared git dir never runs: the prediction says conflict instead', async () => {
    const marker = path.join(mkdtempSync(path.join(tmpdir(), 'caesar-merge-driver-')), 'ran');
    git(repo, 'config', 'merge.planted.driver', `touch ${marker}`);
    writeFileSync(path.join(repo, '.git', 'info', 'attributes'), '* merge=planted\n');
    try {
      const overlaps = await new OverlapTracker(repo).compute(await summaries(repo));
      const pair = overlaps.get(ids.first!)?.find((o) => o.with === ids.last);
      assert.equal(pair?.prediction, 'conflict', 'the planted driver is replaced by `false`');
      assert.equal(existsSync(marker), false, 'the planted command never ran');
    } finally {
      git(repo, 'config', '--unset', 'merge.planted.driver');
      writeFileSync(path.join(repo, '.git', 'info', 'attributes'), '');
    }
  });
});

describe('engine: overlap of finished, unapplied tasks', function () {
  this.timeout(120_000);

  it('reads finished tasks from result.json, predicts from their worktrees, and drops a task once applied', async () => {
    const repo = makeRepo({ 'shared.txt': TEN_LINES });
    const a = (await startFixture(repo, { mode: 'success', files: { 'shared.txt': withLine(TEN_LINES, 2, 'two, by A') } })).id;
    await waitForFinished(repo, a);
    const b = (await startFixture(repo, { mode: 'success', files: { 'shared.txt': withLine(TEN_LINES, 2, 'two, by B') } })).id;
    await waitForFinished(repo, b);
    const tracker = new OverlapTracker(repo);
    const overlaps = await tracker.compute(await summaries(repo));
    assert.deepEqual(overlaps.get(a), [{ with: b, files: ['shared.txt'], prediction: 'conflict', conflicts: ['shared.txt'] }]);

    await applyTaskById(repo, a);
    const after = await tracker.compute(await summaries(repo));
    assert.equal(after.size, 0, 'an applied task is no longer a candidate');
  });

  it('two tasks that made the same change to a file do not overlap on it', async () => {
    const repo = makeRepo({ 'shared.txt': TEN_LINES, 'other.txt': 'x\n' });
    const same = { 'shared.txt': withLine(TEN_LINES, 3, 'three, the same fix') };
    const a = (await startFixture(repo, { mode: 'success', files: same })).id;
    await waitForFinished(repo, a);
    const b = (await startFixture(repo, { mode: 'success', files: { ...same, 'other.txt': 'by B\n' } })).id;
    await waitForFinished(repo, b);
    const c = (await startFixture(repo, { mode: 'success', files: { 'other.txt': 'by C\n' } })).id;
    await waitForFinished(repo, c);
    const overlaps = await new OverlapTracker(repo).compute(await summaries(repo));
    assert.equal(overlaps.get(a), undefined, 'A and B changed shared.txt identically');
    assert.deepEqual(overlaps.get(b), [{ with: c, files: ['other.txt'], prediction: 'conflict', conflicts: ['other.txt'] }]);
  });

  it('a record naming a worktree of another repository (a cloned task folder) is never read there', async () => {
    const elsewhere = makeRepo({ 'shared.txt': TEN_LINES });
    const foreign = (await startFixture(elsewhere, { mode: 'success', files: { 'shared.txt': withLine(TEN_LINES, 4, 'four, elsewhere') } })).id;
    const { state } = await waitForFinished(elsewhere, foreign);
    const repo = makeRepo({ 'shared.txt': TEN_LINES });
    const own = (await startFixture(repo, { mode: 'success', files: { 'shared.txt': withLine(TEN_LINES, 4, 'four, here') } })).id;
    await waitForFinished(repo, own);
    // The other repository's task folder, copied as a clone or a hostile agent could plant it: its worktree field
    // still names the other repository's worktree.
    cpSync(path.join(elsewhere, '.caesar', 'tasks', foreign), path.join(repo, '.caesar', 'tasks', foreign), { recursive: true });
    const objectsBefore = git(elsewhere, 'count-objects', '-v');
    // Its records are sealed for the other root (record-seal.ts): the store refuses the folder, so it is never a
    // candidate; were it one, checkWorktree would still refuse its worktree (not under this repository's .caesar/wt/).
    const listed = await summaries(repo);
    assert.deepEqual(listed.map((t) => t.id), [own], 'the copied folder is not listed');
    const overlaps = await new OverlapTracker(repo).compute(listed);
    assert.equal(overlaps.get(own)?.find((o) => o.with === foreign), undefined);
    assert.equal(git(elsewhere, 'count-objects', '-v'), objectsBefore, 'nothing was written into the other repository');
    assert.ok(state.worktree && existsSync(state.worktree));
  });

  it('a task whose worktree was removed behind Caesar\'s back gets an unknown prediction with the reason', async () => {
    const repo = makeRepo({ 'shared.txt': TEN_LINES });
    const a = (await startFixture(repo, { mode: 'success', files: { 'shared.txt': withLine(TEN_LINES, 2, 'two, by A') } })).id;
    await waitForFinished(repo, a);
    const b = (await startFixture(repo, { mode: 'success', files: { 'shared.txt': withLine(TEN_LINES, 9, 'nine, by B') } })).id;
    const { state } = await waitForFinished(repo, b);
    git(repo, 'worktree', 'remove', '--force', state.worktree!);
    const overlaps = await new OverlapTracker(repo).compute(await summaries(repo));
    const pair = overlaps.get(a)?.[0];
    assert.equal(pair?.prediction, 'unknown');
    assert.match(pair?.reason ?? '', /does not exist/);
  });
});

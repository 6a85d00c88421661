import { strict as assert } from 'node:assert';
import { existsSync, readdirSync, rmSync } from 'node:fs';
import * as path from 'node:path';
import type { TaskState } from '../../src/protocol';
import { appliedPath } from '../../src/engine/git/apply';
import { git } from '../cli/follow-helpers';
import { bigChangeTask, caesarGroup, fastScratch, makeRepoIn, snapshot } from './apply-helpers';

/**
 * Issue 23: `caesar apply` is a transaction. Killed with SIGKILL at any moment of a 5,000-file apply (its whole
 * process group, or the node process alone while git goes on writing), the checkout ends exactly as before or
 * exactly as applied once the next caesar command has run, and that command says which.
 */
const FILES = 5000;

describe('reliability: kill -9 during a 5,000-file apply', function () {
  this.timeout(240_000);
  let repo: string;
  let task: TaskState;
  let asBefore: string;
  let asApplied: string;
  let fullApplyMs: number;

  before(async () => {
    repo = makeRepoIn(fastScratch());
    task = bigChangeTask(repo, FILES);
    asBefore = snapshot(repo);
    const started = Date.now();
    const first = await caesarGroup(repo, ['apply', task.id]);
    fullApplyMs = Date.now() - started;
    assert.equal(first.code, 0, first.stderr);
    assert.match(first.stdout, new RegExp(`Applied ${FILES} files`));
    asApplied = snapshot(repo);
    assert.notEqual(asApplied, asBefore);
    resetCheckout();
    assert.equal(snapshot(repo), asBefore, 'the reset restores the checkout');
  });
  after(() => rmSync(repo, { recursive: true, force: true }));

  function resetCheckout(): void {
    git(repo, 'reset', '-q', '--hard');
    git(repo, 'clean', '-fdq');
    rmSync(appliedPath(repo, task.id), { force: true });
  }

  /** Resets only what an earlier case left applied (a rolled-back checkout is as before already: checked there). */
  function resetIfApplied(): void {
    if (existsSync(appliedPath(repo, task.id)) || lastEnd !== 'before') resetCheckout();
  }

  function leftovers(): string[] {
    const dir = path.join(repo, '.caesar', 'state', 'apply');
    return existsSync(dir) ? readdirSync(dir) : [];
  }

  /**
   * The next command completes what was interrupted, whichever it is (the CLI's preAction hook): `ps`, `diff --stat`
   * and `gc --dry-run` take turns. Returns which end state it left.
   */
  let turn = 0;
  async function nextCommandCompletes(): Promise<'before' | 'applied'> {
    const commands = [['ps'], ['diff', task.id, '--stat'], ['gc', '--dry-run']];
    const args = commands[turn++ % commands.length] as string[];
    const ps = await caesarGroup(repo, args);
    assert.equal(ps.code, 0, `caesar ${args.join(' ')}: ${ps.stderr}`);
    const now = snapshot(repo);
    assert.ok(now === asBefore || now === asApplied, `after \`caesar ${args.join(' ')}\` the checkout is exactly as before or as applied (stderr: ${ps.stderr})`);
    assert.deepEqual(leftovers(), [], 'no journal and no lock are left behind');
    const recorded = existsSync(appliedPath(repo, task.id));
    lastEnd = now === asApplied ? 'applied' : 'before';
    if (now === asApplied) {
      assert.ok(recorded, 'an applied checkout is recorded as applied');
      if (ps.stderr) assert.match(ps.stderr, /Finished the interrupted apply|had completed/);
      return 'applied';
    }
    assert.ok(!recorded, 'a checkout as before is not recorded as applied');
    if (/Rolled back/.test(ps.stderr)) assert.match(ps.stderr, new RegExp(`Rolled back the interrupted apply of task ${task.id}`));
    return 'before';
  }

  /** From "as before", applying again lands the whole change: nothing of the interrupted attempt is in the way. */
  async function applyAgainLands(): Promise<void> {
    const again = await caesarGroup(repo, ['apply', task.id]);
    assert.equal(again.code, 0, again.stderr + again.stdout);
    assert.equal(snapshot(repo), asApplied);
    lastEnd = 'applied';
  }

  // Deterministic moments, through the test hook (apply-crash-hook.ts): `self:` kills only the node process, so a git
  // already started goes on writing on its own; the others kill the whole process group.
  const moments = [
    'backup:1', 'backup:2500', 'backup:5000', 'journal-written', 'prepared', 'git-write:1', 'git-write:20', 'git-write:60', 'git-write:150', 'applied',
    'written', 'recorded', 'self:backup:3000', 'self:journal-written', 'self:prepared', 'self:git-write:10', 'self:git-write:80', 'self:applied',
    'self:written', 'self:recorded',
  ];
  const ends: Record<string, string> = {};
  let lastEnd: string | undefined;
  let torn = 0;

  /** Counts kills that left the checkout neither as before nor as applied: what the recovery then has to repair. */
  function notePartial(): void {
    let now: string | undefined;
    try {
      now = snapshot(repo);
    } catch {
      // After a `self:` kill git may still be writing (a file vanishes under the walk): torn, by definition.
    }
    if (now !== asBefore && now !== asApplied) torn++;
  }

  for (const moment of moments) {
    it(`killed at ${moment}: the next command leaves it as before or as applied`, async () => {
      resetIfApplied();
      const killed = await caesarGroup(repo, ['apply', task.id], { env: { CAESAR_TEST_APPLY_CRASH: moment } });
      // A timed kill during git (`git:<ms>`) may come after a fast git has finished: the apply then completes.
      if (killed.code === 0 && moment.includes('git-write:')) {
        assert.equal(snapshot(repo), asApplied);
        ends[moment] = lastEnd = 'applied';
        return;
      }
      assert.equal(killed.signal, 'SIGKILL', `the apply died at ${moment} (${killed.stdout}${killed.stderr})`);
      notePartial();
      const end = await nextCommandCompletes();
      ends[moment] = end;
      // Up to the journal's rename nothing was touched; from applied.json on, the change is recorded.
      if (/backup|journal-written/.test(moment)) assert.equal(end, 'before');
      if (/written|recorded/.test(moment) && !/journal-written/.test(moment)) assert.equal(end, 'applied');
      if (end === 'before' && moments.indexOf(moment) % 4 === 0) await applyAgainLands();
    });
  }

  for (const fraction of [0.3, 0.8]) {
    it(`killed from outside (process group) at ${Math.round(fraction * 100)} % of a full apply's time: as before or as applied`, async () => {
      resetIfApplied();
      const killed = await caesarGroup(repo, ['apply', task.id], { killAfterMs: Math.round(fullApplyMs * fraction) });
      if (killed.code !== 0) notePartial();
      const end = killed.code === 0 ? (assert.equal(snapshot(repo), asApplied), (lastEnd = 'applied')) : await nextCommandCompletes();
      if (end === 'before') await applyAgainLands();
    });
  }

  for (const ms of [0, 30, 100, 250]) {
    it(`killed from outside (process group) ${ms} ms after git started writing: as before or as applied`, async () => {
      resetIfApplied();
      const killed = await caesarGroup(repo, ['apply', task.id], { killDuringGitMs: ms });
      if (killed.code !== 0) notePartial();
      const end = killed.code === 0 ? (assert.equal(snapshot(repo), asApplied), (lastEnd = 'applied')) : await nextCommandCompletes();
      if (end === 'before') await applyAgainLands();
    });
  }

  it('killed with its journal in place, then `caesar apply` again: it says it rolled back, then applies the whole change', async () => {
    resetIfApplied();
    const killed = await caesarGroup(repo, ['apply', task.id], { env: { CAESAR_TEST_APPLY_CRASH: 'prepared' } });
    assert.equal(killed.signal, 'SIGKILL');
    const again = await caesarGroup(repo, ['apply', task.id]);
    assert.equal(again.code, 0, again.stdout + again.stderr);
    assert.match(again.stdout + again.stderr, new RegExp(`Rolled back the interrupted apply of task ${task.id}`));
    assert.match(again.stdout, new RegExp(`Applied ${FILES} files`));
    assert.equal(snapshot(repo), asApplied);
    assert.deepEqual(leftovers(), []);
    lastEnd = 'applied';
  });

  it('the moments covered both end states, and kills that left a torn checkout for the next command to repair', () => {
    const seen = new Set(Object.values(ends));
    assert.ok(seen.has('before') && seen.has('applied'), JSON.stringify(ends));
    assert.ok(torn > 0, 'at least one kill came while git was half-way (neither as before nor as applied)');
  });
});

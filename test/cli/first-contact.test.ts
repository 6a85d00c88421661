/*
 * The CLI as a user meets it: piping into `head`, forgetting an argument, mistyping a question id, reading `ps` after
 * apply or discard, applying twice, running a write task outside git, and reading one error once.
 */
import { strict as assert } from 'node:assert';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { taskPaths } from '../../src/protocol';
import { buildCli } from '../engine/runtime/helpers';
import { addWorktree, appendEvents, cleanupAll, cli, event, makeRepo, makeTask, writeQuestion, writeState } from './follow-helpers';
import { waitFor } from '../support/wait';

/** A finished worktree task whose agent edited src/app.txt and created NOTES.md. */
function finishedWorktreeTask(repo: string) {
  const task = makeTask(repo, { status: 'succeeded', report_status: 'success', ended_at: new Date().toISOString() });
  const state = { ...task, ...addWorktree(repo, task.id) };
  writeState(repo, state);
  writeFileSync(path.join(state.worktree, 'src', 'app.txt'), 'line 1\nline 2 by the agent\nline 3\n');
  writeFileSync(path.join(state.worktree, 'NOTES.md'), 'notes\n');
  return state;
}

function plainDir(): string {
  const dir = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'caesar-nogit-')));
  after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

function count(text: string, what: string): number {
  return text.split(what).length - 1;
}

describe('the caesar CLI as a user meets it', function () {
  this.timeout(60_000);
  after(cleanupAll);

  it('a missing argument says what is expected and shows the usage line', async () => {
    const repo = makeRepo();
    const run = await cli(repo, ['run']);
    assert.equal(run.code, 2);
    assert.match(run.stderr, /^error: missing <objective>: what the agent must do \(quote it\)$/m);
    assert.match(run.stderr, /^Usage: caesar run \[options\] <objective> \[agentArgs\.\.\.\]$/m);
    assert.match(run.stderr, /See `caesar run --help`/);

    const answer = await cli(repo, ['answer', 't_0123']);
    assert.equal(answer.code, 2);
    assert.match(answer.stderr, /^error: missing <questionId>: question id/m);
    assert.match(answer.stderr, /^Usage: caesar answer \[options\] <taskId> <questionId> \[text\.\.\.\]$/m);

    const nested = await cli(repo, ['policy', 'set', 'max_depth']);
    assert.equal(nested.code, 2);
    assert.match(nested.stderr, /^error: missing <value>: /m);
    assert.match(nested.stderr, /^Usage: caesar policy set \[options\] <key> <value>$/m);
  });

  it('a wrong question id lists the questions waiting for an answer', async () => {
    const repo = makeRepo();
    const task = makeTask(repo);
    writeQuestion(repo, task.id, 'q_name', 'Which name should the parser get?', [], { asked_at: '2026-01-01T10:00:00.000Z' });
    writeQuestion(repo, task.id, 'q_go', 'Proceed with the migration?', ['yes', 'no'], { asked_at: '2026-01-01T10:00:05.000Z' });
    writeQuestion(repo, task.id, 'q_old', 'Still there?', [], { expired_at: new Date().toISOString() });
    for (const argv of [
      ['answer', task.id, 'q_nme', 'parseConfig'],
      ['answer', task.id, 'q_nme', '--option', '1'],
    ]) {
      const r = await cli(repo, argv);
      assert.equal(r.code, 1, r.stderr);
      assert.match(r.stderr, /has no question "q_nme"\. Questions waiting for an answer:\n {2}q_name {2}Which name should the parser get\?\n {2}q_go {2}Proceed with the migration\? \(options: 1\) yes, 2\) no\)/);
      assert.doesNotMatch(r.stderr, /q_old/, 'an expired question is not waiting');
    }
    const idle = makeTask(repo);
    const none = await cli(repo, ['answer', idle.id, 'q1', 'x']);
    assert.equal(none.code, 1);
    assert.match(none.stderr, /has no question "q1", and none of its questions is waiting for an answer\./);
  });

  it('ps shows applied and discarded tasks as such (and --status filters on it)', async () => {
    const repo = makeRepo();
    const applied = finishedWorktreeTask(repo);
    const discarded = finishedWorktreeTask(repo);
    const kept = finishedWorktreeTask(repo);
    assert.equal((await cli(repo, ['apply', applied.id])).code, 0);
    assert.equal((await cli(repo, ['discard', discarded.id])).code, 0);

    const ps = await cli(repo, ['ps']);
    assert.equal(ps.code, 0, ps.stderr);
    // Each row: the short id, the title, the agent, then what became of the work.
    const psRow = (id: string) => new RegExp(`^${id.slice(0, 10)}\\s+Add a line to src/app\\.txt(?: #\\d)?\\s+demo\\s+`, 'm');
    assert.match(ps.stdout, new RegExp(`${psRow(applied.id).source}applied\\s`, 'm'));
    assert.match(ps.stdout, new RegExp(`${psRow(discarded.id).source}discarded\\s`, 'm'));
    assert.match(ps.stdout, new RegExp(`${psRow(kept.id).source}succeeded\\s`, 'm'));

    const rows = JSON.parse((await cli(repo, ['ps', '--json'])).stdout) as Array<{ id: string; status: string; review: string | null; applied_at: string | null; discarded_at: string | null }>;
    const row = (id: string) => rows.find((r) => r.id === id)!;
    assert.deepEqual([row(applied.id).status, row(applied.id).review], ['succeeded', 'applied']);
    assert.ok(row(applied.id).applied_at);
    assert.deepEqual([row(discarded.id).review, Boolean(row(discarded.id).discarded_at)], ['discarded', true]);
    assert.equal(row(kept.id).review, null);

    const onlyApplied = await cli(repo, ['ps', '--status', 'applied']);
    assert.match(onlyApplied.stdout, new RegExp(applied.id.slice(0, 10)));
    assert.doesNotMatch(onlyApplied.stdout, new RegExp(`${discarded.id.slice(0, 10)}|${kept.id.slice(0, 10)}`));
  });

  it('applying twice says once that it was already applied, with the right advice, and changes nothing', async () => {
    const repo = makeRepo();
    const task = finishedWorktreeTask(repo);
    const first = await cli(repo, ['apply', task.id, '--files', 'NOTES.md']);
    assert.equal(first.code, 0, first.stderr);
    const rest = await cli(repo, ['apply', task.id]);
    assert.equal(rest.code, 0, rest.stderr);
    assert.match(rest.stdout, /Applied 1 file\b/, 'what --files left out is applied; NOTES.md is not applied twice');
    assert.equal(readFileSync(path.join(repo, 'src', 'app.txt'), 'utf8'), 'line 1\nline 2 by the agent\nline 3\n');
    const gc = JSON.parse((await cli(repo, ['gc', '--dry-run', '--json'])).stdout) as { entries: Array<{ id: string; reason: string }> };
    assert.equal(gc.entries.find((e) => e.id === task.id)?.reason, 'applied', 'applied in two steps is applied as a whole');

    const again = await cli(repo, ['apply', task.id]);
    assert.equal(again.code, 0, again.stderr);
    assert.equal(again.stderr, '');
    assert.equal(again.stdout.trim().split('\n').length, 1, again.stdout);
    assert.match(again.stdout, new RegExp(`^Task ${task.id} was already applied \\(.*, 2 files\\): its changes are in your workspace, nothing is left to apply\\. Remove its worktree and branch with \`caesar discard ${task.id}\`\\.$`, 'm'));
    assert.doesNotMatch(again.stdout, /conflict|do not apply|Nothing was written/i);
    const json = JSON.parse((await cli(repo, ['apply', task.id, '--json'])).stdout) as { applied: boolean; reason: string };
    assert.deepEqual([json.applied, json.reason], [false, 'already_applied']);

    assert.equal((await cli(repo, ['discard', task.id])).code, 0);
    const afterDiscard = await cli(repo, ['apply', task.id]);
    assert.equal(afterDiscard.code, 0);
    assert.match(afterDiscard.stdout, /was already applied/);
    assert.doesNotMatch(afterDiscard.stdout, /caesar discard/, 'no advice to discard what is gone');
  });

  it('outside a git repository a write task is refused before any task exists, naming the policy key, the file and the command', async () => {
    const dir = plainDir();
    const r = await cli(dir, ['run', 'edit the notes', '--agent', 'demo']);
    assert.equal(r.code, 2, r.stderr);
    assert.equal(count(r.stderr, 'Writing in place is refused'), 1);
    assert.match(r.stderr, /allow_inplace_write = false/);
    assert.match(r.stderr, /`caesar policy set allow_inplace_write true --global` \(sets allow_inplace_write in \[policy\] of ~\/\.config\/caesar\/config\.toml\)/);
    assert.equal(existsSync(path.join(dir, '.caesar')), false, 'no task directory is left behind');

    const worktree = await cli(dir, ['run', 'look around', '--agent', 'demo', '--mode', 'read-only', '--isolation', 'worktree']);
    assert.equal(worktree.code, 2);
    assert.match(worktree.stderr, /Worktree isolation is impossible/);
    assert.equal(existsSync(path.join(dir, '.caesar')), false);

    // The command the refusal names, as the user would run it (their global layer: a private HOME here).
    const home = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'caesar-first-home-')));
    assert.equal((await cli(dir, ['policy', 'set', 'allow_inplace_write', 'true', '--global'], { env: { ...process.env, HOME: home } })).code, 0);
    const refusedNoMore = await cli(dir, ['run', 'edit the notes', '--agent', 'demo', '--json'], { env: { ...process.env, HOME: home, CAESAR_CLI_JS: await buildCli(), CAESAR_DEMO_DELAY_MS: '5' } });
    assert.equal(refusedNoMore.code, 0, refusedNoMore.stderr);
    assert.equal((JSON.parse(refusedNoMore.stdout) as { status: string }).status, 'succeeded');
  });

  it('a fatal task error is printed once, not once per place it is recorded', async () => {
    const repo = makeRepo();
    mkdirSync(path.join(repo, '.caesar'), { recursive: true });
    writeFileSync(path.join(repo, '.caesar', 'config.toml'), '[worktree]\nsetup = ["echo the setup broke >&2; exit 3"]\n');
    // A setup command is a program the repository names: trusted first, as a user would (private HOME).
    const home = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'caesar-first-home-')));
    assert.equal((await cli(repo, ['trust'], { env: { ...process.env, HOME: home } })).code, 0);
    const caesarJs = await buildCli();
    const child = spawn(process.execPath, [caesarJs, 'run', 'edit the notes', '--agent', 'demo'], {
      cwd: repo,
      env: { ...process.env, HOME: home, CAESAR_DEMO_DELAY_MS: '5', NO_COLOR: '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    assert.equal(code, 1, out);
    assert.equal(count(out, 'Worktree setup command failed'), 1, out);
    assert.match(out, /\[finished\] report "failed"/);
  });

  it('`caesar watch | head -5`: when the reader goes away the command ends quietly, without an EPIPE stack trace', async () => {
    const repo = makeRepo();
    const task = makeTask(repo);
    appendEvents(repo, task.id, ...Array.from({ length: 8 }, (_, i) => event(task.id, { type: 'message', text: `line ${i}` })));
    const child = spawn(process.execPath, [await buildCli(), 'watch', task.id], { cwd: repo, env: { ...process.env, NO_COLOR: '' }, stdio: ['ignore', 'pipe', 'pipe'] });
    after(() => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
    await waitFor('the first five lines', () => stdout.split('\n').length > 5);
    child.stdout.destroy(); // what `head -5` does once it has its lines
    // The task goes on: its next events make watch write into the closed pipe.
    // The task goes on until watch has noticed: each probe appends one more event while it still runs.
    let more = 0;
    await waitFor('watch to end on the closed pipe', () => {
      if (child.exitCode !== null || child.signalCode !== null) return true;
      appendEvents(repo, task.id, event(task.id, { type: 'message', text: `more ${more++}` }));
      return false;
    }, 30_000, 100);
    const code = await exited;
    assert.equal(code, 0, stderr);
    assert.doesNotMatch(stderr, /EPIPE|Error|\n\s+at /);
    assert.ok(existsSync(taskPaths(repo, task.id).state), 'the task itself is left alone');
  });

  it('`caesar logs | head -1` on a long log ends quietly too', async () => {
    const repo = makeRepo();
    const task = makeTask(repo, { status: 'succeeded' });
    appendEvents(repo, task.id, ...Array.from({ length: 4000 }, (_, i) => event(task.id, { type: 'message', text: `a line long enough to fill the pipe quickly, number ${i}` })));
    const child = spawn(process.execPath, [await buildCli(), 'logs', task.id], { cwd: repo, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
    child.stdout.once('data', () => child.stdout.destroy());
    assert.equal(await exited, 0, stderr);
    assert.doesNotMatch(stderr, /EPIPE|Error|\n\s+at /);
  });
});

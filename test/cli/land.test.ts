import { strict as assert } from 'node:assert';
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { stateDir, taskPaths } from '../../src/protocol';
import { requireTaskView } from '../../src/engine/tasks';
import { FIXTURE_AGENT, buildCli, finishedTask, git, makeRepo, numberedLines, processesMatching, startFixture, trustedHome, uniqueSleep, waitFor, waitForFinished, withLine } from '../engine/runtime/helpers';
import { caesarGroup, snapshot } from '../reliability/apply-helpers';


/**
 * `caesar land` as a user runs it (the bundled CLI, real git, tasks run by real supervisors): the per-task table,
 * `--json`, the exit code, the follow-up command it prints, and a kill -9 in the middle of a land.
 */
describe('cli: caesar land', function () {
  this.timeout(120_000);
  const A = numberedLines('a', 12);
  const B = numberedLines('b', 12);

  async function threeTasksAndAMovedBase() {
    const root = makeRepo({ 'a.txt': A, 'b.txt': B });
    const first = await finishedTask(root, { 'a.txt': withLine(A, 2, 'a two by the first task') });
    const second = await finishedTask(root, { 'b.txt': withLine(B, 9, 'b nine by the second task') });
    const third = await finishedTask(root, { 'a.txt': withLine(A, 2, 'a two by the third task') });
    writeFileSync(path.join(root, 'a.txt'), withLine(A, 11, 'a eleven by the user'));
    git(root, 'commit', '-qam', 'the user moves the base');
    return { root, first, second, third };
  }

  it('prints a table per task and the follow-up command; --json has the same outcome; exit 1 when the queue stopped', async () => {
    const { root, first, second, third } = await threeTasksAndAMovedBase();
    const run = await caesarGroup(root, ['land', first, second, third]);
    assert.equal(run.code, 1, run.stderr);
    const rows = run.stdout.split('\n');
    assert.match(rows[0]!, /^TASK\s+RESULT\s+FILES\s+DETAIL$/);
    assert.match(rows.find((r) => r.startsWith(first))!, /landed\s+1\s+no checks/);
    assert.match(rows.find((r) => r.startsWith(second))!, /landed/);
    assert.match(rows.find((r) => r.startsWith(third))!, /conflict\s+1\s+conflicts: a\.txt \(lines \d+-\d+\)/);
    assert.match(run.stdout, /Landed 2 of 3 tasks; stopped at/);
    const followUp = rows.find((r) => r.trim().startsWith(`caesar continue ${third} --base-commit `));
    assert.ok(followUp, run.stdout);
    assert.match(run.stderr, new RegExp(`${first} \\(1/3\\): replaying`));
    assert.match(readFileSync(path.join(root, 'a.txt'), 'utf8'), /a two by the first task/);

    // The printed command, run as printed: the follow-up's worktree starts from the new HEAD with the conflict marked.
    const base = /--base-commit ([0-9a-f]{40})/.exec(followUp)![1]!;
    // The same agent, named in the project's configuration (trusted, as a user would) so `continue` can start it.
    writeFileSync(path.join(root, '.caesar', 'config.toml'), `[[agent]]\nid = "fixture"\nbin = ${JSON.stringify(process.execPath)}\nargs = [${JSON.stringify(FIXTURE_AGENT)}, "{{prompt}}"]\n`);
    const home = trustedHome(await buildCli(), root);
    const continued = await caesarGroup(root, ['continue', third, '--base-commit', base, '--json', 'resolve the conflict'], { env: { HOME: home } });
    assert.equal(continued.code, 0, continued.stderr);
    const next = JSON.parse(continued.stdout) as { task_id: string; base_commit: string };
    assert.equal(next.base_commit, base);
    const done = await waitForFinished(root, next.task_id);
    assert.equal(done.state.base_ref, git(root, 'rev-parse', `${base}^1`), 'its base is the new state (HEAD + the landed tasks)');
    assert.match(readFileSync(path.join(done.state.worktree!, 'a.txt'), 'utf8'), /<<<<<<< [\s\S]*a two by the third task[\s\S]*>>>>>>> /);

    // The follow-up agent (the fixture) left the markers: landing it is refused, naming the file.
    const unresolved = await caesarGroup(root, ['land', next.task_id]);
    assert.equal(unresolved.code, 1);
    assert.match(unresolved.stdout, /refused.*unresolved conflict markers .* to a\.txt/);

    // Files landed but not committed are the user's uncommitted changes for the next land: it refuses to merge into them.
    const dirty = await caesarGroup(root, ['land', third]);
    assert.equal(dirty.code, 1);
    assert.match(dirty.stdout, /refused.*uncommitted changes in: a\.txt/);
    // Committed, --json: the third still conflicts, with the same structure.
    git(root, 'commit', '-qam', 'the user commits what landed');
    const json = await caesarGroup(root, ['land', third, '--json']);
    assert.equal(json.code, 1, json.stdout);
    const outcome = JSON.parse(json.stdout) as { tasks: { task_id: string; status: string; conflicts: { path: string; hunks: unknown[] }[] }[]; landed: string[] };
    assert.deepEqual(outcome.landed, []);
    assert.deepEqual(outcome.tasks.map((t) => [t.task_id, t.status, t.conflicts.map((c) => c.path)]), [[third, 'conflict', ['a.txt']]]);
    const refused = await caesarGroup(root, ['land', first]);
    assert.equal(refused.code, 1);
    assert.match(refused.stdout, /refused.*already applied/);
  });

  it('rejects a --base-commit that is no commit of the repository, starting nothing', async () => {
    const { root, first } = await threeTasksAndAMovedBase();
    const tree = git(root, 'rev-parse', 'HEAD^{tree}');
    const run = await caesarGroup(root, ['continue', first, '--base-commit', tree, 'again']);
    assert.equal(run.code, 1, run.stdout);
    assert.match(run.stderr, /is not a commit with a parent/);
    const bad = await caesarGroup(root, ['continue', first, '--base-commit', 'HEAD', 'again']);
    assert.match(bad.stderr, /not a full hex commit id/);
    assert.equal(readdirSync(path.join(root, '.caesar', 'tasks')).length, 3, 'no task was started');
  });

  /**
   * A check that hangs only while `.caesar/hang-the-check` exists (the test creates it for the land, not for the task's
   * own run), after saying so with a marker in its worktree. It runs sandboxed: it can read the repository but write
   * only its worktree (here land's scratch worktree, where the test looks for the marker).
   */
  function hangingCheck(root: string, sleep: string) {
    const trigger = path.join(root, '.caesar', 'hang-the-check');
    const command = `if [ -f ${JSON.stringify(trigger)} ]; then touch check-started; sleep ${sleep}; fi`;
    const started = (id: string) => existsSync(path.join(stateDir(root), 'land', `wt-${id}`, 'check-started'));
    return { trigger, started, checks: [{ name: 'slow', command, timeout_ms: 120_000 }] };
  }

  it('killed with SIGKILL while a check runs on the combined result: the checkout is as before, and the next land cleans the scratch worktree up and lands', async () => {
    const root = makeRepo({ 'a.txt': A });
    const check = hangingCheck(root, '60');
    const { id } = await startFixture(root, { mode: 'success', files: { 'a.txt': withLine(A, 2, 'a two') } }, { checks: check.checks });
    await waitForFinished(root, id);
    writeFileSync(check.trigger, '');
    const before = snapshot(root);
    // The CLI as its own process group, as a terminal runs it: killed whole (the check with it) once the check runs.
    const land = spawn(process.execPath, [await buildCli(), 'land', id], { cwd: root, detached: true, stdio: 'ignore' });
    const ended = new Promise<NodeJS.Signals | null>((resolve) => land.on('close', (_code, signal) => resolve(signal)));
    await waitFor('the check to start on the combined result', () => check.started(id), 60_000);
    process.kill(-land.pid!, 'SIGKILL');
    assert.equal(await ended, 'SIGKILL');
    assert.equal(snapshot(root), before, 'nothing was written');
    assert.match(git(root, 'worktree', 'list', '--porcelain'), /\/land\/wt-/, 'the scratch worktree the kill left behind');

    rmSync(check.trigger);
    const again = await caesarGroup(root, ['land', id]);
    assert.equal(again.code, 0, again.stdout + again.stderr);
    assert.doesNotMatch(git(root, 'worktree', 'list', '--porcelain'), /\/land\/wt-/);
    assert.match(readFileSync(path.join(root, 'a.txt'), 'utf8'), /a two/);
  });

  it('Ctrl-C while a check runs on the combined result ends the check (its own process group) and stops with nothing written', async () => {
    const root = makeRepo({ 'a.txt': A });
    // Found on the host by its unique duration: sandboxed, the check's own pids are its PID namespace's.
    const sleep = uniqueSleep(60);
    const check = hangingCheck(root, sleep);
    const { id } = await startFixture(root, { mode: 'success', files: { 'a.txt': withLine(A, 2, 'a two') } }, { checks: check.checks });
    await waitForFinished(root, id);
    writeFileSync(check.trigger, '');
    const before = snapshot(root);
    // As a terminal's Ctrl-C: SIGINT to the CLI's process group (the check runs in a group of its own).
    const land = spawn(process.execPath, [await buildCli(), 'land', id, '--json'], { cwd: root, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    land.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
    const ended = new Promise<number | null>((resolve) => land.on('close', (code) => resolve(code)));
    await waitFor('the check to start on the combined result', () => check.started(id) && processesMatching(`sleep ${sleep}`).length > 0, 60_000);
    process.kill(-land.pid!, 'SIGINT');
    assert.equal(await ended, 1);
    const outcome = JSON.parse(stdout) as { tasks: { status: string; checks: { error?: string }[] }[] };
    assert.equal(outcome.tasks[0]!.status, 'check_failed');
    assert.match(outcome.tasks[0]!.checks[0]!.error ?? '', /stopped/);
    assert.deepEqual(processesMatching(`sleep ${sleep}`), [], 'the check was ended with the land');
    assert.equal(snapshot(root), before, 'nothing was written');
    assert.doesNotMatch(git(root, 'worktree', 'list', '--porcelain'), /\/land\/wt-/, 'the scratch worktree is removed');
  });

  for (const step of ['applied', 'written'] as const) {
    it(`killed with SIGKILL mid-land (after git wrote the first task, ${step === 'applied' ? 'before' : 'after'} the journal marked it written): the next command leaves every task landed or untouched`, async () => {
      const { root, first, second } = await threeTasksAndAMovedBase();
      const before = snapshot(root);
      const crashed = await caesarGroup(root, ['land', first, second], { env: { CAESAR_TEST_APPLY_CRASH: step } });
      assert.equal(crashed.signal, 'SIGKILL', crashed.stdout + crashed.stderr);

      const next = await caesarGroup(root, ['ps']);
      assert.equal(next.code, 0, next.stderr);
      assert.deepEqual(readdirSync(path.join(root, '.caesar', 'state', 'apply')), [], 'no journal or lock is left');
      assert.equal(existsSync(taskPaths(root, second).applied), false, 'the second task is untouched');
      assert.doesNotMatch(readFileSync(path.join(root, 'b.txt'), 'utf8'), /second task/);
      if (step === 'applied') {
        assert.match(next.stderr, /Rolled back the interrupted apply/);
        assert.equal(snapshot(root), before, 'the checkout is exactly as before');
        assert.equal(existsSync(taskPaths(root, first).applied), false);
      } else {
        assert.match(readFileSync(path.join(root, 'a.txt'), 'utf8'), /a two by the first task/);
        assert.ok(existsSync(taskPaths(root, first).applied), 'the written one is recorded as applied');
      }
      // The queue can simply be run again for what is left.
      const left = step === 'applied' ? [first, second] : [second];
      const again = await caesarGroup(root, ['land', ...left]);
      assert.equal(again.code, 0, again.stdout + again.stderr);
      assert.match(readFileSync(path.join(root, 'b.txt'), 'utf8'), /b nine by the second task/);
      assert.ok((await requireTaskView(root, second)).state.id === second);
    });
  }
});

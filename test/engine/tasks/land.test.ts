import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { taskPaths } from '../../../src/protocol';
import { landTasks, requireTaskView } from '../../../src/engine/tasks';
import { finishedTask, git, makeRepo, numberedLines, startFixture, waitForFinished, withLine } from '../runtime/helpers';
import { needs } from '../../support/needs';

const check = (name: string, command: string, timeout_ms = 20_000) => ({ name, command, timeout_ms });

/**
 * Land (issue 25, item 2) through the engine, with real git and real supervisors running the fixture agent: tasks
 * start from one commit, the user commits on HEAD while they run, then they land in order onto the moved HEAD.
 */
describe('engine/tasks: landTasks (the landing queue)', function () {
  this.timeout(120_000);
  const A = numberedLines('a', 12);
  const B = numberedLines('b', 12);

  /** Three tasks from one base (two compatible, one conflicting with the first), then a user commit on HEAD. */
  async function scenario() {
    const root = makeRepo({ 'a.txt': A, 'b.txt': B });
    const first = await finishedTask(root, { 'a.txt': withLine(A, 2, 'a two by the first task') }, { checks: [check('has both', 'grep -q "a two by" a.txt && grep -q "a eleven by the user" a.txt')] });
    const second = await finishedTask(root, { 'b.txt': withLine(B, 9, 'b nine by the second task'), 'new.txt': 'new\n' });
    const third = await finishedTask(root, { 'a.txt': withLine(A, 2, 'a two by the third task') });
    writeFileSync(path.join(root, 'a.txt'), withLine(A, 11, 'a eleven by the user'));
    git(root, 'commit', '-qam', 'the user moves the base');
    return { root, first, second, third, head: git(root, 'rev-parse', 'HEAD') };
  }

  it('lands two compatible tasks onto a moved HEAD, checks on the combined result; the conflicting third stops with nothing of it applied', async () => {
    const { root, first, second, third, head } = await scenario();
    const steps: string[] = [];
    const outcome = await landTasks(root, [first, second, third], { onProgress: (p) => steps.push(`${p.task_id}:${p.step}`) });

    assert.deepEqual(outcome.tasks.map((t) => t.status), ['landed', 'landed', 'conflict']);
    assert.deepEqual(outcome.landed, [first, second]);
    assert.equal(outcome.stopped_at, third);
    assert.equal(outcome.head, head);
    // The first task's check ran on the combined result (its change AND the user's commit): it could only pass there.
    assert.deepEqual(outcome.tasks[0]!.checks?.map((c) => [c.name, c.exit_code]), [['has both', 0]]);
    assert.ok(steps.includes(`${first}:checking`), steps.join(' '));

    const a = readFileSync(path.join(root, 'a.txt'), 'utf8');
    assert.match(a, /a two by the first task/);
    assert.match(a, /a eleven by the user/);
    assert.doesNotMatch(a, /third/, 'nothing of the third task was applied');
    assert.match(readFileSync(path.join(root, 'b.txt'), 'utf8'), /b nine by the second task/);
    assert.equal(readFileSync(path.join(root, 'new.txt'), 'utf8'), 'new\n');
    // The user's HEAD and index are theirs: land writes the working tree only, like apply.
    assert.equal(git(root, 'rev-parse', 'HEAD'), head);
    assert.equal(git(root, 'diff', '--cached', '--name-only'), '');

    // Landed ones are recorded as applied (gc and a second land know); the stopping one is untouched.
    for (const id of [first, second]) assert.ok(existsSync(taskPaths(root, id).applied), `${id} recorded as applied`);
    assert.equal(existsSync(taskPaths(root, third).applied), false);

    const conflict = outcome.tasks[2]!;
    assert.deepEqual(conflict.conflicts?.map((c) => c.path), ['a.txt']);
    assert.equal(conflict.conflicts![0]!.hunks.length, 1);
    assert.ok(conflict.conflicts![0]!.hunks[0]!.start <= 2, JSON.stringify(conflict.conflicts));
    assert.match(conflict.conflicts![0]!.messages.join(' '), /CONFLICT \(content\)/);
    assert.match(outcome.message, /stopped at .*a\.txt \(lines \d+-\d+\)/);

    // The follow-up starts from the new state (HEAD + the two landed) with the conflict marked.
    const followUp = conflict.follow_up!;
    assert.deepEqual(followUp.command.slice(0, 5), ['caesar', 'continue', third, '--base-commit', followUp.base_commit]);
    const marked = git(root, 'show', `${followUp.base_commit}:a.txt`);
    assert.match(marked, /<<<<<<< /);
    assert.match(marked, /a two by the third task/);
    assert.match(marked, /a eleven by the user/);
    assert.equal(git(root, 'show', `${followUp.base_commit}^1:b.txt`), withLine(B, 9, 'b nine by the second task').trimEnd());
    assert.equal(git(root, 'rev-parse', `${followUp.base_commit}^1^1`), head);
    assert.match(followUp.feedback, /a\.txt: lines \d+-\d+/);
  });

  it('a check that fails on the combined result stops the queue there: the earlier one stays landed, nothing of the failing one is written', async () => {
    const root = makeRepo({ 'a.txt': A, 'b.txt': B });
    const first = await finishedTask(root, { 'a.txt': withLine(A, 2, 'a two by the first task') });
    // Passes alone (its own run), fails once the first task's change is there too.
    const second = await finishedTask(root, { 'b.txt': withLine(B, 5, 'b five') }, { checks: [check('no first', '! grep -q "by the first task" a.txt')] });
    const third = await finishedTask(root, { 'c.txt': 'c\n' });
    assert.equal((await requireTaskView(root, second)).result?.checks?.[0]?.exit_code, 0, 'the check passed in the task itself');

    const outcome = await landTasks(root, [first, second, third]);
    assert.deepEqual(outcome.tasks.map((t) => t.status), ['landed', 'check_failed', 'not_landed']);
    assert.equal(outcome.stopped_at, second);
    assert.equal(outcome.tasks[1]!.checks?.[0]?.exit_code, 1);
    assert.ok(existsSync(path.join(outcome.tasks[1]!.checks_log_dir!, '1.log')), 'the failing check left its log');
    assert.equal(readFileSync(path.join(root, 'b.txt'), 'utf8'), B, 'nothing of the failing task was written');
    assert.equal(existsSync(path.join(root, 'c.txt')), false, 'nothing after it either');
    assert.equal(existsSync(taskPaths(root, second).applied), false);
    assert.match(readFileSync(path.join(root, 'a.txt'), 'utf8'), /by the first task/);
    // No scratch worktree is left registered.
    assert.doesNotMatch(git(root, 'worktree', 'list', '--porcelain'), /\/land\/wt-/);
  });

  it("runs the checks inside the task's sandbox: they read the combined result but cannot write the user's checkout", async function () {
    await needs(this, 'bubblewrap');
    const root = makeRepo({ 'a.txt': A, 'b.txt': B });
    const first = await finishedTask(root, { 'a.txt': withLine(A, 2, 'a two by the first task') });
    const escape = path.join(root, 'escaped.txt');
    const checks = [check('reads', 'grep -q "by the first task" a.txt && grep -q "b three" b.txt'), check('escapes', `echo x > ${JSON.stringify(escape)}`)];
    const { id: second } = await startFixture(root, { mode: 'success', files: { 'b.txt': withLine(B, 3, 'b three') } }, { checks, sandbox: { mode: 'required' } });
    assert.equal((await waitForFinished(root, second)).state.status, 'succeeded');

    const outcome = await landTasks(root, [first, second]);
    assert.deepEqual(outcome.tasks.map((t) => t.status), ['landed', 'check_failed']);
    assert.deepEqual(outcome.tasks[1]!.checks?.map((c) => [c.name, c.exit_code === 0]), [['reads', true], ['escapes', false]], JSON.stringify(outcome.tasks[1]!.checks));
    assert.equal(existsSync(escape), false, 'the check could not write outside its scratch worktree');

    // The control: the same checks of a task that ran unconfined write there.
    const { id: open } = await startFixture(root, { mode: 'success', files: { 'b.txt': withLine(B, 3, 'b three') } }, { checks, sandbox: { mode: 'off' } });
    assert.equal((await waitForFinished(root, open)).state.status, 'succeeded');
    const unconfined = await landTasks(root, [open]);
    assert.equal(unconfined.tasks[0]!.checks?.find((c) => c.name === 'escapes')?.exit_code, 0, JSON.stringify(unconfined.tasks[0]!.checks));
    assert.equal(existsSync(escape), true, 'the control: unconfined, the check did not write there either');
  });

  it("refuses to merge in a repository whose own config defines a merge driver (a command an agent could plant), running nothing", async () => {
    const root = makeRepo({ 'a.txt': A, '.gitattributes': 'a.txt merge=planted\n' });
    const first = await finishedTask(root, { 'a.txt': withLine(A, 2, 'a two by the first task') });
    writeFileSync(path.join(root, 'a.txt'), withLine(A, 11, 'a eleven by the user'));
    git(root, 'commit', '-qam', 'the user moves the base');
    const marker = path.join(root, '..', `${path.basename(root)}-driver-ran`);
    git(root, 'config', 'merge.planted.driver', `touch ${JSON.stringify(marker)}`);
    await assert.rejects(landTasks(root, [first]), /defines merge driver\(s\) merge\.planted\.driver/);
    assert.equal(existsSync(marker), false, 'the planted driver did not run');
    assert.equal(existsSync(taskPaths(root, first).applied), false);
    assert.doesNotMatch(readFileSync(path.join(root, 'a.txt'), 'utf8'), /first task/);
    // The control: git's own merge of a change to the same file (from the same base) runs the planted driver.
    const side = path.join(root, '..', `${path.basename(root)}-control`);
    git(root, 'worktree', 'add', '-q', '-b', 'control', side, 'HEAD~1');
    writeFileSync(path.join(side, 'a.txt'), withLine(A, 2, 'a two by the control'));
    git(side, 'commit', '-qam', 'control');
    execFileSync('git', ['merge-tree', '--write-tree', 'HEAD', 'control'], { cwd: root, stdio: 'pipe' });
    assert.equal(existsSync(marker), true, 'the control: git merged without running the driver');
  });

  it('refuses, before landing anything, a task already applied or one whose files have uncommitted edits', async () => {
    const root = makeRepo({ 'a.txt': A, 'b.txt': B });
    const first = await finishedTask(root, { 'a.txt': withLine(A, 2, 'first') });
    const second = await finishedTask(root, { 'b.txt': withLine(B, 2, 'second') });
    writeFileSync(path.join(root, 'b.txt'), withLine(B, 12, 'the user is editing this'));
    const dirty = await landTasks(root, [first, second]);
    assert.deepEqual(dirty.tasks.map((t) => [t.status, t.reason]), [['not_landed', undefined], ['refused', 'dirty']]);
    assert.match(dirty.message, /uncommitted changes in: b\.txt/);
    assert.equal(readFileSync(path.join(root, 'a.txt'), 'utf8'), A, 'the first task was not landed either');

    git(root, 'checkout', '--', 'b.txt');
    assert.deepEqual((await landTasks(root, [first])).landed, [first]);
    const again = await landTasks(root, [first, second]);
    assert.deepEqual(again.tasks.map((t) => t.reason ?? t.status), ['already_applied', 'not_landed']);
    assert.equal(readFileSync(path.join(root, 'b.txt'), 'utf8'), B);
    await assert.rejects(landTasks(root, [second, second]), /named twice/);
  });
});

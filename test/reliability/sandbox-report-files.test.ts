import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import { lstatSync, mkdtempSync, readFileSync, realpathSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { makeRepo, startFixture, waitForFinished, type Finished } from '../engine/runtime/helpers';
import { probeAgent, probeErrors, probeResults } from '../engine/sandbox/helpers';
import { needs } from '../support/needs';

/**
 * Issue 21: the report files a sandboxed agent writes in its view of the task folder are moved into the real task
 * folder after the run, by the supervisor, outside the sandbox. What the agent leaves at those names instead of a
 * file — a link to one of the user's files, a FIFO that would block a reader, a hard link, a folder — must never be
 * moved there (Caesar's readers and the user would then follow it) nor be followed while moving it. The probe ends the
 * agent (kill of its own shell) right after planting, so the planted thing is what the supervisor finds.
 */
(process.platform === 'linux' ? describe : describe.skip)('reliability: the report files a sandboxed agent leaves are taken back only as files', function () {
  this.timeout(60_000);
  let home: string;
  const bashrc = () => path.join(home, '.bashrc');

  before(async function () {
    await needs(this, 'bubblewrap');
    home = realpathSync(mkdtempSync(path.join(tmpdir(), 'caesar-report-files-home-')));
    writeFileSync(bashrc(), '# mine\n');
  });

  async function plant(command: string, mode: 'required' | 'off' = 'required'): Promise<Finished & { planted: string; taskDir: string; error?: string }> {
    const root = makeRepo({ 'README.md': '# test repo\n' });
    const { id, taskDir } = await startFixture(root, {}, { ...probeAgent([['plant', command], ['end', 'kill -9 $PPID']]), sandbox: { mode }, timeout_ms: 20_000 }, { HOME: home });
    const done = await waitForFinished(root, id, 40_000);
    const worktree = done.state.worktree!;
    return { ...done, taskDir, planted: probeResults(worktree).get('plant') ?? '(none)', error: probeErrors(worktree).get('plant') };
  }

  function keptOut(done: Finished & { taskDir: string }, name: string): void {
    // A report file that is not a regular file is refused unread, with the high finding an unconfined task gets too.
    const finding = done.result.report.findings.find((f) => f.title === 'Agent report refused');
    assert.equal(finding?.severity, 'high', JSON.stringify(done.result.report.findings));
    assert.match(finding?.detail ?? '', new RegExp(`^${name.replace('.', '\\.')} was refused: it is an? (symbolic link|FIFO|directory), not a regular file`), JSON.stringify(done.result.report.findings));
    assert.throws(() => lstatSync(path.join(done.taskDir, name)), /ENOENT/, `${name} reached the task folder`);
  }

  it('report.json as a link to a file of the user\'s: not taken back, the file untouched', async () => {
    const done = await plant(`ln -s ${bashrc()} "$CAESAR_REPORT_PATH"`);
    assert.equal(done.planted, 'ok');
    keptOut(done, 'report.json');
    assert.equal(readFileSync(bashrc(), 'utf8'), '# mine\n');
  });

  it('report.json as a FIFO: the supervisor does not block on it, and it is not taken back', async () => {
    const done = await plant('mkfifo "$CAESAR_REPORT_PATH"');
    assert.equal(done.planted, 'ok');
    keptOut(done, 'report.json');
  });

  it('final-message.txt as a folder holding a link: not taken back', async () => {
    const done = await plant(`mkdir "$(dirname "$CAESAR_REPORT_PATH")/final-message.txt" && ln -s ${bashrc()} "$(dirname "$CAESAR_REPORT_PATH")/final-message.txt/x"`);
    assert.equal(done.planted, 'ok');
    keptOut(done, 'final-message.txt');
  });

  it('the control: taken back by a plain rename, with no regular-file check, the link and the folder deliver the user\'s file', () => {
    // The same plants, by plain bash into a folder standing for the agent's view, then moved as a take-back without
    // the check would move them: a reader of the task folder then reads the user's file.
    const view = realpathSync(mkdtempSync(path.join(tmpdir(), 'caesar-report-files-view-')));
    const taskDir = realpathSync(mkdtempSync(path.join(tmpdir(), 'caesar-report-files-task-')));
    const env = { ...process.env, CAESAR_REPORT_PATH: path.join(view, 'report.json') };
    execFileSync('bash', ['-c', `ln -s ${bashrc()} "$CAESAR_REPORT_PATH"`], { env });
    execFileSync('bash', ['-c', `mkdir "$(dirname "$CAESAR_REPORT_PATH")/final-message.txt" && ln -s ${bashrc()} "$(dirname "$CAESAR_REPORT_PATH")/final-message.txt/x"`], { env });
    for (const name of ['report.json', 'final-message.txt']) renameSync(path.join(view, name), path.join(taskDir, name));
    assert.equal(readFileSync(path.join(taskDir, 'report.json'), 'utf8'), '# mine\n');
    assert.equal(readFileSync(path.join(taskDir, 'final-message.txt', 'x'), 'utf8'), '# mine\n');
  });

  const hardLink = () => `ln ${bashrc()} "$CAESAR_REPORT_PATH"`;

  it('report.json as a hard link to a file of the user\'s: refused (another mount), the file keeps one link', async () => {
    const done = await plant(hardLink());
    assert.equal(done.planted, 'refused');
    assert.match(done.error ?? '', /Invalid cross-device link/, 'refused by the sandbox\'s mount, not for another reason');
    assert.equal(statSync(bashrc()).nlink, 1);
    assert.equal(readFileSync(bashrc(), 'utf8'), '# mine\n');
  });

  it('the control: with the sandbox off the same hard link is made, and the user\'s file gains a link', async () => {
    const before = statSync(bashrc()).nlink;
    const done = await plant(hardLink(), 'off');
    assert.equal(done.planted, 'ok', done.error);
    // The user's file is now the report: a second name in the task folder, read by Caesar as the agent's report.
    assert.equal(statSync(bashrc()).nlink, before + 1, 'the control made no link');
    const finding = done.result.report.findings.find((f) => f.title === 'Agent report refused');
    assert.match(finding?.detail ?? '', /# mine/, JSON.stringify(done.result.report.findings));
    rmSync(path.join(done.taskDir, 'report.json'), { force: true });
  });
});

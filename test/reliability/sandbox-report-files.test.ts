import { strict as assert } from 'node:assert';
import { lstatSync, mkdtempSync, readFileSync, realpathSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { makeRepo, startFixture, waitForFinished, type Finished } from '../engine/runtime/helpers';
import { probeAgent, probeResults } from '../engine/sandbox/helpers';
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

  async function plant(command: string): Promise<Finished & { planted: string; taskDir: string }> {
    const root = makeRepo({ 'README.md': '# test repo\n' });
    const { id, taskDir } = await startFixture(root, {}, { ...probeAgent([['plant', command], ['end', 'kill -9 $PPID']]), sandbox: { mode: 'required' }, timeout_ms: 20_000 }, { HOME: home });
    const done = await waitForFinished(root, id, 40_000);
    return { ...done, taskDir, planted: probeResults(done.state.worktree!).get('plant') ?? '(none)' };
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

  it('report.json as a hard link to a file of the user\'s: refused (another mount), the file keeps one link', async () => {
    const done = await plant(`ln ${bashrc()} "$CAESAR_REPORT_PATH"`);
    assert.equal(done.planted, 'refused');
    assert.equal(statSync(bashrc()).nlink, 1);
    assert.equal(readFileSync(bashrc(), 'utf8'), '# mine\n');
  });
});

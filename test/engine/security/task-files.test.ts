import { strict as assert } from 'node:assert';
import { execFile } from 'node:child_process';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { promisify } from 'node:util';
import * as path from 'node:path';
import { taskPaths } from '../../../src/protocol';
import { readJsonFile } from '../../../src/engine/store/atomic';
import { TaskStore } from '../../../src/engine/store/store';
import { tailLines } from '../../../src/engine/store/tail';
import { eventLine, writeState } from '../store/helpers';
import { makeRepo, runBuiltCli, startFixture, waitFor, waitForFinished } from '../runtime/helpers';
import { mkfifo, tempDir, within } from './helpers';
import { needs } from '../../support/needs';

const runCaesar = runBuiltCli;
const execFileAsync = promisify(execFile);

/*
 * Issue 13 item 2: readers of task files trust nothing on disk. A task folder can come from a cloned repository (a
 * committed state.json linked to /dev/zero) or be written by the agent (a FIFO at the report path or in questions/).
 * Before the fix, the first made every listing read /dev/zero until V8 gave up (~620 MB each), the second blocked the
 * supervisor and every reader in open(2) forever.
 */


/**
 * store.list() of `root` in a fresh node process of its own, with how much that process's peak resident memory grew
 * during the call. Measured there, not in mocha's shared process, whose peak earlier test files already raised (a
 * spike below that old peak would not show). maxRSS is monotonic, so a spike between two samples is still seen.
 */
async function listInOwnProcess(root: string): Promise<{ ids: string[]; peakGrewBytes: number }> {
  const store = path.resolve(__dirname, '../../../src/engine/store/store.ts');
  const script = `const { TaskStore } = require(${JSON.stringify(store)});
const before = process.resourceUsage().maxRSS;
new TaskStore(${JSON.stringify(root)}).list().then((list) => {
  process.stdout.write(JSON.stringify({ ids: list.map((t) => t.id), peakGrewBytes: (process.resourceUsage().maxRSS - before) * 1024 }));
});`;
  // The timeout bounds a hang (reading /dev/zero never ends), it is not a timing claim.
  const { stdout } = await execFileAsync(process.execPath, ['-r', 'tsx/cjs', '-e', script], { cwd: path.resolve(__dirname, '../../..'), timeout: 30_000, maxBuffer: 1024 * 1024 });
  return JSON.parse(stdout) as { ids: string[]; peakGrewBytes: number };
}


describe('security: task files are read as untrusted input (issue 13.2)', function () {
  this.timeout(60_000);

  it('skips a committed state.json linked to /dev/zero with bounded memory (store.list, in a process of its own)', async () => {
    const root = tempDir('caesar-sec-zero-');
    writeState(root, 'good-task', { status: 'succeeded' });
    for (const id of ['zero-1', 'zero-2', 'zero-3']) {
      mkdirSync(taskPaths(root, id).dir, { recursive: true });
      symlinkSync('/dev/zero', taskPaths(root, id).state);
    }
    const { ids, peakGrewBytes } = await listInOwnProcess(root);
    assert.deepEqual(ids, ['good-task']);
    assert.ok(peakGrewBytes < 64 * 1024 * 1024, `peak memory grew by ${Math.round(peakGrewBytes / 1024 / 1024)} MB`);
  });

  it('never follows a symlinked folder out of the tasks folder', async () => {
    const root = tempDir('caesar-sec-dirlink-');
    const elsewhere = tempDir('caesar-sec-elsewhere-');
    writeState(elsewhere, 'outside', { status: 'succeeded' });
    writeState(root, 'inside', { status: 'succeeded' });
    // A task folder that is a symlink to another root's task, and a questions/ folder that is a symlink elsewhere.
    symlinkSync(taskPaths(elsewhere, 'outside').dir, taskPaths(root, 'outside').dir);
    const questionsElsewhere = path.join(elsewhere, 'questions');
    mkdirSync(questionsElsewhere);
    writeFileSync(path.join(questionsElsewhere, 'q1.json'), JSON.stringify({ id: 'q1', question: 'from elsewhere?', asked_at: new Date().toISOString() }));
    symlinkSync(questionsElsewhere, taskPaths(root, 'inside').questionsDir);

    const store = new TaskStore(root);
    assert.deepEqual((await store.list()).map((t) => t.id), ['inside']);
    await assert.rejects(store.get('outside'), /symbolic link/, 'a symlinked task folder is not read');
    assert.deepEqual((await store.summary('inside'))!.pendingQuestions, [], 'a symlinked questions/ folder is not read');
  });

  it('lists a task with FIFOs at state.json, events.jsonl and in questions/ promptly (store.list and caesar ps)', async () => {
    const root = tempDir('caesar-sec-fifo-');
    writeState(root, 'good-task', { status: 'succeeded' });
    writeFileSync(taskPaths(root, 'good-task').events, eventLine(root, 'good-task', 0));
    mkdirSync(taskPaths(root, 'fifo-state').dir, { recursive: true });
    mkfifo(taskPaths(root, 'fifo-state').state);
    writeState(root, 'fifo-rest', { status: 'succeeded' });
    mkfifo(taskPaths(root, 'fifo-rest').events);
    mkfifo(taskPaths(root, 'fifo-rest').result);
    mkfifo(path.join(taskPaths(root, 'fifo-rest').questionsDir, 'q1.json'));

    const list = await within(3_000, 'store.list()', new TaskStore(root).list());
    assert.deepEqual(list.map((t) => t.id).sort(), ['fifo-rest', 'good-task']);
    const rest = list.find((t) => t.id === 'fifo-rest')!;
    assert.deepEqual(rest.pendingQuestions, []);
    assert.equal(rest.result, undefined);
    assert.equal(rest.lastEvent, undefined);

    const ps = await runCaesar(['ps', '--root', root], root, 15_000);
    assert.equal(ps.code, 0, ps.stderr);
    assert.match(ps.stdout, /good-task/);
    assert.match(ps.stdout, /fifo-rest/);
  });

  it('the tail refuses a FIFO at events.jsonl instead of blocking', async () => {
    const dir = tempDir('caesar-sec-tail-');
    const file = path.join(dir, 'events.jsonl');
    mkfifo(file);
    const errors: Error[] = [];
    const sub = tailLines(file, { fromOffset: 0, onLines: () => assert.fail('a FIFO yields no lines'), onError: (e) => errors.push(e), safetyIntervalMs: 0 });
    try {
      await waitFor('the tail to report the FIFO', () => errors.length > 0);
      assert.match(String(errors[0]), /FIFO/, 'the tail reports the refusal');
      // libuv's pool is not pinned by a blocked open: other reads still complete.
      writeFileSync(path.join(dir, 'other.json'), '{"x":1}');
      const reads = Array.from({ length: 8 }, () => readJsonFile(path.join(dir, 'other.json')));
      assert.deepEqual(await within(2_000, 'later reads', Promise.all(reads)), Array(8).fill({ x: 1 }));
    } finally {
      sub.dispose();
    }
  });

  // Both modes: unconfined, the supervisor's readers meet the FIFOs in the task folder itself (an unconfined task's
  // only protection); sandboxed, they stay in the agent's view of it and are refused there, unread.
  for (const mode of ['off', 'auto'] as const) {
    it(`a supervisor whose agent planted FIFOs (report, final message, question, answer, progress) and a /dev/zero link still finishes (sandbox ${mode})`, async function () {
      if (mode === 'auto') await needs(this, 'bubblewrap');
      const repo = makeRepo();
      const { id } = await startFixture(repo, { mode: 'plant-fifo' }, { sandbox: { mode } });
      const done = await waitForFinished(repo, id, 30_000);
      assert.equal(done.state.status, 'succeeded', JSON.stringify(done.state));
      assert.equal(done.state.sandbox?.confined, mode === 'auto');
      assert.equal(done.result.report_source, 'synthesized');
      if (mode === 'off') {
        assert.match(done.result.agent_report_error ?? '', /report\.json was refused: .*FIFO/);
      } else {
        const refused = done.result.report.findings.filter((f) => f.title === 'Agent report refused' && f.severity === 'high').map((f) => f.detail);
        assert.ok(refused.some((d) => /^report\.json was refused: it is a FIFO, not a regular file/.test(d)), refused.join('\n'));
      }
      assert.equal(done.events.filter((e) => e.type === 'finished').length, 1);
      assert.equal(done.events.filter((e) => e.type === 'question').length, 0, 'no question came from a FIFO or /dev/zero');

      const list = await within(3_000, 'store.list()', new TaskStore(repo).list());
      assert.deepEqual(list.map((t) => t.id), [id]);
      const ps = await runCaesar(['ps', '--root', repo], repo, 15_000);
      assert.equal(ps.code, 0, ps.stderr);
      assert.match(ps.stdout, new RegExp(id.slice(0, 10)));
      const logs = await runCaesar(['logs', id, '--root', repo], repo, 15_000);
      assert.equal(logs.code, 0, logs.stderr);
    });
  }
});

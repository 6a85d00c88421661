/*
 * End to end, across real processes: `caesar run --agent demo` (its detached supervisor and the demo agent) in one
 * process; ps, watch, logs --follow, answer, cancel, diff and apply each in their own `node dist/caesar.js` process.
 */
import { strict as assert } from 'node:assert';
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { ANSI, CAESAR_JS, caesarOnce, cleanupAll, ensureBuilt, makeRepo, spawnCaesar } from './follow-helpers';
import { waitFor } from '../support/wait';
import { needs } from '../support/needs';

interface PsRow {
  id: string;
  status: string;
  objective: string;
  pending_questions: Array<{ id: string; question: string }>;
}

async function ps(repo: string): Promise<PsRow[]> {
  const r = await caesarOnce(repo, ['ps', '--json']);
  assert.equal(r.code, 0, r.stderr);
  return JSON.parse(r.stdout) as PsRow[];
}

/** Polls `caesar ps --json` (another process each time) until `predicate` finds a task. */
async function waitForTask(repo: string, predicate: (row: PsRow) => boolean, what: string, timeoutMs = 20_000): Promise<PsRow> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const row = (await ps(repo)).find(predicate);
    if (row) return row;
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 150));
  }
}

const DEMO_ENV = { CAESAR_DEMO_DELAY_MS: '100' };

describe('caesar CLI across processes (demo agent)', function () {
  this.timeout(120_000);
  before(ensureBuilt);
  after(cleanupAll);

  it('run --json → diff shows the edit → apply puts it in the workspace, whose uncommitted edits survive', async () => {
    const repo = makeRepo();
    writeFileSync(path.join(repo, 'README.md'), '# demo\nuncommitted edit of the user\n');
    const run = await caesarOnce(repo, ['run', '--agent', 'demo', '--isolation', 'worktree', 'write NOTES.md', '--json'], DEMO_ENV);
    assert.equal(run.code, 0, run.stderr);
    const outcome = JSON.parse(run.stdout) as { task_id: string; status: string; changes_verified_by: string };
    assert.equal(outcome.status, 'succeeded');
    assert.equal(outcome.changes_verified_by, 'git');

    const diff = await caesarOnce(repo, ['diff', outcome.task_id]);
    assert.equal(diff.code, 0, diff.stderr);
    assert.match(diff.stdout, /A\s+NOTES\.md\s+\+\d+ -0/);
    assert.match(diff.stdout, /\+\+\+ b\/NOTES\.md/);
    assert.doesNotMatch(diff.stdout, ANSI);

    const apply = await caesarOnce(repo, ['apply', outcome.task_id]);
    assert.equal(apply.code, 0, apply.stderr);
    assert.match(readFileSync(path.join(repo, 'NOTES.md'), 'utf8'), /write NOTES\.md/);
    assert.equal(readFileSync(path.join(repo, 'README.md'), 'utf8'), '# demo\nuncommitted edit of the user\n');
  });

  it('a running task is visible (ps), followable (logs --follow, watch), answerable, and watch shows its question first and its silence', async () => {
    const repo = makeRepo();
    const ndjson = spawnCaesar(repo, ['watch', '--json']);
    const asking = spawnCaesar(repo, ['run', '--agent', 'demo', '--isolation', 'worktree', 'ask a question, then write ASKED.md'], DEMO_ENV);
    const other = spawnCaesar(repo, ['run', '--agent', 'demo', '--isolation', 'worktree', 'write OTHER.md'], DEMO_ENV);

    const row = await waitForTask(repo, (r) => r.objective.startsWith('ask') && r.pending_questions.length > 0, 'the demo agent\'s question');
    assert.equal(row.status, 'running');
    const question = row.pending_questions[0]!;

    const logs = spawnCaesar(repo, ['logs', row.id, '--follow']);
    const watch = spawnCaesar(repo, ['watch', row.id]);

    const frame = await caesarOnce(repo, ['watch', '--once', row.id]);
    assert.equal(frame.code, 0, frame.stderr);
    const block = frame.stdout.slice(frame.stdout.indexOf(row.id.slice(0, 10)));
    const lines = block.split('\n');
    assert.match(lines[2]!, new RegExp(`\\? ${question.question.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`), `question first:\n${frame.stdout}`);
    assert.match(block, new RegExp(`caesar answer ${row.id} ${question.id}`));
    assert.doesNotMatch(frame.stdout, ANSI);

    // The agent now waits for the answer and says nothing: after 30 s the plain watch flags the silence.
    await waitFor('the silence line from watch', () => /silence 3\ds/.test(watch.output()), 45_000);

    const answered = await caesarOnce(repo, ['answer', row.id, question.id, 'yes, go ahead']);
    assert.equal(answered.code, 0, answered.stderr);

    assert.equal(await asking.exited, 0, asking.errors());
    assert.equal(await other.exited, 0, other.errors());
    assert.equal(await logs.exited, 0, logs.errors());
    assert.equal(await watch.exited, 0, watch.errors());
    assert.match(logs.output(), /^\[0\] started demo/);
    assert.match(logs.output(), /\] question \S+: /);
    assert.match(logs.output(), /\] answer \S+: yes, go ahead/);
    assert.match(logs.output(), /\] finished report "success".*\n$/);
    const prefix = `${row.id.slice(0, 10)} demo  `;
    assert.ok(watch.output().trim().split('\n').every((l) => l.startsWith(prefix)), watch.output());
    assert.doesNotMatch(watch.output() + logs.output(), ANSI);

    const otherId = (await ps(repo)).find((r) => r.objective === 'write OTHER.md')!.id;
    await waitFor('both finished events in the NDJSON stream', () => (ndjson.output().match(/"type":"finished"/g) ?? []).length === 2);
    ndjson.kill('SIGINT');
    assert.equal(await ndjson.exited, 0, ndjson.errors());
    const events = ndjson.output().trim().split('\n').map((l) => JSON.parse(l) as { task_id: string; seq: number; type: string });
    for (const id of [row.id, otherId]) {
      const seqs = events.filter((e) => e.task_id === id).map((e) => e.seq);
      assert.deepEqual(seqs, seqs.map((_, i) => i), `every event of ${id}, once, in order`);
    }
  });

  it('a task started by one process is cancelled from another: cancel --wait ends with status cancelled', async () => {
    const repo = makeRepo();
    const run = spawnCaesar(repo, ['run', '--agent', 'demo', '--isolation', 'worktree', 'ask a question, then write LATER.md'], DEMO_ENV);
    const row = await waitForTask(repo, (r) => r.pending_questions.length > 0, 'the task to be waiting');
    const cancel = await caesarOnce(repo, ['cancel', row.id, '--wait']);
    assert.equal(cancel.code, 0, cancel.stderr);
    assert.match(cancel.stdout, new RegExp(`Task ${row.id} cancelled\\.`));
    await run.exited;
    const after = (await ps(repo)).find((r) => r.id === row.id)!;
    assert.equal(after.status, 'cancelled', 'the supervisor recorded the cancel and nothing overwrote it');
    const again = await caesarOnce(repo, ['cancel', row.id]);
    assert.equal(again.code, 0);
    assert.match(again.stdout, /nothing to cancel/);
  });

  it('on a real terminal (a pty from `script`): alternate screen, live frame with the task, Ctrl-C quits and restores the terminal', async function () {
    await needs(this, 'script');
    const repo = makeRepo();
    const run = spawnCaesar(repo, ['run', '--agent', 'demo', '--isolation', 'worktree', 'ask a question, then write PTY.md'], DEMO_ENV);
    const row = await waitForTask(repo, (r) => r.pending_questions.length > 0, 'the task to be waiting');
    const pty = spawn('script', ['-qfec', `${JSON.stringify(process.execPath)} ${JSON.stringify(CAESAR_JS)} watch`, '/dev/null'], {
      cwd: repo,
      env: { ...process.env, TERM: 'xterm' },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let screen = '';
    pty.stdout.on('data', (d) => (screen += d));
    const exited = new Promise<number | null>((resolve) => pty.on('close', (code) => resolve(code)));
    try {
      // The start of the question: a long one is cut at the terminal's width.
      await waitFor('the question on the live screen', () => screen.includes(row.pending_questions[0]!.question.slice(0, 24)), 30_000);
      assert.ok(screen.startsWith('\x1b[?1049h\x1b[?25l'), 'alternate screen and hidden cursor first');
      assert.match(screen, /\x1b\[\d+m/, 'colours on a terminal');
      pty.stdin.write('\x03');
      assert.equal(await exited, 0);
    } finally {
      // A failure above must not leave `script` and its watch running: mocha would never exit.
      if (pty.exitCode === null && pty.signalCode === null) pty.kill('SIGKILL');
      await caesarOnce(repo, ['cancel', row.id]).catch(() => undefined);
    }
    assert.match(screen, /\x1b\[\?25h\x1b\[\?1049l\s*$/, `cursor shown and main screen restored at exit; the screen ended with ${JSON.stringify(screen.slice(-200))}`);
    const cancel = await caesarOnce(repo, ['cancel', row.id, '--wait']);
    assert.equal(cancel.code, 0, cancel.stderr);
    await run.exited;
  });
});

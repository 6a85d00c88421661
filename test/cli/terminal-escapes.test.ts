/*
 * Issue 13 item 3: agent text never drives the terminal. An agent chooses file names and event texts, a cloned
 * repository chooses task records; with ESC sequences in them (OSC title and clipboard, screen clear, colours, a C1
 * CSI, a bidi override) and tabs or newlines in names, `caesar diff --stat`, `apply`, `logs`, `ps` and `watch` printed
 * them raw. Each command runs here as a real process (the bundled CLI, stdout a pipe: our own colours are off, so any
 * control byte in the output came from the payload).
 */
import { strict as assert } from 'node:assert';
import { writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { spawn } from 'node:child_process';
import { buildCli, runBuiltCli, waitFor } from '../engine/runtime/helpers';
import { within } from '../engine/security/helpers';
import { termSafe, termSafeBlock } from '../../src/cli/format';
import { addWorktree, appendEvents, cleanupAll, event, makeRepo, makeTask, writeState } from './follow-helpers';

/** The bundled CLI as a real process, colours on where a TTY would have them (NO_COLOR empty). */
const caesar = (cwd: string, args: string[], ms = 20_000) => runBuiltCli(args, cwd, ms, { ...process.env, NO_COLOR: '' });

/** Sets the window title, writes the clipboard (OSC 52), clears the screen, colours red, a C1 CSI, a bidi override. */
const PAYLOAD = '\x1b]0;PWNED\x07\x1b]52;c;ZWNobyBwd25lZA==\x07\x1b[2J\x1b[31mred\u009b2J\u202eevil';
/** Control characters that must never reach the terminal from a payload (tab and newline are checked per command). */
// eslint-disable-next-line no-control-regex
const CONTROLS = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;


function assertInert(what: string, text: string): void {
  const hit = CONTROLS.exec(text);
  assert.equal(hit, null, `${what} printed a raw control character U+${hit?.[0].charCodeAt(0).toString(16).padStart(4, '0')}:\n${JSON.stringify(text)}`);
}

/** A finished worktree task whose agent created files with hostile names and whose events carry the payload. */
function hostileTask(repo: string, over: Record<string, unknown> = {}) {
  const task = makeTask(repo, { status: 'succeeded', report_status: 'success', ended_at: new Date().toISOString(), supervisor_pid: undefined, ...over });
  const state = { ...task, ...addWorktree(repo, task.id) };
  writeState(repo, state);
  writeFileSync(path.join(state.worktree, `title${PAYLOAD}.txt`), 'x\n');
  writeFileSync(path.join(state.worktree, 'tab\there.txt'), 'x\n');
  writeFileSync(path.join(state.worktree, 'new\nline.txt'), 'x\n');
  appendEvents(
    repo,
    task.id,
    event(task.id, { type: 'started', agent: 'demo', command: 'demo' }),
    event(task.id, { type: 'message', text: `hello ${PAYLOAD}` }),
    event(task.id, { type: 'file_changed', path: `title${PAYLOAD}.txt`, action: 'created' }),
    event(task.id, { type: 'tool_use', tool: `sh${PAYLOAD}`, input_summary: `ls ${PAYLOAD}`, status: 'started', id: 'x1' }),
    event(task.id, { type: 'finished', status: 'success', exit_code: 0, summary: `done ${PAYLOAD}` }),
  );
  return state;
}

describe('security: agent text never drives the terminal (issue 13.3)', function () {
  this.timeout(60_000);
  after(cleanupAll);

  it('termSafe escapes C0 (tab and newline included), DEL, C1 and bidi controls; termSafeBlock keeps the layout', () => {
    assert.equal(termSafe('a\x1b]0;t\x07b'), 'a\\e]0;t\\x07b');
    assert.equal(termSafe('a\tb\nc\rd\x7f\u009b\u202e\u2066'), 'a\\tb\\nc\\rd\\x7f\\x9b\\u202e\\u2066');
    assert.equal(termSafe('plain ünïcode → ✓ 日本'), 'plain ünïcode → ✓ 日本');
    assert.equal(termSafeBlock('line\tone\nline\x1b[2J two'), 'line\tone\nline\\e[2J two');
  });

  it('diff --stat shows hostile file names escaped, one line each', async () => {
    const repo = makeRepo();
    const task = hostileTask(repo);
    const run = await caesar(repo, ['diff', task.id, '--stat']);
    assert.equal(run.code, 0, run.stderr);
    assertInert('diff --stat', run.stdout.replace(/\n/g, ''));
    assert.match(run.stdout, /title\\e\]0;PWNED\\x07\\e\]52;c;ZWNobyBwd25lZA==\\x07\\e\[2J\\e\[31mred\\x9b2J\\u202eevil\.txt/);
    // One line per file: a header and three files, whatever their names hold.
    assert.equal(run.stdout.trimEnd().split('\n').length, 4, run.stdout);
    assert.match(run.stdout, /tab\\there\.txt/);
    assert.match(run.stdout, /new\\nline\.txt/);
  });

  it('diff (with the patch) escapes controls in the file contents', async () => {
    const repo = makeRepo();
    const task = hostileTask(repo);
    writeFileSync(path.join(task.worktree, 'README.md'), `# demo\n${PAYLOAD}\n`);
    const run = await caesar(repo, ['diff', task.id]);
    assert.equal(run.code, 0, run.stderr);
    assertInert('diff', run.stdout);
    assert.match(run.stdout, /^\+\\e\]0;PWNED/m);
  });

  it('apply lists the applied hostile names escaped', async () => {
    const repo = makeRepo();
    const task = hostileTask(repo);
    const run = await caesar(repo, ['apply', task.id]);
    assert.equal(run.code, 0, run.stderr);
    assertInert('apply', run.stdout.replace(/\n/g, ''));
    assert.match(run.stdout, /title\\e\]0;PWNED\\x07/);
    assert.match(run.stdout, /^ {2}new\\nline\.txt$/m);
  });

  it('logs prints event texts escaped; logs --raw escapes all but newlines and tabs', async () => {
    const repo = makeRepo();
    const task = hostileTask(repo);
    const run = await caesar(repo, ['logs', task.id]);
    assert.equal(run.code, 0, run.stderr);
    assertInert('logs', run.stdout.replace(/\n/g, ''));
    assert.match(run.stdout, /^\[1\] message hello \\e\]0;PWNED\\x07/m);
    assert.match(run.stdout, /^\[2\] file_changed created title\\e\]0;PWNED/m);
    assert.equal(run.stdout.trimEnd().split('\n').length, 5, run.stdout);

    writeFileSync(path.join(repo, '.caesar', 'tasks', task.id, 'raw.log'), `agent says\t${PAYLOAD}\nsecond line\n`);
    const raw = await caesar(repo, ['logs', task.id, '--raw']);
    assert.equal(raw.code, 0, raw.stderr);
    assertInert('logs --raw', raw.stdout.replace(/[\n\t]/g, ''));
    assert.match(raw.stdout, /^agent says\t\\e\]0;PWNED/m);
    assert.match(raw.stdout, /^second line$/m);
  });

  it('ps shows a hostile task record (agent, role, report status) escaped, one row per task', async () => {
    const repo = makeRepo();
    makeTask(repo, { agent: `demo${PAYLOAD}`, role: `rev\tiewer\nX`, status: 'succeeded', report_status: 'success', ended_at: new Date().toISOString() });
    const run = await caesar(repo, ['ps']);
    assert.equal(run.code, 0, run.stderr);
    assertInert('ps', run.stdout.replace(/\n/g, ''));
    assert.match(run.stdout, /demo\\e\]0;PWNED\\x07/);
    assert.match(run.stdout, /rev\\tiewer\\nX/);
    assert.equal(run.stdout.trimEnd().split('\n').length, 2, run.stdout);
  });

  it('watch (the frame and the plain event stream) shows event texts, objectives and agents escaped', async () => {
    const repo = makeRepo();
    const task = hostileTask(repo, { objective: `obj ${PAYLOAD}`, agent: `demo${PAYLOAD}` });
    const frame = await caesar(repo, ['watch', '--once', task.id]);
    assert.equal(frame.code, 0, frame.stderr);
    assertInert('watch --once', frame.stdout.replace(/\n/g, ''));
    assert.match(frame.stdout, /demo\\e\]0;PWNED/);

    // A running task followed outside a terminal: one line per event, then the end when the task settles.
    const running = hostileTask(repo, { status: 'running', report_status: undefined, ended_at: undefined, supervisor_pid: process.pid, objective: `obj ${PAYLOAD}`, agent: `demo${PAYLOAD}` });
    const follow = spawn(process.execPath, [await buildCli(), 'watch', running.id], { cwd: repo, env: { ...process.env, NO_COLOR: '' }, stdio: ['ignore', 'pipe', 'pipe'] });
    let followed = '';
    let followErr = '';
    follow.stdout.on('data', (d: Buffer) => (followed += d.toString()));
    follow.stderr.on('data', (d: Buffer) => (followErr += d.toString()));
    const exited = new Promise<number | null>((resolve) => follow.on('close', resolve));
    // The task settles only once watch is following it (it has printed the events so far), whatever the load.
    await waitFor('watch to print the events so far', () => followed.includes('tool_use started'), 30_000);
    writeState(repo, { ...running, status: 'succeeded', report_status: 'success', ended_at: new Date().toISOString() });
    let code: number | null;
    try {
      code = await within(30_000, 'caesar watch to end with the task', exited);
    } finally {
      if (follow.exitCode === null && follow.signalCode === null) follow.kill('SIGKILL');
    }
    const plain = { code, stdout: followed, stderr: followErr };
    assert.equal(plain.code, 0, plain.stderr);
    assertInert('watch', plain.stdout.replace(/\n/g, ''));
    assert.match(plain.stdout, /demo\\e\]0;PWNED.*message hello \\e\]0;PWNED\\x07/);
    assert.match(plain.stdout, /tool_use started sh\\e\]0;PWNED/);
  });
});

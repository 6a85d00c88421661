import { strict as assert } from 'node:assert';
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { probeIdleSupervisor, startIdleSupervisor } from '../../../src/engine/launch/warm-client';
import { buildId, socketPath } from '../../../src/engine/launch/warm-common';
import { recordKey, recordKeyPath } from '../../../src/engine/store/record-key';
import { buildShippedCli, processesMatching, shippedCliEnv, waitFor } from './helpers';

/*
 * Issue 34: an agent that reaches the user's idle supervisor's socket (a runtime folder the sandbox did not hide) hands
 * it a task of its own making, with its own PATH, and its fake git runs outside the sandbox. The hijacker below is a
 * plain Node client of the hand-off protocol; it signs its hand-off with the user's record key when it can read it.
 * Inside a bubblewrap sandbox that hides the key's folder, as Caesar's own does (sandbox.ts), it is refused; the
 * control runs the same hijacker where the key is readable, and the idle supervisor takes its task and runs its git.
 */

const HIJACKER = `
const net = require('node:net'), fs = require('node:fs'), crypto = require('node:crypto');
const [socket, keyFile, taskDir, bin] = process.argv.slice(1);
let key;
try { key = Buffer.from(fs.readFileSync(keyFile, 'utf8').trim(), 'hex'); } catch { key = Buffer.alloc(32); }
const c = net.connect(socket);
let text = '';
c.on('data', (d) => {
  text += d;
  const lines = text.split('\\n');
  if (lines.length < 2) return;
  const hello = JSON.parse(lines[0]);
  if (lines.length > 2 || hello.sent) { process.stdout.write(lines[1]); process.exit(0); }
  hello.sent = true;
  const assignment = { taskDir, cwd: taskDir, env: { PATH: bin + ':/usr/bin:/bin', HOME: taskDir } };
  const task = JSON.stringify([assignment.taskDir, assignment.cwd, Object.entries(assignment.env)]);
  const proof = crypto.createHmac('sha256', key).update('caesar warm hand-off\\0' + hello.challenge + '\\0' + hello.build + '\\0' + task).digest('hex');
  c.write(JSON.stringify({ build: hello.build, assignment, proof }) + '\\n');
  text = lines[0] + '\\n';
  c.on('data', (more) => { text += more; });
  c.on('end', () => { process.stdout.write(text.split('\\n')[1] ?? ''); process.exit(0); });
});
c.on('error', (e) => { process.stdout.write('error ' + e.code); process.exit(0); });
`;

const hasBwrap = process.platform === 'linux' && spawnSync('bwrap', ['--ro-bind', '/', '/', 'true'], { stdio: 'ignore' }).status === 0;

describe('engine/runtime: the idle warm supervisor takes a task only from outside the sandbox (issue 34)', function () {
  this.timeout(120_000);
  let script: string;
  let env: NodeJS.ProcessEnv;

  before(async () => {
    script = path.join(path.dirname(await buildShippedCli()), 'supervisor.js');
    recordKey(); // made now if this is the first use: the sandbox below hides a folder that exists
  });

  beforeEach(() => {
    const warm = mkdtempSync(path.join(tmpdir(), 'cw-'));
    chmodSync(warm, 0o700);
    env = { ...shippedCliEnv(path.join(path.dirname(script), 'caesar.js')), CAESAR_WARM_SUPERVISOR: '1', CAESAR_WARM_DIR: warm };
  });

  afterEach(() => {
    for (const pid of processesMatching(`${script}\0idle`)) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        /* gone */
      }
    }
  });

  /** A task folder and a fake git of the hijacker's, which leaves a mark where it ran. */
  function hijackerFiles(): { taskDir: string; bin: string; mark: string } {
    const root = mkdtempSync(path.join(tmpdir(), 'caesar-hijack-'));
    const taskDir = path.join(root, 'repo', '.caesar', 'tasks', `t_${'0'.repeat(32)}`);
    const bin = path.join(root, 'bin');
    mkdirSync(taskDir, { recursive: true });
    execFileSync('git', ['init', '-q', path.join(root, 'repo')]);
    mkdirSync(bin);
    writeFileSync(path.join(taskDir, 'supervisor.log'), '');
    const mark = path.join(root, 'git-ran');
    writeFileSync(path.join(bin, 'git'), `#!/bin/sh\necho "$@" >> ${mark}\nexec /usr/bin/git "$@"\n`, { mode: 0o755 });
    return { taskDir, bin, mark };
  }

  async function idleSocketOfThisBuild(): Promise<string> {
    const pid = startIdleSupervisor(script, env);
    assert.ok(pid, 'an idle supervisor started');
    await waitFor('it to listen', async () => (await probeIdleSupervisor(script, env))?.pid === pid);
    return socketPath(env.CAESAR_WARM_DIR!, buildId(script)!);
  }

  (hasBwrap ? it : it.skip)('a hijacker inside a sandbox that hides the record key is refused; nothing of its runs', async () => {
    const socket = await idleSocketOfThisBuild();
    const { taskDir, bin, mark } = hijackerFiles();
    const root = path.resolve(taskDir, '../../../..');
    const keyFolder = path.dirname(recordKeyPath());
    const reply = execFileSync(
      'bwrap',
      ['--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--tmpfs', keyFolder, '--bind', root, root, '--unshare-pid', '--die-with-parent', process.execPath, '-e', HIJACKER, socket, recordKeyPath(), taskDir, bin],
      { encoding: 'utf8' },
    );
    assert.match(reply, /^refused: no proof that the caller is outside the sandbox/);
    assert.equal(readFileSync(path.join(taskDir, 'supervisor.log'), 'utf8'), '', 'the supervisor never took the task');
    assert.equal(existsSync(mark), false, "the hijacker's git never ran");
    assert.ok((await probeIdleSupervisor(script, env))?.pid, 'the idle supervisor is still there, free, for the user');
  });

  it('control: the same hijacker where the record key can be read is given the task (the supervisor adopts its environment)', async () => {
    const socket = await idleSocketOfThisBuild();
    const { taskDir, bin } = hijackerFiles();
    const reply = execFileSync(process.execPath, ['-e', HIJACKER, socket, recordKeyPath(), taskDir, bin], { encoding: 'utf8' });
    assert.equal(reply, 'taken');
    // Taken: from here the supervisor runs with the hijacker's PATH and reads its task folder (this one is no real
    // task, so it stops there; the hijacker made a real one with a nested `caesar run`, and its git ran).
    await waitFor('the supervisor to log the task it took', () => /was kept warm .* and took it/.test(readFileSync(path.join(taskDir, 'supervisor.log'), 'utf8')));
  });
});

import { strict as assert } from 'node:assert';
import { spawn, type ChildProcess } from 'node:child_process';
import { appendFileSync, chmodSync, copyFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import * as net from 'node:net';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { handOffToIdle, probeIdleSupervisor, startIdleSupervisor } from '../../../src/engine/launch/warm-client';
import { buildId, handOffProof, socketPath } from '../../../src/engine/launch/warm-common';
import { recordKey } from '../../../src/engine/store/record-key';
import { taskPaths, type TaskState } from '../../../src/protocol';
import { buildShippedCli, makeRepo, pidAlive, processesMatching, repoWithShellAgent, runCliScript, shippedCliEnv, SUCCESS_REPORT, trustedHome, waitFor, waitForFinished } from './helpers';
import { needs } from '../../support/needs';

/*
 * Issue 27: the user's warm supervisor. An idle `supervisor.js idle` waits on a unix socket in the user's private
 * folder; `caesar run` (delegate()) hands it the task instead of starting a Node process, and starts the next idle one.
 * These tests run the CLI as it ships, each with a warm folder of its own, and check the hand-off and every way it
 * can fail (each must fall back to a fresh supervisor and still run the task).
 */

/**
 * A repository whose `writer` agent writes out.txt, optionally once `gate` exists, and reports success. The gate is
 * `<repo>/.caesar/gate`, reached from the task folder: the agent runs sandboxed, where the repository is visible
 * (read-only) and the host's /tmp is not.
 */
function repoWithAgent(gated = false, extraConfig = ''): { repo: string; gate: string } {
  const wait = gated ? `while [ ! -e "$CAESAR_TASK_DIR/../../gate" ]; do sleep 0.05; done; ` : '';
  const repo = repoWithShellAgent(`${wait}echo x > out.txt; printf '%s' '${SUCCESS_REPORT}' > "$CAESAR_REPORT_PATH"`, extraConfig);
  return { repo, gate: path.join(repo, '.caesar', 'gate') };
}

const RUN_ARGS = ['run', 'write out.txt', '--agent', 'writer', '--isolation', 'worktree', '--mode', 'write', '--json'];

function taskOutcome(repo: string, stdout: string): { id: string; state: TaskState; log: string } {
  const outcome = JSON.parse(stdout) as { task_id: string; status: string };
  assert.equal(outcome.status, 'succeeded', stdout);
  const paths = taskPaths(repo, outcome.task_id);
  return { id: outcome.task_id, state: JSON.parse(readFileSync(paths.state, 'utf8')) as TaskState, log: readFileSync(paths.supervisorLog, 'utf8') };
}

/** A copy of the shipped build in a folder of its own: a build whose files a test may change. */
function copyBuild(cli: string): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'caesar-warm-build-'));
  for (const file of ['caesar.js', 'caesar-main.js', 'caesar-run.js', 'supervisor.js', 'supervisor-main.js']) copyFileSync(path.join(path.dirname(cli), file), path.join(dir, file));
  return path.join(dir, 'caesar.js');
}

/** A stand-in for an idle supervisor in a process of its own: `behaviour` runs in it, with SOCKET and BUILD set. */
function fakeIdle(socket: string, build: string, behaviour: string): ChildProcess {
  const code = `const net = require('node:net'); const SOCKET = ${JSON.stringify(socket)}, BUILD = ${JSON.stringify(build)}; ${behaviour}`;
  return spawn(process.execPath, ['-e', code], { stdio: 'ignore' });
}

describe('engine/runtime: the warm supervisor (issue 27)', function () {
  this.timeout(120_000);
  let cli: string;
  let script: string;
  let env: NodeJS.ProcessEnv;
  let started: string[];

  before(async () => {
    cli = await buildShippedCli();
    script = path.join(path.dirname(cli), 'supervisor.js');
  });

  beforeEach(() => {
    const warm = mkdtempSync(path.join(tmpdir(), 'cw-'));
    chmodSync(warm, 0o700);
    env = { ...shippedCliEnv(cli), CAESAR_WARM_SUPERVISOR: '1', CAESAR_WARM_DIR: warm };
    started = [path.dirname(cli)];
  });

  afterEach(() => {
    // Idle supervisors of this test's builds only (their command lines name the private build folders).
    for (const folder of started) for (const pid of processesMatching(`${folder}/supervisor.js\0idle`)) process.kill(pid, 'SIGKILL');
  });

  /** `caesar run` of the writer agent in `repo` (trusted) from `build`, which must succeed: its task as it ended. */
  async function runWriter(repo: string, runEnv = env, build = cli): Promise<ReturnType<typeof taskOutcome>> {
    const run = await runCliScript(build, RUN_ARGS, repo, 60_000, { ...runEnv, HOME: trustedHome(build, repo) });
    assert.equal(run.code, 0, run.stderr + run.stdout);
    return taskOutcome(repo, run.stdout);
  }

  async function idleListening(supervisorScript = script, e = env, not?: number) {
    return waitFor('an idle supervisor to listen', async () => {
      const hello = await probeIdleSupervisor(supervisorScript, e);
      return hello && hello.pid !== not ? hello : undefined;
    });
  }

  it('caesar run hands its task to the idle supervisor, whose pid supervises it; the next idle one starts', async () => {
    const pid = startIdleSupervisor(script, env);
    assert.ok(pid);
    assert.equal((await idleListening()).pid, pid);

    const { repo } = repoWithAgent();
    const { id, state, log } = await runWriter(repo);
    assert.equal(state.supervisor_pid, pid, `the pre-started supervisor ran the task; supervisor.log:\n${log}`);
    assert.match(log, new RegExp(`supervisor ${pid} was kept warm`));
    // Its last log line follows the final state, which `caesar run` returned on: wait for it, do not race it.
    await waitFor('the supervisor to log its end', () => /ended: succeeded/.test(readFileSync(taskPaths(repo, id).supervisorLog, 'utf8')));
    assert.equal(readFileSync(path.join(state.worktree!, 'out.txt'), 'utf8').trim(), 'x');

    const next = await idleListening(script, env, pid);
    assert.notEqual(next.pid, pid, 'another idle supervisor took its place');
    assert.ok(pidAlive(next.pid));
  });

  it('an idle supervisor exits after CAESAR_WARM_IDLE_MS with nothing to do, and removes its socket', async () => {
    const idleEnv: NodeJS.ProcessEnv = { ...env, CAESAR_WARM_IDLE_MS: '1500' };
    const pid = startIdleSupervisor(script, idleEnv);
    assert.ok(pid);
    const socket = socketPath(idleEnv.CAESAR_WARM_DIR!, buildId(script)!);
    await waitFor('its socket', () => existsSync(socket), 30_000, 5);
    await waitFor('the idle supervisor to exit', () => !pidAlive(pid), 30_000);
    assert.equal(existsSync(socket), false);
  });

  it('a new idle supervisor loads its bundle only after CAESAR_WARM_LOAD_DELAY_MS (off the task that started it)', async () => {
    const delayed: NodeJS.ProcessEnv = { ...env, CAESAR_WARM_LOAD_DELAY_MS: '1500' };
    const socket = socketPath(delayed.CAESAR_WARM_DIR!, buildId(script)!);
    const since = Date.now();
    const pid = startIdleSupervisor(script, delayed);
    assert.ok(pid);
    await waitFor('its socket', () => existsSync(socket), 30_000, 5);
    assert.ok(Date.now() - since >= 1500, `listening after ${Date.now() - since} ms, before its delay`);
    assert.equal((await probeIdleSupervisor(script, delayed))?.pid, pid);
  });

  it('an idle supervisor in another network namespace never takes a task: it would run it in its world', async function () {
    // `unshare -n` needs root (CI runs as root); elsewhere a user namespace would change the folder's owner as seen inside.
    await needs(this, 'root');
    const other = spawn('unshare', ['-n', process.execPath, script, 'idle'], { cwd: '/', detached: true, stdio: 'ignore', env });
    other.unref();
    await waitFor('its socket', () => readdirSync(env.CAESAR_WARM_DIR!).some((f) => f.endsWith('.sock')), 30_000, 5);
    assert.equal(await probeIdleSupervisor(script, env), undefined, 'no idle supervisor of this namespace');

    const { repo } = repoWithAgent();
    const { state, log } = await runWriter(repo);
    assert.notEqual(state.supervisor_pid, other.pid, `the other namespace's supervisor ran the task; supervisor.log:\n${log}`);
    assert.ok(pidAlive(other.pid!), 'it is still waiting, untouched');
  });

  it('refuses a hand-off of another build; exits once its own code changes; the next task starts fresh', async () => {
    const copy = copyBuild(cli);
    started.push(path.dirname(copy));
    const copyScript = path.join(path.dirname(copy), 'supervisor.js');
    const copyEnv = { ...env, CAESAR_CLI_JS: copy };
    const pid = startIdleSupervisor(copyScript, copyEnv);
    assert.ok(pid);
    await idleListening(copyScript, copyEnv);
    const socket = socketPath(env.CAESAR_WARM_DIR!, buildId(copyScript)!);

    const answer = await new Promise<string>((resolve) => {
      let text = '';
      const client = net.connect(socket);
      client.on('data', (chunk) => {
        text += chunk.toString();
        if (text.split('\n').length !== 2) return;
        // A proven hand-off (the user's own caller), of another build.
        const assignment = { taskDir: '/nonexistent', cwd: '/', env: {} };
        const proof = handOffProof(recordKey(), (JSON.parse(text.split('\n')[0]!) as { challenge: string }).challenge, 'an-older-build', assignment);
        client.write(`${JSON.stringify({ build: 'an-older-build', assignment, proof })}\n`);
      });
      client.on('close', () => resolve(text.split('\n')[1] ?? ''));
    });
    assert.equal(answer, 'refused: another build');
    assert.ok(pidAlive(pid), 'a refused hand-off does not end it');

    appendFileSync(path.join(path.dirname(copy), 'supervisor-main.js'), '\n// rebuilt\n');
    await waitFor('the stale idle supervisor to exit', () => !pidAlive(pid), 30_000);

    const { repo } = repoWithAgent();
    const { state, log } = await runWriter(repo, copyEnv, copy);
    assert.notEqual(state.supervisor_pid, pid);
    assert.doesNotMatch(log, /kept warm/, 'no idle supervisor of the old build ran it');
  });

  it('falls back to a fresh supervisor when the socket is a plain file, and the next idle one replaces the file', async () => {
    const socket = socketPath(env.CAESAR_WARM_DIR!, buildId(script)!);
    writeFileSync(socket, 'garbage');
    const { repo } = repoWithAgent();
    assert.doesNotMatch((await runWriter(repo)).log, /kept warm/);
    await idleListening();
  });

  it('falls back when no one listens on the socket (its supervisor died)', async () => {
    const socket = socketPath(env.CAESAR_WARM_DIR!, buildId(script)!);
    const listener = fakeIdle(socket, '', `net.createServer().listen(SOCKET, () => require('node:fs').writeFileSync(SOCKET + '.ready', ''));`);
    await waitFor('the stand-in to listen', () => existsSync(`${socket}.ready`));
    listener.kill('SIGKILL');
    await waitFor('the stand-in to die', () => listener.exitCode !== null || listener.signalCode !== null);
    assert.ok(existsSync(socket), 'a socket file is left behind, with no one listening');

    const { repo } = repoWithAgent();
    assert.doesNotMatch((await runWriter(repo)).log, /kept warm/);
    await idleListening();
  });

  it('falls back when the idle supervisor dies mid-handshake, after it was sent the task', async () => {
    const build = buildId(script)!;
    const socket = socketPath(env.CAESAR_WARM_DIR!, build);
    const fake = fakeIdle(
      socket,
      build,
      `net.createServer((c) => { c.write(JSON.stringify({ caesar_idle_supervisor: 1, pid: process.pid, build: BUILD, challenge: 'c' }) + '\\n');
        c.on('data', (d) => { if (String(d).includes('\\n')) { require('node:fs').writeFileSync(SOCKET + '.got', d); process.kill(process.pid, 'SIGKILL'); } }); }).listen(SOCKET);`,
    );
    await waitFor('the stand-in to listen', async () => (await probeIdleSupervisor(script, env))?.pid === fake.pid);

    const { repo } = repoWithAgent();
    const { id, state, log } = await runWriter(repo);
    assert.ok(readFileSync(`${socket}.got`, 'utf8').includes(id), 'the stand-in was handed this task before it died');
    assert.notEqual(state.supervisor_pid, fake.pid);
    assert.doesNotMatch(log, /kept warm/);
  });

  it('the task outlives the CLI that handed it to the idle supervisor', async () => {
    const pid = startIdleSupervisor(script, env);
    assert.ok(pid);
    await idleListening();
    const { repo, gate } = repoWithAgent(true);
    const cliProcess = spawn(process.execPath, [cli, ...RUN_ARGS], { cwd: repo, env: { ...env, HOME: trustedHome(cli, repo) }, stdio: 'ignore' });
    const tasks = taskPaths(repo, 't_x').dir.replace(/t_x$/, '');
    const id = await waitFor('the task to run', () => {
      const name = existsSync(tasks) ? readdirSync(tasks).find((n) => n.startsWith('t_')) : undefined;
      // The task folder appears before its first state.json (written whole, by rename): wait for the file too.
      const file = name && path.join(tasks, name, 'state.json');
      if (!file || !existsSync(file)) return undefined;
      const state = JSON.parse(readFileSync(file, 'utf8')) as TaskState;
      return state.status === 'running' && state.agent_pid ? name : undefined;
    }, 30_000);
    cliProcess.kill('SIGKILL');
    await waitFor('the CLI to die', () => cliProcess.exitCode !== null || cliProcess.signalCode !== null);
    writeFileSync(gate, '');
    const finished = await waitForFinished(repo, id, 60_000);
    assert.equal(finished.state.status, 'succeeded', finished.state.error);
    assert.equal(finished.state.supervisor_pid, pid);
  });

  it('a sandboxed task runs confined through the warm supervisor', async function () {
    await needs(this, 'bubblewrap');
    const pid = startIdleSupervisor(script, env);
    assert.ok(pid);
    await idleListening();
    const { repo } = repoWithAgent(false, '[sandbox]\nmode = "required"\n\n');
    const { state } = await runWriter(repo, { ...env, CAESAR_SANDBOX: '' });
    assert.equal(state.supervisor_pid, pid);
    assert.deepEqual(state.sandbox, { confined: true });
    assert.equal(readFileSync(path.join(state.worktree!, 'out.txt'), 'utf8').trim(), 'x');
  });

  it('a warm folder that others may enter turns the warm supervisor off: no idle one, tasks start fresh', async () => {
    chmodSync(env.CAESAR_WARM_DIR!, 0o755);
    assert.equal(startIdleSupervisor(script, env), undefined);
    const { repo } = repoWithAgent();
    assert.doesNotMatch((await runWriter(repo)).log, /kept warm/);
    assert.deepEqual(readdirSync(env.CAESAR_WARM_DIR!), [], 'nothing was made in it');
    assert.deepEqual(processesMatching(`${script}\0idle`), []);
  });

  it("inside a task (an agent's own caesar run) nothing is handed to the user's idle supervisor, and none is started", async () => {
    const pid = startIdleSupervisor(script, env);
    assert.ok(pid);
    await idleListening();
    const inTask = { ...env, CAESAR_TASK_ID: 't_0123456789abcdef0123456789abcdef' };
    const assignment = { taskDir: path.join(makeRepo(), '.caesar', 'tasks', 't_fedcba9876543210fedcba9876543210'), cwd: '/', env: {} };
    assert.equal(await handOffToIdle(script, assignment, inTask), undefined);
    assert.equal(startIdleSupervisor(script, inTask), undefined);
    assert.equal((await probeIdleSupervisor(script, env))?.pid, pid, 'the idle supervisor still waits, untouched');
  });
});

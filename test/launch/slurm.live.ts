import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { readEventsText, type ProtocolEvent } from '../../src/protocol';
import { startResponsesServer, type FakeServer } from '../agents/fake-servers';
import { CAESAR_JS, MODELS, agentEnv, makeRepo, pinnedBinDir, run, tempDir, type Ran } from '../agents/live/harness';
import { writeScript } from '../agents/live/scripts';
import { waitFor } from '../support/wait';

/*
 * The Slurm launcher against a real one-node cluster (test/launch/run.mjs starts munged, slurmctld and slurmd in the
 * same loopback-only network namespace): a task's supervisor becomes a batch job, and everything else — the task
 * files, the events, the diff, cancel — works as with a local supervisor. The user's settings come from a HOME of
 * the suite's own (its global config), as a user's would.
 */

interface Outcome {
  task_id: string;
  status: string;
  report?: { status: string };
  diff?: { files: { path: string; action: string }[] };
}

interface PsEntry {
  id: string;
  status: string;
  job: { kind: string; id: string; state?: string; reason?: string } | null;
}

describe('Slurm launcher: tasks run as batch jobs of a real cluster', function () {
  this.timeout(300_000);
  let root = '';
  let home = '';
  let count = 0;
  const blockers: string[] = [];
  const servers: FakeServer[] = [];

  before(function () {
    if (!process.env.SLURM_CONF) throw new Error('SLURM_CONF is not set: run this suite through test/launch/run.mjs, which starts the cluster');
    assert.ok(fs.existsSync(CAESAR_JS), `${CAESAR_JS} is missing: run npm run build first`);
    root = tempDir('caesar-slurm-live-');
    home = path.join(root, 'home');
    writeGlobalConfig('');
  });

  afterEach(() => {
    for (const job of blockers.splice(0)) spawnSync('scancel', [job]);
  });

  after(async () => {
    for (const server of servers) await server.close();
    if (root && !process.env.CAESAR_KEEP_LIVE) fs.rmSync(root, { recursive: true, force: true });
  });

  function writeGlobalConfig(extra: string): void {
    const dir = path.join(home, '.config', 'caesar');
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, 'config.toml'), extra);
  }

  function env(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
    const out: NodeJS.ProcessEnv = { ...process.env, HOME: home, CAESAR_DEMO_DELAY_MS: '20', ...extra };
    delete out.CI;
    for (const key of Object.keys(out)) if (key.startsWith('CAESAR_') && !['CAESAR_CACHE', 'CAESAR_DEMO_DELAY_MS', 'CAESAR_DEMO_ANSWER_TIMEOUT_MS'].includes(key) && !(key in extra)) delete out[key];
    return out;
  }

  function caesar(args: string[], cwd: string, environment: NodeJS.ProcessEnv = env()): Promise<Ran> {
    return run(process.execPath, [CAESAR_JS, ...args], { cwd, env: environment, timeoutMs: 240_000 });
  }

  function newRepo(): string {
    return makeRepo(path.join(root, `repo-${++count}`));
  }

  async function ps(repo: string): Promise<PsEntry[]> {
    const listed = await caesar(['ps', '--json'], repo);
    assert.equal(listed.code, 0, listed.stderr);
    return JSON.parse(listed.stdout) as PsEntry[];
  }

  async function entry(repo: string, id: string): Promise<PsEntry | undefined> {
    return (await ps(repo)).find((t) => t.id === id);
  }

  function taskDir(repo: string, id: string): string {
    return path.join(repo, '.caesar', 'tasks', id);
  }

  function launcherRecord(repo: string, id: string): { kind: string; job_id: string } {
    return JSON.parse(fs.readFileSync(path.join(taskDir(repo, id), 'launcher.json'), 'utf8')) as { kind: string; job_id: string };
  }

  function events(repo: string, id: string): ProtocolEvent[] {
    const file = path.join(taskDir(repo, id), 'events.jsonl');
    if (!fs.existsSync(file)) return [];
    return readEventsText(fs.readFileSync(file, 'utf8')).flatMap((p) => (p.ok ? [p.event] : []));
  }

  function askedAQuestion(repo: string, id: string): boolean {
    const dir = path.join(taskDir(repo, id), 'questions');
    return fs.existsSync(dir) && fs.readdirSync(dir).some((f) => f.endsWith('.json') && !f.startsWith('.'));
  }

  /** Starts `caesar run` in the background and returns it with the id of the task it delegated. */
  async function startRun(repo: string, args: string[]): Promise<{ done: Promise<Ran>; id: string }> {
    const before = new Set(fs.existsSync(path.join(repo, '.caesar', 'tasks')) ? fs.readdirSync(path.join(repo, '.caesar', 'tasks')) : []);
    const done = caesar(['run', ...args], repo);
    let id = '';
    await waitFor('the task and its launcher.json', () => {
      const dir = path.join(repo, '.caesar', 'tasks');
      id = (fs.existsSync(dir) ? fs.readdirSync(dir) : []).find((name) => !before.has(name) && fs.existsSync(path.join(dir, name, 'launcher.json'))) ?? '';
      return id !== '';
    }, 60_000);
    return { done, id };
  }

  /** Takes every CPU of the one node, so the next job waits in the queue (squeue's reason: Resources). */
  function occupyTheNode(): string {
    const cpus = spawnSync('sinfo', ['--noheader', '--format=%c'], { encoding: 'utf8' }).stdout.trim() || '2';
    const submitted = spawnSync('sbatch', ['--parsable', `--cpus-per-task=${cpus}`, '--job-name=blocker', `--output=${path.join(root, 'blocker-%j.out')}`, '--wrap', 'sleep 300'], { encoding: 'utf8' });
    assert.equal(submitted.status, 0, submitted.stderr);
    const job = submitted.stdout.trim().split(';')[0]!;
    blockers.push(job);
    return job;
  }

  async function waitForJobState(job: string, wanted: string): Promise<void> {
    await waitFor(`job ${job} ${wanted}`, () => spawnSync('squeue', ['--noheader', '--jobs', job, '--format=%T'], { encoding: 'utf8' }).stdout.trim() === wanted, 60_000);
  }

  it('runs the demo agent as a job: the job id in the task, its events, its diff and its apply like any other task', async () => {
    const repo = newRepo();
    const ran = await caesar(['run', '--agent', 'demo', '--launcher', 'slurm', '--isolation', 'worktree', '--json', 'Write a note into NOTES.md'], repo);
    assert.equal(ran.code, 0, `${ran.stdout}\n${ran.stderr}`);
    const outcome = JSON.parse(ran.stdout) as Outcome;
    assert.equal(outcome.status, 'succeeded');
    assert.equal(outcome.report?.status, 'success');
    assert.deepEqual(outcome.diff?.files.map((f) => [f.path, f.action]), [['NOTES.md', 'created']]);
    const record = launcherRecord(repo, outcome.task_id);
    assert.equal(record.kind, 'slurm');
    assert.match(record.job_id, /^\d+$/);
    // Slurm ran it: its job is known to the controller (for MinJobAge after it ended) under the task's name. The task
    // ends when its supervisor has written its conclusion; the job a moment later, when that process has exited.
    const job = () => spawnSync('squeue', ['--noheader', '--states=all', '--jobs', record.job_id, '--format=%j|%T'], { encoding: 'utf8' }).stdout.trim();
    await waitFor('the job to complete after the task ended', () => !/\|(RUNNING|COMPLETING)$/.test(job()), 30_000);
    assert.equal(job(), `caesar-${outcome.task_id}|COMPLETED`);
    const log = events(repo, outcome.task_id);
    assert.equal(log[0]?.type, 'started');
    assert.equal(log.at(-1)?.type, 'finished');
    assert.equal((await entry(repo, outcome.task_id))?.job?.id, record.job_id);
    const applied = await caesar(['apply', outcome.task_id], repo);
    assert.equal(applied.code, 0, applied.stderr);
    assert.match(fs.readFileSync(path.join(repo, 'NOTES.md'), 'utf8'), /note/i);
  });

  it('passes only what the task needs into the job (--export=NONE plus names), never the shell\'s secrets', async () => {
    const repo = newRepo();
    const ran = await caesar(['run', '--agent', 'demo', '--launcher', 'slurm', '--json', 'Write a note into NOTES.md'], repo, env({ AWS_SECRET_ACCESS_KEY: 'do-not-pass-me', GITHUB_TOKEN: 'nor-me' }));
    assert.equal(ran.code, 0, ran.stderr);
    const { task_id: id } = JSON.parse(ran.stdout) as Outcome;
    const { job_id: job } = launcherRecord(repo, id);
    // What sbatch was told to export, as the controller kept it.
    const shown = spawnSync('scontrol', ['show', 'job', job], { encoding: 'utf8' }).stdout;
    assert.doesNotMatch(shown, /AWS_SECRET_ACCESS_KEY|GITHUB_TOKEN|do-not-pass-me/);
    const script = fs.readFileSync(path.join(taskDir(repo, id), 'job.sh'), 'utf8');
    assert.doesNotMatch(script, /do-not-pass-me|nor-me/);
  });

  it('a job held in the queue shows queued with its job id and squeue\'s reason; cancelled there, it never runs', async () => {
    const repo = newRepo();
    const blocker = occupyTheNode();
    await waitForJobState(blocker, 'RUNNING');
    const { done, id } = await startRun(repo, ['--agent', 'demo', '--launcher', 'slurm', '--json', 'Write a note into NOTES.md']);
    const job = launcherRecord(repo, id).job_id;
    // squeue's reason is "None" until the scheduler has looked at the job (caesar shows none then): wait for its word.
    const queued = await waitFor('caesar ps to say queued, with squeue\'s reason', async () => {
      const shown = await entry(repo, id);
      return shown?.status === 'queued' && shown.job?.reason ? shown : undefined;
    }, 120_000);
    assert.equal(queued?.job?.id, job);
    assert.equal(queued?.job?.state, 'PENDING');
    assert.match(queued?.job?.reason ?? '', /Resources|Priority/);
    const plain = await caesar(['ps'], repo);
    assert.match(plain.stdout, new RegExp(`queued.*Slurm job ${job} \\(PENDING: (Resources|Priority)\\)`));

    const cancel = await caesar(['cancel', id], repo);
    assert.equal(cancel.code, 0, cancel.stderr);
    const ended = await done;
    assert.equal((JSON.parse(ended.stdout) as Outcome).status, 'cancelled', ended.stdout + ended.stderr);
    assert.notEqual(ended.code, 0);
    // The agent never started: no event of its own, no raw log; the job is gone without having run.
    assert.equal(events(repo, id).some((e) => e.type === 'started'), false);
    assert.equal(fs.existsSync(path.join(taskDir(repo, id), 'raw.log')), false);
    const state = spawnSync('squeue', ['--noheader', '--states=all', '--jobs', job, '--format=%T'], { encoding: 'utf8' }).stdout.trim();
    assert.equal(state, 'CANCELLED');
    // gc writes the end down, as the supervisor would have.
    const gc = await caesar(['gc', '--json'], repo);
    assert.equal(gc.code, 0, gc.stderr);
    const recorded = JSON.parse(fs.readFileSync(path.join(taskDir(repo, id), 'state.json'), 'utf8')) as { status: string; error?: string };
    assert.equal(recorded.status, 'cancelled');
    assert.match(recorded.error ?? '', new RegExp(`Cancelled while Slurm held it \\(job ${job}\\)`));
  });

  it('a running job cancelled with caesar cancel: its supervisor concludes it cancelled', async () => {
    const repo = newRepo();
    const { done, id } = await startRun(repo, ['--agent', 'demo', '--launcher', 'slurm', '--json', 'Ask me a question, then write NOTES.md']);
    await waitFor('the demo agent waiting on its question', async () => (await entry(repo, id))?.status === 'running' && askedAQuestion(repo, id), 90_000);
    const cancel = await caesar(['cancel', id], repo);
    assert.equal(cancel.code, 0, cancel.stderr);
    const ended = await done;
    assert.equal((JSON.parse(ended.stdout) as Outcome).status, 'cancelled', ended.stdout);
    assert.equal(events(repo, id).at(-1)?.type, 'finished');
  });

  it('a job ended from outside (scancel by hand) is reported as such', async () => {
    const repo = newRepo();
    const { done, id } = await startRun(repo, ['--agent', 'demo', '--launcher', 'slurm', '--json', 'Ask me a question, then write NOTES.md']);
    await waitFor('the demo agent waiting on its question', async () => (await entry(repo, id))?.status === 'running' && askedAQuestion(repo, id), 90_000);
    const job = launcherRecord(repo, id).job_id;
    assert.equal(spawnSync('scancel', [job]).status, 0);
    const ended = await done;
    assert.equal((JSON.parse(ended.stdout) as Outcome).status, 'cancelled', ended.stdout);
    const log = fs.readFileSync(path.join(taskDir(repo, id), 'supervisor.log'), 'utf8');
    assert.match(log, new RegExp(`received SIGTERM \\(as Slurm job ${job}: scancel, or the job's time limit\\): cancelling the task`));
    assert.equal(events(repo, id).at(-1)?.type, 'finished');
  });

  it('max_parallel holds together with Slurm\'s own queue: two jobs, one slot, the agents one after the other', async () => {
    writeGlobalConfig('[policy]\nmax_parallel = 1\n');
    try {
      const repo = newRepo();
      const [a, b] = await Promise.all([
        caesar(['run', '--agent', 'demo', '--launcher', 'slurm', '--json', 'Write a note into A.md'], repo),
        caesar(['run', '--agent', 'demo', '--launcher', 'slurm', '--json', 'Write a note into B.md'], repo),
      ]);
      for (const r of [a, b]) assert.equal(r.code, 0, r.stdout + r.stderr);
      const spans = [a, b].map((r) => {
        const log = events(repo, (JSON.parse(r.stdout) as Outcome).task_id);
        return { start: Date.parse(log[0]!.at), end: Date.parse(log.at(-1)!.at) };
      });
      spans.sort((x, y) => x.start - y.start);
      assert.ok(spans[0]!.end <= spans[1]!.start, `the agents overlapped: ${JSON.stringify(spans)}`);
    } finally {
      writeGlobalConfig('');
    }
  });

  it('a real CLI (codex, against the fake model server) through Slurm, and from the MCP server with launcher "slurm"', async () => {
    const server = await startResponsesServer(writeScript('codex', 'from-codex.txt', 'written by codex\n'));
    servers.push(server);
    const repo = newRepo();
    const binDir = pinnedBinDir(root);
    // The user's own allow-list: the fake provider's key and the XDG folders are not codex's documented variables.
    writeGlobalConfig('[policy]\nenv_allow = ["FAKE_API_KEY", "XDG_*"]\n');
    try {
      const agentHome = path.join(root, 'agent-home');
      const withCodex = { ...env(), ...agentEnv('codex', server.url, agentHome), HOME: home, PATH: `${binDir}:${process.env.PATH ?? ''}` };
      const ran = await caesar(['run', '--agent', 'codex', '--launcher', 'slurm', '--isolation', 'worktree', '--model', MODELS.codex, '--json', 'Create from-codex.txt'], repo, withCodex);
      assert.equal(ran.code, 0, ran.stdout + ran.stderr);
      const outcome = JSON.parse(ran.stdout) as Outcome;
      assert.equal(outcome.status, 'succeeded');
      assert.deepEqual(outcome.diff?.files.map((f) => f.path), ['from-codex.txt']);
      assert.match(launcherRecord(repo, outcome.task_id).job_id, /^\d+$/);
      assert.ok(server.requests.some((q) => q.scripted), 'codex reached the fake model server from inside the job');
    } finally {
      writeGlobalConfig('');
    }

    // The same cluster from a real MCP client: caesar_delegate with launcher "slurm", then caesar_await.
    const client = new Client({ name: 'slurm-test', version: '1.0.0' });
    await client.connect(new StdioClientTransport({ command: process.execPath, args: [CAESAR_JS, 'mcp', 'serve', '--root', repo], env: env() as Record<string, string> }));
    try {
      const delegated = await client.callTool({ name: 'caesar_delegate', arguments: { objective: 'Write a note into MCP.md', agent: 'demo', launcher: 'slurm' } });
      const task = delegated.structuredContent as { task_id: string; launcher: string; job_id?: string };
      assert.equal(task.launcher, 'slurm');
      assert.match(task.job_id ?? '', /^\d+$/);
      const awaited = await client.callTool({ name: 'caesar_await', arguments: { task_ids: [task.task_id], timeout_ms: 120_000 } });
      const done = (awaited.structuredContent as { tasks: Record<string, { status: string; job?: string }> }).tasks[task.task_id];
      assert.equal(done?.status, 'succeeded', JSON.stringify(awaited.structuredContent));
      assert.match(done?.job ?? '', new RegExp(`^Slurm job ${task.job_id}`));
    } finally {
      await client.close();
    }
  });
});


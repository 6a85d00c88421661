import { strict as assert } from 'node:assert';
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, promises as fs, readdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { build } from 'esbuild';
import { taskPaths, type ProtocolEvent } from '../../../src/protocol';
import { readJsonFile } from '../../../src/engine/store/atomic';
import { delegate, type DelegateInput } from '../../../src/engine/launch/delegate';
import { ResultDocSchema, type ResultDoc } from '../../../src/protocol';
import { TaskStateSchema, type TaskState } from '../../../src/protocol';
import { TaskStore } from '../../../src/engine/store/store';
import type { GenericAgentDef } from '../../../src/protocol';

export const REPO_ROOT = path.resolve(__dirname, '../../..');
export const FIXTURE_AGENT = path.join(REPO_ROOT, 'test/fixtures/fixture-agent.mjs');

let built: Promise<string> | undefined;

/**
 * The supervisor runs as `node <caesar.js> supervise`, so runtime tests need the CLI bundle. We bundle the current
 * sources into a private temp folder once per test process (esbuild, ~1 s) and point CAESAR_CLI_JS at it, rather than
 * using dist/, which other builds may be rewriting concurrently. dist/demo-agent.js is bundled beside it, where the
 * demo adapter looks for it.
 */
export function buildCli(): Promise<string> {
  built ??= (async () => {
    const out = mkdtempSync(path.join(tmpdir(), 'caesar-test-build-'));
    const common = { bundle: true, platform: 'node' as const, target: 'node20', format: 'cjs' as const, logLevel: 'silent' as const, sourcemap: true };
    await build({ ...common, entryPoints: [path.join(REPO_ROOT, 'src/bin/caesar.ts')], outfile: path.join(out, 'caesar.js') });
    await build({ ...common, entryPoints: [path.join(REPO_ROOT, 'src/agents/demo/demo-agent.ts')], outfile: path.join(out, 'demo-agent.js') });
    // Beside caesar.js, where a supervisor finds it (host-proxy.ts): the proxy of a task whose endpoint is a host name.
    await build({ ...common, entryPoints: [path.join(REPO_ROOT, 'src/engine/sandbox/host-proxy-server.ts')], outfile: path.join(out, 'host-proxy.js') });
    process.env.CAESAR_CLI_JS = path.join(out, 'caesar.js');
    process.env.CAESAR_DEMO_AGENT_JS = path.join(out, 'demo-agent.js');
    return path.join(out, 'caesar.js');
  })();
  return built;
}

let shipped: Promise<string> | undefined;

/**
 * The CLI as it ships (esbuild.mjs): dist/caesar.js the loader, caesar-main.js the CLI, caesar-run.js `caesar run`'s,
 * supervisor.js the supervisor's loader and supervisor-main.js its bundle, host-proxy.js the host-name proxy, built from
 * the current sources into one private folder, once per test
 * process. The path of its caesar.js; pass it as CAESAR_CLI_JS (or cliScript) to run tasks from it.
 */
export function buildShippedCli(): Promise<string> {
  shipped ??= (async () => {
    const out = mkdtempSync(path.join(tmpdir(), 'caesar-shipped-build-'));
    const common = { bundle: true, platform: 'node' as const, target: 'node20', format: 'cjs' as const, logLevel: 'silent' as const };
    const entries = [
      ['src/bin/cli-loader.ts', 'caesar.js'],
      ['src/bin/caesar.ts', 'caesar-main.js'],
      ['src/bin/run-main.ts', 'caesar-run.js'],
      ['src/bin/supervisor.ts', 'supervisor.js'],
      ['src/bin/supervisor-main.ts', 'supervisor-main.js'],
      ['src/engine/sandbox/host-proxy-server.ts', 'host-proxy.js'],
    ] as const;
    await Promise.all(entries.map(([entry, file]) => build({ ...common, entryPoints: [path.join(REPO_ROOT, entry)], outfile: path.join(out, file) })));
    return path.join(out, 'caesar.js');
  })();
  return shipped;
}

export function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
}

/** A fresh repository with one commit and `.caesar/` ignored. */
export function makeRepo(files: Record<string, string> = { 'README.md': '# test repo\n' }): string {
  const dir = realpathSync(mkdtempSync(path.join(tmpdir(), 'caesar-rt-')));
  git(dir, 'init', '-q', '-b', 'main');
  git(dir, 'config', 'user.name', 'Test');
  git(dir, 'config', 'user.email', 'test@example.invalid');
  git(dir, 'config', 'commit.gpgsign', 'false');
  writeFileSync(path.join(dir, '.gitignore'), '.caesar/\n');
  for (const [name, content] of Object.entries(files)) {
    const file = path.join(dir, name);
    execFileSync('mkdir', ['-p', path.dirname(file)]);
    writeFileSync(file, content);
  }
  git(dir, 'add', '-A');
  git(dir, 'commit', '-q', '-m', 'init');
  return dir;
}

export function makePlainDir(): string {
  return realpathSync(mkdtempSync(path.join(tmpdir(), 'caesar-rt-plain-')));
}

export const fixtureAgent: GenericAgentDef = { id: 'fixture', bin: process.execPath, args: [FIXTURE_AGENT] };

/** Delegates a fixture-agent task; `fixture` is the JSON the fixture reads from task.context. */
export async function startFixture(
  root: string,
  fixture: Record<string, unknown>,
  overrides: Partial<DelegateInput> = {},
  env: NodeJS.ProcessEnv = {},
): Promise<{ id: string; taskDir: string }> {
  await buildCli();
  return delegate(
    {
      root,
      workspace: root,
      agent: 'fixture',
      generic_agent: fixtureAgent,
      objective: `fixture ${String(fixture.mode)}`,
      context: JSON.stringify(fixture),
      mode: 'write',
      isolation: 'worktree',
      network: true,
      timeout_ms: 30_000,
      ...overrides,
    },
    { env: { CAESAR_KILL_GRACE_MS: '500', ...env } },
  );
}

export interface Finished {
  state: TaskState;
  result: ResultDoc;
  events: ProtocolEvent[];
  badLines: number;
}

/** Follows events.jsonl (store.follow: fs.watch + byte offsets) until the `finished` event, then reads everything. */
export async function waitForFinished(root: string, id: string, timeoutMs = 30_000): Promise<Finished> {
  const store = new TaskStore(root);
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      sub.dispose();
      reject(new Error(`task ${id} did not finish within ${timeoutMs} ms`));
    }, timeoutMs);
    const sub = store.follow(id, 0, (events) => {
      if (events.some((e) => e.type === 'finished')) {
        clearTimeout(timer);
        sub.dispose();
        resolve();
      }
    });
  });
  return readFinished(root, id);
}

export async function readFinished(root: string, id: string): Promise<Finished> {
  const paths = taskPaths(root, id);
  const state = (await readJsonFile(paths.state, TaskStateSchema))!;
  const result = (await readJsonFile(paths.result, ResultDocSchema))!;
  const { events, badLines } = await new TaskStore(root).readEvents(id);
  return { state, result, events, badLines };
}

import { waitFor } from '../../support/wait';
export { waitFor };

export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * The host's live processes (pids as /proc shows them; a zombie's command line is empty) whose command line holds
 * `needle`. A sandboxed agent or check sees the pids of its own PID namespace, which mean nothing outside: a test that
 * must know whether a process it started is gone gives it a unique argument (`sleep 299.<random>`) and looks for that.
 */
export function processesMatching(needle: string): number[] {
  const pids: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    try {
      if (readFileSync(`/proc/${name}/cmdline`, 'utf8').includes(needle)) pids.push(Number(name));
    } catch {
      /* gone meanwhile */
    }
  }
  return pids;
}

/** A `sleep` duration no other process uses (seconds.fraction), for processesMatching. */
export function uniqueSleep(seconds: number): string {
  return `${seconds}.${String(Math.floor(Math.random() * 1e6)).padStart(6, '0')}${String(process.pid % 1000).padStart(3, '0')}`;
}

export function groupGone(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return false;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

export async function exists(file: string): Promise<boolean> {
  return fs.stat(file).then(() => true, () => false);
}

export { existsSync };

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
  elapsedMs: number;
}

/** Runs the bundled CLI as a real process; resolves with its exit and output, or kills it and rejects after `ms`. */
export async function runBuiltCli(args: string[], cwd: string, ms: number, env: NodeJS.ProcessEnv = process.env): Promise<CliRun> {
  return runCliScript(await buildCli(), args, cwd, ms, env);
}

/** Runs the CLI script `cli` (a bundle of this test run's own) as runBuiltCli runs the default one. */
export function runCliScript(cli: string, args: string[], cwd: string, ms: number, env: NodeJS.ProcessEnv = process.env): Promise<CliRun> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [cli, ...args], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`caesar ${args.join(' ')} did not exit within ${ms} ms`));
    }, ms);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, elapsedMs: Date.now() - started });
    });
  });
}

/**
 * A private HOME whose trust store trusts `root`'s repository config as it is now, recorded by `caesar trust` through
 * the CLI bundle `cli` (as a user would): a config naming programs is used only once trusted (src/config/trust.ts).
 */
export function trustedHome(cli: string, root: string): string {
  const home = realpathSync(mkdtempSync(path.join(tmpdir(), 'caesar-trusted-home-')));
  execFileSync(process.execPath, [cli, 'trust', '--root', root], { env: { ...process.env, HOME: home }, stdio: ['ignore', 'ignore', 'pipe'] });
  return home;
}

/** The environment that runs tasks from the shipped build `cli` (buildShippedCli): its own supervisor, no standby preset. */
export function shippedCliEnv(cli: string): NodeJS.ProcessEnv {
  return { ...process.env, CAESAR_CLI_JS: cli, CAESAR_SUPERVISOR_JS: '', CAESAR_SUPERVISOR_STANDBY: '' };
}

/** A caesar.report/v1 success with no declared changes, for a shell agent to write to $CAESAR_REPORT_PATH. */
export const SUCCESS_REPORT = '{"protocol":"caesar.report/v1","status":"success","summary":"ok","changes":[]}';

/** A repository whose project config declares the agent `writer`: `/bin/sh -c <script>`, after `extraConfig`. */
export function repoWithShellAgent(script: string, extraConfig = ''): string {
  const repo = makeRepo();
  mkdirSync(path.join(repo, '.caesar'), { recursive: true });
  const agent = `[[agent]]\nid = "writer"\nbin = "/bin/sh"\nargs = ["-c", ${JSON.stringify(script)}, "{{prompt}}"]\n`;
  writeFileSync(path.join(repo, '.caesar', 'config.toml'), `${extraConfig}${agent}`);
  return repo;
}

/** `<prefix> 1` … `<prefix> n`, one a line: a file whose lines tasks change one by one (overlap, land). */
export function numberedLines(prefix: string, n: number): string {
  return Array.from({ length: n }, (_, i) => `${prefix} ${i + 1}`).join('\n') + '\n';
}

/** `text` with line `n` (1-based) replaced by `line`. */
export function withLine(text: string, n: number, line: string): string {
  return text.split('\n').map((l, i) => (i === n - 1 ? line : l)).join('\n');
}

/** Ten numbered lines, for overlap tests whose tasks change the first, the last, or the first differently. */
export const TEN_LINES = numberedLines('line', 10);

/** Starts a fixture task that writes `files` in its worktree, then stays running (sleeps) until cancelled. */
export async function runningTask(repo: string, files: Record<string, string>, sleepMs = 120_000): Promise<string> {
  const { id } = await startFixture(repo, { mode: 'success', files, sleepMs });
  await waitFor(`task ${id} wrote its files`, async () => {
    const s = await new TaskStore(repo).summary(id);
    const wrote = (f: string) => existsSync(path.join(s!.state.worktree!, f)) && readFileSync(path.join(s!.state.worktree!, f), 'utf8') === files[f];
    return s?.state.worktree && s.state.status === 'running' && Object.keys(files).every(wrote);
  }, 30_000);
  return id;
}

/** Runs a fixture task that writes `files` in its worktree to its end, which must be success. */
export async function finishedTask(root: string, files: Record<string, string>, overrides: Partial<DelegateInput> = {}): Promise<string> {
  const { id } = await startFixture(root, { mode: 'success', files }, overrides);
  const done = await waitForFinished(root, id);
  assert.equal(done.state.status, 'succeeded', done.state.error);
  return id;
}

/** A running task's state as the supervisor writes it (validated), for units that take one; `over` sets the rest. */
export function runningState(id: string, root: string, over: Partial<TaskState> = {}): TaskState {
  return TaskStateSchema.parse({
    id,
    status: 'running',
    agent: 'fixture',
    objective: `objective of ${id}`,
    mode: 'write',
    isolation: 'worktree',
    network: false,
    timeout_ms: 60_000,
    depth: 0,
    created_at: new Date().toISOString(),
    root,
    workspace: root,
    ...over,
  });
}

import { strict as assert } from 'node:assert';
import { execFileSync, spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { TaskStore } from '../../src/engine/store/store';
import { FIXTURE_AGENT, buildCli, git, groupGone, makeRepo, pidAlive, processesMatching, readFinished, waitFor } from '../engine/runtime/helpers';

interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** The private HOME of each repository whose config a test wrote, its trust store trusting that config. */
const homes = new Map<string, string>();

function startCli(cwd: string, args: string[], env: NodeJS.ProcessEnv = {}) {
  const home = homes.get(cwd);
  const child = spawn(process.execPath, [process.env.CAESAR_CLI_JS!, ...args], {
    cwd,
    env: { ...process.env, CAESAR_KILL_GRACE_MS: '500', CAESAR_DEMO_DELAY_MS: '5', NO_COLOR: '', ...(home ? { HOME: home } : {}), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  const done = new Promise<CliRun>((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
  return { child, done, output: () => ({ stdout, stderr }) };
}

function cli(cwd: string, args: string[], env: NodeJS.ProcessEnv = {}): Promise<CliRun> {
  return startCli(cwd, args, env).done;
}

/** Writes the repository's config and trusts it as a user would (`caesar trust`, under a private HOME). */
function writeConfig(repo: string, toml: string): void {
  mkdirSync(path.join(repo, '.caesar'), { recursive: true });
  writeFileSync(path.join(repo, '.caesar/config.toml'), toml);
  const home = homes.get(repo) ?? realpathSync(mkdtempSync(path.join(tmpdir(), 'caesar-run-home-')));
  homes.set(repo, home);
  execFileSync(process.execPath, [process.env.CAESAR_CLI_JS!, 'trust', '--root', repo], { env: { ...process.env, HOME: home }, stdio: 'ignore' });
}

/** The spec's "shortest conformant agent" (OACP v1, "Conforming, in practice"): jq read, jq write. */
const BASH_AGENT = `#!/usr/bin/env bash
objective=$(jq -r .objective "$CAESAR_TASK_FILE")

# … do the work …
echo "handled" > handled.txt

jq -n --arg s "Handled: $objective" '{
  protocol: "caesar.report/v1",
  status: "success",
  summary: $s
}' > "$CAESAR_REPORT_PATH"
`;

const FIXTURE_TOML = `[[agent]]
id = "fixture"
bin = "${process.execPath}"
args = ["${FIXTURE_AGENT}", "{{model}}", "--objective={{prompt}}"]
`;

describe('caesar run (real CLI processes, real git)', function () {
  this.timeout(60_000);
  before(async () => {
    await buildCli();
  });

  it('runs the spec\'s ten-line bash agent declared as [[agent]]: success, source file, verified by git', async () => {
    const repo = makeRepo();
    const script = path.join(repo, '.caesar/agent.sh');
    mkdirSync(path.dirname(script), { recursive: true });
    // The work takes at least 300 ms, so the duration Caesar measures has something to measure.
    writeFileSync(script, BASH_AGENT.replace('# … do the work …', 'sleep 0.3 # … do the work …'));
    chmodSync(script, 0o755);
    writeConfig(repo, `[[agent]]\nid = "mini"\nbin = "${script}"\nargs = ["{{prompt}}"]\n`);
    const run = await cli(repo, ['run', 'Say hello', '--agent', 'mini', '--json']);
    assert.equal(run.code, 0, run.stderr);
    const out = JSON.parse(run.stdout);
    assert.equal(out.status, 'succeeded');
    assert.equal(out.report.status, 'success');
    assert.equal(out.report.summary, 'Handled: Say hello');
    assert.equal(out.report_source, 'file');
    assert.equal(out.changes_verified_by, 'git');
    assert.deepEqual(out.diff.files.map((f: { path: string }) => f.path), ['handled.txt']);
    // Caesar's own measure of the agent's run: at least its sleep, and within the task's recorded start and end.
    const state = (await new TaskStore(repo).require(out.task_id)).state;
    const span = Date.parse(state.ended_at!) - Date.parse(state.started_at!);
    assert.ok(out.usage.duration_ms >= 300 && out.usage.duration_ms <= span + 1, `duration ${out.usage.duration_ms} ms, task span ${span} ms`);
    // The undeclared file is a finding, since the minimal agent declares no changes.
    assert.ok(out.report.findings.some((f: { title: string }) => f.title === 'Undeclared change'));
  });

  it('runs the demo agent in a worktree; caesar diff shows its edit; caesar apply keeps the user\'s uncommitted edits', async () => {
    const repo = makeRepo({ 'README.md': '# test repo\n', 'notes.txt': 'one\n' });
    writeFileSync(path.join(repo, 'notes.txt'), 'one\nuncommitted user edit\n');
    const run = await cli(repo, ['run', '--agent', 'demo', '--isolation', 'worktree', 'Write GREETING.md', '--json']);
    assert.equal(run.code, 0, run.stderr);
    const out = JSON.parse(run.stdout);
    assert.equal(out.status, 'succeeded');
    assert.equal(out.report_source, 'file');
    assert.deepEqual(out.diff.files.map((f: { path: string; action: string }) => [f.path, f.action]), [['GREETING.md', 'created']]);
    assert.ok(!existsSync(path.join(repo, 'GREETING.md')), 'nothing reaches the workspace before apply');
    const diff = await cli(repo, ['diff', out.task_id]);
    assert.equal(diff.code, 0, diff.stderr);
    assert.match(diff.stdout, /GREETING\.md/);
    assert.match(diff.stdout, /Written by the Caesar demo agent/);
    const apply = await cli(repo, ['apply', out.task_id]);
    assert.equal(apply.code, 0, apply.stderr + apply.stdout);
    assert.match(readFileSync(path.join(repo, 'GREETING.md'), 'utf8'), /Write GREETING\.md/);
    assert.equal(readFileSync(path.join(repo, 'notes.txt'), 'utf8'), 'one\nuncommitted user edit\n', 'the user\'s edit survives');
  });

  it('prints one plain line per event outside a TTY, then the outcome with files and a review hint', async () => {
    const repo = makeRepo();
    const run = await cli(repo, ['run', '--agent', 'demo', 'Write PLAIN.md']);
    assert.equal(run.code, 0, run.stderr);
    assert.doesNotMatch(run.stdout, /\x1b\[/, 'no ANSI outside a TTY');
    const lines = run.stdout.split('\n');
    assert.match(lines[0]!, /^\[started\] demo/);
    assert.ok(lines.some((l) => /^\[tool started\] edit PLAIN\.md/.test(l)));
    assert.ok(lines.some((l) => /^\[tool succeeded\] edit PLAIN\.md/.test(l)));
    assert.ok(lines.some((l) => /^\[file\] created PLAIN\.md/.test(l)));
    assert.ok(lines.some((l) => /^\[finished\] report "success"/.test(l)));
    assert.match(run.stdout, /Task t_[0-9a-f]{32}: succeeded — report success \(source file, changes verified by git\)/);
    assert.match(run.stdout, /created\s+PLAIN\.md\s+\+\d+ -0/);
    assert.match(run.stdout, /next: caesar diff t_\w+  ·  caesar apply t_\w+  ·  caesar discard t_/);
  });

  it('exits 1 when the agent exits 0 but reports failed', async () => {
    const repo = makeRepo();
    writeConfig(repo, FIXTURE_TOML);
    const run = await cli(repo, ['run', 'x', '--agent', 'fixture', '--context', JSON.stringify({ mode: 'fail', exitCode: 0 }), '--json']);
    assert.equal(run.code, 1);
    const out = JSON.parse(run.stdout);
    assert.equal(out.status, 'succeeded');
    assert.equal(out.report.status, 'failed');
  });

  it('passes extra arguments after -- last, and refuses a stray operand (quoting mistake) with exit 2', async () => {
    const repo = makeRepo();
    writeConfig(repo, FIXTURE_TOML);
    const run = await cli(repo, ['run', 'obj', '--agent', 'fixture', '--json', '--', '--flag', 'value']);
    assert.equal(run.code, 0, run.stderr);
    const argv = JSON.parse(JSON.parse(run.stdout).report.details).argv as string[];
    assert.deepEqual(argv.slice(-2), ['--flag', 'value']);
    assert.ok(argv[0]!.startsWith('--objective='), 'the {{model}} argument without a model was dropped');
    const typo = await cli(repo, ['run', 'fix', 'the', 'bug', '--agent', 'fixture']);
    assert.equal(typo.code, 2);
    assert.match(typo.stderr, /Unexpected argument "the"/);
  });

  it('--transport acp runs the demo agent over ACP: its permission request is refused by policy in a read-only task', async () => {
    const repo = makeRepo({ 'README.md': '# test repo\n' });
    const run = await cli(repo, ['run', '--agent', 'demo', '--transport', 'acp', '--mode', 'read-only', '--isolation', 'worktree', 'Write GREETING.md', '--json']);
    const out = JSON.parse(run.stdout);
    const launch = JSON.parse(readFileSync(path.join(repo, '.caesar/tasks', out.task_id, 'launch.json'), 'utf8'));
    assert.equal(launch.transport, 'acp');
    const events = readFileSync(path.join(repo, '.caesar/tasks', out.task_id, 'events.jsonl'), 'utf8');
    assert.match(events, /Permission answered automatically: [^"]*reject/);
    assert.deepEqual(out.diff?.files ?? [], [], 'the refused write never happened');
  });

  it('refuses an unknown agent, a bad flag value and a missing agent with exit 2, leaving no task behind', async () => {
    const repo = makeRepo();
    for (const args of [['run', 'x', '--agent', 'nope'], ['run', 'x', '--agent', 'demo', '--mode', 'rw'], ['run', 'x', '--agent', 'demo', '--transport', 'pigeon'], ['run', 'x']]) {
      const run = await cli(repo, args);
      assert.equal(run.code, 2, `${args.join(' ')}: ${run.stderr}`);
      assert.match(run.stderr, /caesar: /);
    }
    assert.ok(!existsSync(path.join(repo, '.caesar/tasks')) || readdirSync(path.join(repo, '.caesar/tasks')).length === 0);
  });

  it('a 300 KiB --context @file reaches the demo agent on stdin (no E2BIG, not on argv)', async () => {
    const repo = makeRepo();
    const file = path.join(repo, 'big-context.txt');
    writeFileSync(file, 'c'.repeat(300 * 1024));
    const run = await cli(repo, ['run', '--agent', 'demo', 'Write BIG.md', '--context', `@${file}`, '--json']);
    assert.equal(run.code, 0, run.stderr);
    const id = JSON.parse(run.stdout).task_id as string;
    const { events } = await readFinished(repo, id);
    const started = events[0];
    assert.ok(started?.type === 'started' && started.command.length < 1000 && !started.command.includes('ccc'));
    assert.ok(events.some((e) => e.type === 'message' && /brief of \d{6,} characters/.test(e.text)));
  });

  it('Ctrl-C on run cancels the task and waits: status cancelled, no process left in the agent\'s group', async () => {
    const repo = makeRepo();
    writeConfig(repo, FIXTURE_TOML);
    const running = startCli(repo, ['run', 'x', '--agent', 'fixture', '--context', JSON.stringify({ mode: 'ignore-term-with-grandchildren' }), '--json']);
    const store = new TaskStore(repo);
    // The grandchildren are found on the host by their argument: sandboxed, the pids the agent sees are its namespace's.
    const view = await waitFor('agent running', async () => {
      const [task] = await store.list();
      return task?.state.agent_pid && processesMatching(`grandchild-of-${task.id}`).length === 2 ? task : undefined;
    });
    running.child.kill('SIGINT');
    const run = await running.done;
    assert.equal(run.code, 1);
    const out = JSON.parse(run.stdout);
    assert.equal(out.status, 'cancelled');
    assert.ok(groupGone(view.state.agent_pid!), 'the agent\'s process group is empty');
    assert.deepEqual(processesMatching(`grandchild-of-${view.id}`), [], 'no grandchild is left');
  });

  it('a task started by one caesar run is visible, followable and cancellable from another process', async () => {
    const repo = makeRepo();
    writeConfig(repo, FIXTURE_TOML);
    const running = startCli(repo, ['run', 'x', '--agent', 'fixture', '--context', JSON.stringify({ mode: 'hang' })]);
    const store = new TaskStore(repo);
    const task = await waitFor('task visible', async () => (await store.list()).find((t) => t.state.status === 'running'));
    const ps = await cli(repo, ['ps', '--json']);
    assert.equal(ps.code, 0, ps.stderr);
    assert.ok(ps.stdout.includes(task.id), 'ps in another process lists it');
    const cancel = await cli(repo, ['cancel', task.id]);
    assert.equal(cancel.code, 0, cancel.stderr);
    const run = await running.done;
    assert.equal(run.code, 1);
    assert.match(run.stdout, /\[error\] \(fatal\) Task cancelled/);
    assert.match(run.stdout, new RegExp(`Task ${task.id}: cancelled`));
    // Read once the supervisor has exited: anything it would still write, it has written.
    const supervisorPid = (await store.get(task.id))!.state.supervisor_pid!;
    await waitFor('the supervisor to exit', () => !pidAlive(supervisorPid), 20_000);
    assert.equal((await store.get(task.id))?.state.status, 'cancelled', 'not overwritten by the supervisor (reference §8.2)');
    void git;
  });
});

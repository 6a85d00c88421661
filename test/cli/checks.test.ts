import { strict as assert } from 'node:assert';
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { ResultDocSchema, TaskStateSchema, taskPaths } from '../../src/protocol';
import { buildCli, makeRepo, processesMatching, uniqueSleep } from '../engine/runtime/helpers';

interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** `caesar <args>` as a real process, under a private HOME (its global config and trust store). */
function cli(cwd: string, home: string, args: string[]): Promise<CliRun> {
  const child = spawn(process.execPath, [process.env.CAESAR_CLI_JS!, ...args], {
    cwd,
    env: { ...process.env, HOME: home, CAESAR_KILL_GRACE_MS: '300', CAESAR_DEMO_DELAY_MS: '5', NO_COLOR: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
}

function privateHome(globalToml?: string): string {
  const home = realpathSync(mkdtempSync(path.join(tmpdir(), 'caesar-checks-home-')));
  if (globalToml !== undefined) {
    mkdirSync(path.join(home, '.config/caesar'), { recursive: true });
    writeFileSync(path.join(home, '.config/caesar/config.toml'), globalToml);
  }
  return home;
}

function taskIdOf(run: CliRun): string {
  const id = /Task (t_[0-9a-f]{32})/.exec(run.stdout)?.[1] ?? /"task_id":\s*"(t_[0-9a-f]{32})"/.exec(run.stdout)?.[1];
  assert.ok(id, `no task id in:\n${run.stdout}\n${run.stderr}`);
  return id;
}

function taskFiles(repo: string, id: string) {
  const paths = taskPaths(repo, id);
  return {
    paths,
    result: ResultDocSchema.parse(JSON.parse(readFileSync(paths.result, 'utf8'))),
    state: TaskStateSchema.parse(JSON.parse(readFileSync(paths.state, 'utf8'))),
    events: readFileSync(paths.events, 'utf8').trim().split('\n').map((line) => JSON.parse(line) as { type: string; message?: string }),
  };
}

describe('checks: commands Caesar runs itself after the agent (real CLI, demo agent, real git)', function () {
  this.timeout(60_000);
  before(async () => {
    await buildCli();
  });

  it('a passing and a failing --check: result.json and events record them, the run says "succeeded · checks failed" and exits non-zero', async () => {
    const repo = makeRepo();
    const home = privateHome();
    const run = await cli(repo, home, ['run', '--agent', 'demo', '--isolation', 'worktree', 'Write GREETING.md', '--check', 'pwd; test -f GREETING.md', '--check', 'echo "2 tests failed" >&2; exit 3']);
    assert.notEqual(run.code, 0, run.stdout);
    const id = taskIdOf(run);
    assert.match(run.stdout, /succeeded · checks failed/);
    assert.match(run.stdout, /Checks Caesar ran itself \(observed\):/);
    assert.match(run.stdout, /FAILED check-2: echo "2 tests failed" >&2; exit 3 {2}\(exit 3, \d+ ms\)/);
    assert.match(run.stdout, /2 tests failed/);

    const { state, result, events, paths } = taskFiles(repo, id);
    assert.equal(state.status, 'succeeded', "the agent's verdict stays");
    assert.deepEqual(state.checks, { total: 2, failed: 1 });
    assert.equal(result.checks?.length, 2);
    const [passing, failing] = result.checks!;
    assert.equal(passing!.name, 'check-1');
    assert.equal(passing!.exit_code, 0);
    assert.equal(passing!.output_tail.trim(), state.worktree, 'it ran in the task\'s worktree, where the agent wrote GREETING.md');
    assert.equal(failing!.exit_code, 3);
    assert.equal(failing!.output_tail, '2 tests failed\n');
    assert.ok(failing!.duration_ms >= 0);
    assert.match(readFileSync(path.join(paths.dir, 'checks/2.log'), 'utf8'), /2 tests failed/);
    assert.ok(result.report.findings.some((f) => f.severity === 'high' && f.title === 'Check "check-2" failed'));
    const progress = events.filter((e) => e.type === 'progress' && /^check /.test(e.message ?? '')).map((e) => e.message);
    assert.equal(progress.length, 4, progress.join('\n'));
    assert.match(progress[1]!, /"check-1" passed/);
    assert.match(progress[3]!, /"check-2" failed \(exit code 3\)/);
    assert.ok(events.findIndex((e) => e.type === 'progress') < events.findIndex((e) => e.type === 'finished'));

    const ps = await cli(repo, home, ['ps']);
    assert.match(ps.stdout, /succeeded · checks failed/);
  });

  it("shows the agent's claim (commands_run) beside what Caesar observed: a bash OACP agent says its tests passed", async () => {
    const repo = makeRepo();
    const script = path.join(realpathSync(mkdtempSync(path.join(tmpdir(), 'caesar-claims-'))), 'agent.sh');
    writeFileSync(
      script,
      `#!/usr/bin/env bash\necho done > done.txt\njq -n '{protocol: "caesar.report/v1", status: "success", summary: "All tests pass.", commands_run: [{command: "npm test", exit_code: 0}]}' > "$CAESAR_REPORT_PATH"\n`,
      { mode: 0o755 },
    );
    const home = privateHome(`[[agent]]\nid = "claims"\nbin = "${script}"\nargs = ["{{prompt}}"]\n`);
    const run = await cli(repo, home, ['run', '--agent', 'claims', 'Make the tests pass', '--check', 'echo "1 failing"; exit 1']);
    assert.notEqual(run.code, 0, run.stdout + run.stderr);
    assert.match(run.stdout, /succeeded · checks failed — report success/);
    const claim = run.stdout.indexOf('Commands the agent says it ran (its claim):\n  npm test  → exit 0');
    const observed = run.stdout.indexOf('Checks Caesar ran itself (observed):\n  FAILED check-1: echo "1 failing"; exit 1');
    assert.ok(claim >= 0 && observed > claim, run.stdout);
  });

  it('all checks passing: exit 0, and --json carries the checks', async () => {
    const repo = makeRepo();
    const run = await cli(repo, privateHome(), ['run', '--agent', 'demo', 'Write GREETING.md', '--check', 'true', '--json']);
    assert.equal(run.code, 0, run.stdout + run.stderr);
    const json = JSON.parse(run.stdout);
    assert.equal(json.checks_failed, false);
    assert.deepEqual(json.checks.map((c: { exit_code: number }) => c.exit_code), [0]);
  });

  it('a hanging [[check]] from the global config is killed at its timeout, with its process group, and the task concludes', async () => {
    const repo = makeRepo();
    // The check runs sandboxed (its own PID namespace): the sleep is found on the host by its unique duration.
    const sleep = uniqueSleep(300);
    const home = privateHome(`[[check]]\nname = "hangs"\ncommand = "sleep ${sleep} & touch check-started; wait"\ntimeout = "1s"\n`);
    const started = Date.now();
    const run = await cli(repo, home, ['run', '--agent', 'demo', 'Write GREETING.md']);
    assert.notEqual(run.code, 0);
    assert.ok(Date.now() - started < 30_000, 'it did not wait for the sleep');
    const id = taskIdOf(run);
    const { state, result } = taskFiles(repo, id);
    assert.equal(state.status, 'succeeded');
    const [check] = result.checks!;
    assert.equal(check!.name, 'hangs');
    assert.equal(check!.exit_code, null);
    assert.equal(check!.timed_out, true);
    assert.match(check!.error ?? '', /killed at its timeout \(1 s\)/);
    assert.match(run.stdout, /FAILED hangs/);
    assert.ok(existsSync(path.join(state.worktree!, 'check-started')), 'the check started its background sleep');
    assert.deepEqual(processesMatching(`sleep ${sleep}`), [], "the check's background sleep went with its group");
  });

  it('a project-layer [[check]] is refused until the user trusts the file, then it runs', async () => {
    const repo = makeRepo();
    const home = privateHome();
    // A check may write only its task's worktree (its cwd): the marker goes there.
    mkdirSync(path.join(repo, '.caesar'), { recursive: true });
    writeFileSync(path.join(repo, '.caesar/config.toml'), '[[check]]\nname = "planted"\ncommand = "touch check-ran"\n');
    const refused = await cli(repo, home, ['run', '--agent', 'demo', 'Write GREETING.md']);
    assert.notEqual(refused.code, 0);
    assert.match(refused.stderr + refused.stdout, /not trusted/);
    assert.match(refused.stderr + refused.stdout, /check planted runs in a shell/);
    assert.equal(execFileSync('find', [repo, '-name', 'check-ran'], { encoding: 'utf8' }), '', 'nothing ran');

    execFileSync(process.execPath, [process.env.CAESAR_CLI_JS!, 'trust', '--root', repo], { env: { ...process.env, HOME: home }, stdio: 'ignore' });
    const run = await cli(repo, home, ['run', '--agent', 'demo', 'Write GREETING.md', '--json']);
    assert.equal(run.code, 0, run.stdout + run.stderr);
    const json = JSON.parse(run.stdout);
    assert.deepEqual(json.checks.map((c: { name: string; exit_code: number }) => [c.name, c.exit_code]), [['planted', 0]]);
    assert.ok(existsSync(path.join(taskFiles(repo, json.task_id).state.worktree!, 'check-ran')), 'the check ran, in the worktree');
  });
});

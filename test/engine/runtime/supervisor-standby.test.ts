import { strict as assert } from 'node:assert';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { delegate } from '../../../src/engine/launch/delegate';
import { SupervisorStandby, prestartSupervisor, takeStandby } from '../../../src/engine/launch/supervisor-process';
import { taskPaths } from '../../../src/protocol';
import { buildShippedCli, fixtureAgent, makeRepo, pidAlive, processesMatching, repoWithShellAgent, runCliScript, shippedCliEnv, SUCCESS_REPORT, trustedHome, waitFor, waitForFinished } from './helpers';

/*
 * `caesar run` starts its task's supervisor ahead of time (supervisor-process.ts): the CLI's loader spawns a standby
 * before loading the CLI, and delegate() hands it the task. These tests run the CLI as it ships (the loader, the
 * lean supervisor) and check that the standby really supervises the task, as a fresh supervisor would, and that
 * no standby outlives a CLI that had no task for it.
 */

describe('engine/runtime: the supervisor started ahead of `caesar run` (standby)', function () {
  this.timeout(90_000);
  let cli: string;
  let standbyScript: string;
  let env: NodeJS.ProcessEnv;
  before(async () => {
    cli = await buildShippedCli();
    standbyScript = path.join(path.dirname(cli), 'supervisor.js');
    env = shippedCliEnv(cli);
  });

  it('caesar run: the standby takes the task, logs to the task, runs the agent and concludes it', async () => {
    const repo = repoWithShellAgent(`pwd > where.txt; printf '%s' '${SUCCESS_REPORT}' > "$CAESAR_REPORT_PATH"`);

    const run = await runCliScript(cli, ['run', 'write where.txt', '--agent', 'writer', '--isolation', 'worktree', '--mode', 'write', '--json'], repo, 60_000, { ...env, HOME: trustedHome(cli, repo) });
    assert.equal(run.code, 0, run.stderr + run.stdout);
    const outcome = JSON.parse(run.stdout) as { task_id: string; status: string; diff: { files: Array<{ path: string }> } };
    assert.equal(outcome.status, 'succeeded');
    assert.deepEqual(outcome.diff.files.map((f) => f.path), ['where.txt']);
    const paths = taskPaths(repo, outcome.task_id);
    const log = readFileSync(paths.supervisorLog, 'utf8');
    const standbyPid = Number(/supervisor (\d+) was started ahead of its task \(standby\)/.exec(log)?.[1]);
    assert.ok(standbyPid > 0, `the standby supervised the task; supervisor.log:\n${log}`);
    const state = JSON.parse(readFileSync(paths.state, 'utf8')) as { supervisor_pid: number; worktree: string };
    assert.equal(state.supervisor_pid, standbyPid, 'the state names the standby as the supervisor');
    assert.match(log, /ended: succeeded/, 'its own output went to the task log');
    assert.equal(readFileSync(path.join(state.worktree, 'where.txt'), 'utf8').trim(), state.worktree, 'the agent ran in the worktree');
  });

  it('a refused delegation leaves no standby behind, and CAESAR_SUPERVISOR_STANDBY=off starts none', async () => {
    const repo = makeRepo();
    const refused = await runCliScript(cli, ['run', 'anything', '--agent', 'no-such-agent'], repo, 60_000, env);
    assert.equal(refused.code, 2, refused.stderr);
    assert.match(refused.stderr, /Unknown agent "no-such-agent"/);
    await waitFor('the unused standby to end', () => processesMatching(`${standbyScript}\0standby`).length === 0);

    await runCliScript(cli, ['run', 'anything', '--agent', 'no-such-agent'], repo, 60_000, { ...env, CAESAR_SUPERVISOR_STANDBY: 'off' });
    assert.deepEqual(processesMatching(`${standbyScript}\0standby`), [], 'no standby was started');
  });

  it('delegate() hands the standby the environment a fresh supervisor would get, not the one it started with', async () => {
    const repo = makeRepo();
    prestartSupervisor({ ...env });
    const marker = `marker-${process.pid}-${Date.now()}`;
    // A folder outside the task's, which the sandboxed agent may write because [sandbox] read_write names it.
    const dumpDir = makeRepo();
    const envFile = path.join(dumpDir, 'env.json');
    const { id } = await delegate(
      {
        root: repo,
        workspace: repo,
        agent: 'fixture',
        generic_agent: { ...fixtureAgent, id: 'fixture' },
        objective: 'write the marker',
        context: JSON.stringify({ mode: 'dump-env', envFile }),
        mode: 'write',
        isolation: 'worktree',
        network: true,
        timeout_ms: 30_000,
        sandbox: { read_write: [dumpDir] },
      },
      { cliScript: cli, env: { STANDBY_MARKER: marker } },
    );
    const finished = await waitForFinished(repo, id);
    assert.match(readFileSync(taskPaths(repo, id).supervisorLog, 'utf8'), /started ahead of its task \(standby\)/);
    assert.equal(finished.state.status, 'succeeded', finished.state.error);
    assert.equal((JSON.parse(readFileSync(envFile, 'utf8')) as Record<string, string>).STANDBY_MARKER, marker);
  });

  it('a standby that cannot take its task is ended, and the caller is told to start a fresh one', async () => {
    const standby = SupervisorStandby.start(standbyScript);
    assert.ok(standby);
    // A task directory that does not exist: the standby cannot open its log there.
    const pid = await standby.assign({ taskDir: path.join(makeRepo(), '.caesar', 'tasks', 't_0123456789abcdef0123456789abcdef'), cwd: '/', env: {} });
    assert.equal(pid, undefined);
    assert.equal(await standby.assign({ taskDir: '/tmp', cwd: '/', env: {} }), undefined, 'one task per standby');

    const unused = SupervisorStandby.start(standbyScript);
    assert.ok(unused);
    const unusedPid = processesMatching(`${standbyScript}\0standby`).find((p) => pidAlive(p));
    assert.ok(unusedPid, 'the standby runs');
    unused.dispose();
    await waitFor('the disposed standby to end', () => processesMatching(`${standbyScript}\0standby`).length === 0);
    assert.equal(takeStandby(standbyScript), undefined, 'nothing left in the slot');
  });
});

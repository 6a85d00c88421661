import { strict as assert } from 'node:assert';
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { probeIdleSupervisor, startIdleSupervisor } from '../../src/engine/launch/warm-client';
import { taskPaths, type TaskState } from '../../src/protocol';
import { buildShippedCli, makeRepo, runCliScript, trustedHome, waitFor } from '../engine/runtime/helpers';

/*
 * Issue 27: a task's CLI is on the task's critical path from its start to its end, so `caesar run` loads a lean
 * bundle of its own (dist/caesar-run.js, src/bin/run-main.ts) instead of the full CLI (caesar-main.js, with every
 * command and the MCP and ACP servers). These tests run the CLI as it ships, from copies of the build that lack one
 * bundle or the other.
 */

const REPORT = '{"protocol":"caesar.report/v1","status":"success","summary":"ok","changes":[]}';
const RUN_ARGS = ['run', 'write out.txt', '--agent', 'writer', '--isolation', 'worktree', '--mode', 'write', '--json'];

function repoWithAgent(): string {
  const repo = makeRepo();
  mkdirSync(path.join(repo, '.caesar'), { recursive: true });
  const script = `echo x > out.txt; printf '%s' '${REPORT}' > "$CAESAR_REPORT_PATH"`;
  writeFileSync(path.join(repo, '.caesar', 'config.toml'), `[[agent]]\nid = "writer"\nbin = "/bin/sh"\nargs = ["-c", ${JSON.stringify(script)}, "{{prompt}}"]\n`);
  return repo;
}

/** A copy of the shipped build holding only `files`: its caesar.js. */
function buildWith(cli: string, files: string[]): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'caesar-run-bundle-'));
  for (const file of files) copyFileSync(path.join(path.dirname(cli), file), path.join(dir, file));
  return path.join(dir, 'caesar.js');
}

function idleSupervisorsOf(folder: string): number[] {
  return readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .filter((name) => {
      try {
        return readFileSync(`/proc/${name}/cmdline`, 'utf8').includes(`${folder}/supervisor.js\0idle`);
      } catch {
        return false;
      }
    })
    .map(Number);
}

describe('cli: caesar run loads its own lean bundle (issue 27)', function () {
  this.timeout(120_000);
  let cli: string;
  const folders: string[] = [];

  before(async () => {
    cli = await buildShippedCli();
  });

  after(() => {
    for (const folder of folders) for (const pid of idleSupervisorsOf(folder)) process.kill(pid, 'SIGKILL');
  });

  function warmEnv(): NodeJS.ProcessEnv {
    const warm = mkdtempSync(path.join(tmpdir(), 'cw-'));
    chmodSync(warm, 0o700);
    return { ...process.env, CAESAR_CLI_JS: '', CAESAR_SUPERVISOR_JS: '', CAESAR_SUPERVISOR_STANDBY: '', CAESAR_WARM_SUPERVISOR: '1', CAESAR_WARM_DIR: warm };
  }

  it('runs a whole task, handed to the warm supervisor, from a build without the full CLI bundle, which every other command needs', async () => {
    const lean = buildWith(cli, ['caesar.js', 'caesar-run.js', 'supervisor.js', 'supervisor-main.js']);
    folders.push(path.dirname(lean));
    const env = warmEnv();
    const script = path.join(path.dirname(lean), 'supervisor.js');
    startIdleSupervisor(script, env);
    const idle = await waitFor('an idle supervisor to listen', () => probeIdleSupervisor(script, env));
    const repo = repoWithAgent();
    const run = await runCliScript(lean, RUN_ARGS, repo, 60_000, { ...env, HOME: trustedHome(cli, repo) });
    assert.equal(run.code, 0, run.stderr + run.stdout);
    const outcome = JSON.parse(run.stdout) as { task_id: string; status: string };
    assert.equal(outcome.status, 'succeeded');
    const state = JSON.parse(readFileSync(taskPaths(repo, outcome.task_id).state, 'utf8')) as TaskState;
    assert.equal(state.supervisor_pid, idle.pid, 'the idle supervisor took the task');
    // The same build cannot list tasks: only `run` is in the lean bundle.
    const ps = await runCliScript(lean, ['ps'], repo, 30_000, env);
    assert.notEqual(ps.code, 0);
    assert.match(ps.stderr, /caesar-main\.js/);
  });

  it('falls back to the full bundle where caesar-run.js is missing', async () => {
    const full = buildWith(cli, ['caesar.js', 'caesar-main.js', 'supervisor.js', 'supervisor-main.js']);
    folders.push(path.dirname(full));
    const repo = repoWithAgent();
    const run = await runCliScript(full, RUN_ARGS, repo, 60_000, { ...warmEnv(), CAESAR_WARM_SUPERVISOR: '0', HOME: trustedHome(cli, repo) });
    assert.equal(run.code, 0, run.stderr + run.stdout);
    assert.equal((JSON.parse(run.stdout) as { status: string }).status, 'succeeded');
  });

  it('answers help and usage mistakes exactly as the full CLI does', async () => {
    const repo = repoWithAgent();
    const full = path.join(path.dirname(cli), 'caesar-main.js');
    const env = { ...warmEnv(), CAESAR_WARM_SUPERVISOR: '0', HOME: trustedHome(cli, repo) };
    const cases = [
      ['run', '--help'],
      ['run'],
      ['run', ''],
      ['run', 'fix', 'the', 'bug'],
      ['run', 'x', '--mode', 'sideways'],
      ['run', 'x', '--no-such-flag'],
      ['run', 'x', '--agent', 'nobody'],
      ['run', 'x', '--context', '@/nonexistent/file'],
    ];
    for (const args of cases) {
      const [ours, theirs] = await Promise.all([runCliScript(cli, args, repo, 30_000, env), runCliScript(full, args, repo, 30_000, env)]);
      assert.deepEqual({ code: ours.code, out: ours.stdout, err: ours.stderr }, { code: theirs.code, out: theirs.stdout, err: theirs.stderr }, args.join(' '));
      assert.ok(args[1] === '--help' ? ours.code === 0 : ours.code === 2, `${args.join(' ')}: exit ${ours.code}`);
    }
    assert.deepEqual(readdirSync(path.join(repo, '.caesar')).filter((name) => name === 'tasks'), [], 'no task was started');
  });
});

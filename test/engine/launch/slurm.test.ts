import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { sbatchArgProblem } from '../../../src/config/launcher';
import { parseQueue, parseSubmission } from '../../../src/engine/cluster/slurm';
import { jobEnvironment, jobScript, sbatchArguments } from '../../../src/engine/launch/slurm-launcher';
import { observedStatus } from '../../../src/engine/store/store';
import { LaunchSpecSchema, taskPaths, type LaunchSpec, type TaskState } from '../../../src/protocol';

/*
 * The Slurm launcher's pieces that need no cluster: what is handed to sbatch, the job script, what squeue's answers
 * make of a task. The live suite (test/launch/) runs them against a real slurmctld and slurmd.
 */
describe('engine/launch: Slurm, without a cluster', () => {
  const spec: LaunchSpec = LaunchSpecSchema.parse({
    id: 't_0123456789abcdef',
    root: '/repo',
    workspace: '/repo',
    agent: 'demo',
    objective: 'x',
    mode: 'write',
    isolation: 'worktree',
    network: true,
    timeout_ms: 60_000,
    created_at: new Date().toISOString(),
    launcher: { kind: 'slurm', partition: 'gpu', time: '30', cpus: 2, mem: '4G', extra_args: ['--qos=low'] },
  });

  it('sbatch gets names to export, never values, and the resources asked for', () => {
    const paths = taskPaths('/repo', spec.id);
    const args = sbatchArguments(spec, spec.launcher as Extract<LaunchSpec['launcher'], { kind: 'slurm' }>, paths, ['PATH', 'HOME']);
    assert.ok(args.includes('--export=NONE,PATH,HOME'));
    for (const wanted of ['--partition=gpu', '--time=30', '--cpus-per-task=2', '--mem=4G', '--qos=low', `--output=${paths.supervisorLog}`, `--job-name=caesar-${spec.id}`]) {
      assert.ok(args.includes(wanted), `${wanted} in ${args.join(' ')}`);
    }
    assert.equal(args.at(-1), paths.jobScript);
  });

  it('the job environment is the minimal set plus the agent\'s keys, whatever the shell holds', () => {
    const saved = { ...process.env };
    try {
      process.env.AWS_SECRET_ACCESS_KEY = 'secret';
      process.env.GITHUB_TOKEN = 'secret';
      process.env.CAESAR_DEMO_DELAY_MS = '5';
      const env = jobEnvironment(spec, { CAESAR_KILL_GRACE_MS: '100' });
      assert.equal(env.AWS_SECRET_ACCESS_KEY, undefined);
      assert.equal(env.GITHUB_TOKEN, undefined);
      assert.equal(env.PATH, process.env.PATH);
      assert.equal(env.CAESAR_DEMO_DELAY_MS, '5', "the demo adapter's own key");
      assert.equal(env.CAESAR_KILL_GRACE_MS, '100', "the delegation's own additions");
    } finally {
      process.env = saved;
    }
  });

  it('refuses extra sbatch arguments that change what the job runs, sees or writes', () => {
    assert.equal(sbatchArgProblem(['--qos=low', '--exclusive', '--account=lab']), undefined);
    for (const bad of ['--export=ALL', '--output=/home/u/.bashrc', '--wrap=id', '--chdir=/', '-o', 'x', '--get-user-env', '--qos']) {
      assert.ok(sbatchArgProblem([bad]), bad);
    }
    assert.ok(sbatchArgProblem(['--comment=a\nb']));
  });

  it('the job script fails at once, saying why, on a node that cannot see the task directory; quotes survive', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'caesar-job-'));
    try {
      const script = path.join(dir, 'job.sh');
      writeFileSync(script, jobScript('/bin/echo', "/x/it's.js", path.join(dir, "missing 'task'")));
      const missing = spawnSync('sh', [script], { encoding: 'utf8' });
      assert.equal(missing.status, 97);
      assert.match(missing.stderr, /cannot see the task directory .*missing 'task'.*file system every node of the cluster sees/);
      writeFileSync(script, jobScript('/bin/echo', "/x/it's.js", dir));
      const ran = spawnSync('sh', [script], { encoding: 'utf8' });
      assert.equal(ran.status, 0, ran.stderr);
      assert.equal(ran.stdout.trim(), `--max-semi-space-size=1 /x/it's.js supervise ${dir}`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('reads sbatch --parsable and squeue output', () => {
    assert.deepEqual(parseSubmission('42\n'), { job_id: '42' });
    assert.deepEqual(parseSubmission('42;cluster-a\n'), { job_id: '42', cluster: 'cluster-a' });
    assert.equal(parseSubmission('sbatch: error: …'), undefined);
    assert.deepEqual([...parseQueue('42|PENDING|Resources\n43|RUNNING|None\n')], [
      ['42', { state: 'PENDING', reason: 'Resources' }],
      ['43', { state: 'RUNNING', reason: 'None' }],
    ]);
  });

  it('what the queue makes of an active task: queued, pending, lost, cancelled; no answer changes nothing', () => {
    const state = { status: 'pending', created_at: new Date(0).toISOString() } as TaskState;
    const record = { kind: 'slurm' as const, job_id: '42', submitted_at: new Date().toISOString() };
    assert.equal(observedStatus(state, Date.now(), { record, job: { state: 'PENDING', reason: 'Priority' } }), 'queued');
    assert.equal(observedStatus(state, Date.now(), { record, job: undefined }), 'queued', 'squeue unanswered: no verdict');
    assert.equal(observedStatus(state, Date.now(), { record, job: { state: 'RUNNING', reason: 'None' } }), 'pending');
    assert.equal(observedStatus(state, Date.now(), { record, job: null }), 'lost');
    assert.equal(observedStatus(state, Date.now(), { record, job: { state: 'FAILED', reason: 'None' } }), 'lost');
    assert.equal(observedStatus(state, Date.now(), { record, job: { state: 'CANCELLED', reason: 'None' }, cancelRequested: true }), 'cancelled');
    const running = { ...state, status: 'running', supervisor_pid: 1, supervisor_host: 'another-node' } as TaskState;
    assert.equal(observedStatus(running, Date.now(), { record, job: { state: 'RUNNING', reason: 'None' } }), 'running');
    assert.equal(observedStatus(running, Date.now(), { record, job: null }), 'lost');
    assert.equal(observedStatus({ ...running, status: 'succeeded' } as TaskState, Date.now(), { record }), 'succeeded');
  });
});

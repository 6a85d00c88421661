/**
 * A task through Slurm against the same task run locally (issue 26): `caesar run --launcher slurm` and `--launcher
 * local` with the demo agent in a 2k-file repository, interleaved, and for Slurm the time from `caesar run`'s start to
 * the agent's `started` event (submit → agent started: sbatch, the controller's scheduling, slurmd starting the job,
 * the supervisor's start). Needs a Slurm controller that answers: `npm run bench:slurm` starts a one-node cluster in a
 * loopback-only namespace for it (test/launch/run.mjs --bench), as the launcher suite does.
 */
import { execFile, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { benchDir, benchHome, cleanupBench, figures, interleave, loadNote, makeBenchRepo, ratio, remember, runsFromEnv, spread } from './lib';
import { bundleCli } from './task.bench';

const run = promisify(execFile);

export async function benchSlurm(): Promise<Record<string, number | string>> {
  if (spawnSync('squeue', ['--noheader', '--me'], { encoding: 'utf8' }).status !== 0) {
    return { skipped: 'no Slurm controller answers here: run `npm run bench:slurm` (it starts a one-node cluster as root)' };
  }
  const runs = runsFromEnv(5);
  const cli = await bundleCli();
  const out: Record<string, number | string> = { runs, load_before: loadNote() };
  const env = { ...process.env, CAESAR_CLI_JS: cli, CAESAR_COMPILE_CACHE: remember(benchDir('caesar-bench-cache-')), CAESAR_DEMO_DELAY_MS: '0', CAESAR_DEMO_AGENT_JS: path.resolve(__dirname, '..', 'dist', 'demo-agent.js'), HOME: benchHome('') };
  const repo = makeBenchRepo(2000);
  const toAgent: number[] = [];
  const task = (launcher: 'local' | 'slurm') => ({
    run: async () => {
      const started = Date.now();
      const { stdout } = await run(process.execPath, [cli, 'run', 'Write a note into NOTES.md', '--agent', 'demo', '--launcher', launcher, '--mode', 'read-only', '--json'], { cwd: repo, env, maxBuffer: 1 << 24 });
      const result = JSON.parse(stdout) as { task_id: string; status: string };
      if (result.status !== 'succeeded') throw new Error(`task did not succeed: ${stdout.slice(0, 500)}`);
      if (launcher === 'slurm') {
        const first = readFileSync(path.join(repo, '.caesar', 'tasks', result.task_id, 'events.jsonl'), 'utf8').split('\n', 1)[0]!;
        toAgent.push(Date.parse((JSON.parse(first) as { at: string }).at) - started);
      }
    },
  });
  try {
    const m = await interleave({ slurm: task('slurm'), local: task('local') }, runs);
    Object.assign(out, figures('slurm_whole_task', m.slurm!, false), figures('local_whole_task', m.local!, false));
    out.slurm_over_local = ratio(m.slurm!, m.local!);
    const s = spread(toAgent);
    Object.assign(out, { slurm_submit_to_agent_started_ms_min: s.min, slurm_submit_to_agent_started_ms_median: s.median, slurm_submit_to_agent_started_ms_max: s.max });
    return out;
  } finally {
    cleanupBench();
  }
}

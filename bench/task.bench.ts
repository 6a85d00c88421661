/**
 * A whole task end to end, as a user runs it: `caesar run --json` (CLI → detached supervisor → worktree → agent →
 * reconcile → result → the CLI prints it and exits), with a tiny OACP agent (`[[agent]]`, /bin/sh) that sleeps
 * 0.2 s, writes one file and its report. Its floor, measured in the same run and interleaved: the same agent
 * between `git worktree add --detach` and `git worktree remove` in a shell script (in place: the agent, then one
 * `git status`). Repositories of 2k and 10k files on tmpfs; the CLI is bundled from the current sources. With
 * `BENCH_REFERENCE_CLI`, the reference implementation runs the same cases in the same rounds (see referenceCli).
 * Not covered: our task keeps its worktree for review (removed untimed after each run), the floor removes it.
 */
import { bindingOf, sealDocument } from '../src/engine/store/record-seal';
import { execFile, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { build, type Plugin } from 'esbuild';
import { countingGit, endIdleSupervisors, gitCalls, residentMiB, waitForIdle, warmFolder } from './task-warm';
import { benchDir, benchHome, cleanupBench, figures, git, interleave, loadNote, makeBenchRepo, ratio, remember, runsFromEnv, sampleNodePeaks, sizesFromEnv, spread, type Measured } from './lib';

const run = promisify(execFile);
const REPO_ROOT = path.resolve(__dirname, '..');

const REPORT = JSON.stringify({ protocol: 'caesar.report/v1', status: 'success', summary: 'ok', changes: [{ path: 'bench.txt', action: 'created' }] });
/** The agent: sleep, write one file, write the report where OACP says ($CAESAR_REPORT_PATH). */
const agentScript = (sleepSeconds: number) =>
  `${sleepSeconds > 0 ? `sleep ${sleepSeconds}; ` : ''}echo done > bench.txt; printf '%s' '${REPORT}' > "$CAESAR_REPORT_PATH"`;

const entry = (id: string, script: string) => `[[agent]]\nid = "${id}"\nbin = "/bin/sh"\nargs = [${JSON.stringify('-c')}, ${JSON.stringify(script)}, "{{prompt}}"]\n`;
// `starter` notes when it started (ns since the epoch) beside its report: the pool's figure is the time to that.
const starter = `date +%s%N > "$CAESAR_REPORT_PATH.started"; ${agentScript(0)}`;
/** The user's own layer (the bench's HOME): the agents, and in-place writes allowed (only the user may). */
// `ender` notes when its last instruction ran, in its report's summary (a file beside it would not leave the
// sandbox): the git processes after that are the conclusion's.
const ender = `echo done > bench.txt; printf '%s' "$(printf '%s' '${REPORT}' | sed "s/\\"summary\\":\\"ok\\"/\\"summary\\":\\"ended $(date +%s%N)\\"/")" > "$CAESAR_REPORT_PATH"`;
const GLOBAL_CONFIG = `[policy]\nallow_inplace_write = true\n\n${entry('sleeper', agentScript(0.2))}\n${entry('quick', agentScript(0))}\n${entry('starter', starter)}\n${entry('ender', ender)}`;

/** The repository's own .caesar/config.toml: only `[worktree] pool`, which names no program. */
function writeConfig(repo: string, pool = 0): void {
  mkdirSync(path.join(repo, '.caesar'), { recursive: true });
  writeFileSync(path.join(repo, '.caesar', 'config.toml'), pool ? `[worktree]\npool = ${pool}\n` : '');
}

/**
 * The reference implementation, when `BENCH_REFERENCE_CLI` names its CLI entry (a build of its sources with its own
 * tooling, e.g. `node <ref>/packages/cli/dist/bin.js`): the same cases run with it, interleaved with ours and the
 * floor, in a repository of its own with the same files (its configuration format differs from ours), with the same
 * agent as a generic `[[agent]]` entry. Its `run` is synchronous: the command ends when the task has.
 */
function referenceCli(): string | undefined {
  const cli = process.env.BENCH_REFERENCE_CLI;
  if (!cli) return undefined;
  if (!existsSync(cli)) throw new Error(`BENCH_REFERENCE_CLI=${cli}: no such file`);
  return cli;
}

function writeReferenceConfig(repo: string): void {
  const entry = (id: string, script: string) => `[[agent]]\nid = "${id}"\ndisplay_name = "${id}"\nbin = "/bin/sh"\nargs = [${JSON.stringify('-c')}, ${JSON.stringify(script)}, "{{prompt}}"]\n`;
  mkdirSync(path.join(repo, '.caesar'), { recursive: true });
  writeFileSync(path.join(repo, '.caesar', 'config.toml'), `[policy]\nallow_inplace_write = true\n\n${entry('sleeper', agentScript(0.2))}\n${entry('quick', agentScript(0))}`);
}

async function runReference(cli: string, repo: string, agent: string, isolation: string, onSpawn?: (pid: number) => void): Promise<void> {
  const child = execFile(process.execPath, [cli, 'run', '--agent', agent, '--isolation', isolation, '--json', 'write bench.txt'], {
    cwd: repo,
    maxBuffer: 1 << 24,
    timeout: 120_000, // a hung reference task fails the run instead of hanging the benchmark
    killSignal: 'SIGKILL',
  });
  if (child.pid) onSpawn?.(child.pid);
  let stdout = '';
  child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  const result = JSON.parse(stdout || '{}') as { status?: string; diff?: { files: unknown[] } };
  if (code !== 0 || result.status !== 'succeeded' || result.diff?.files.length !== 1) throw new Error(`reference task did not succeed (exit ${code}): ${stdout.slice(0, 500)}`);
}

/** Untimed, after each reference task: its worktrees and branches, its task and state records, the file written in place. */
function cleanupReference(repo: string): void {
  const worktrees = path.join(repo, '.caesar', 'wt');
  if (existsSync(worktrees)) for (const wt of readdirSync(worktrees)) git(repo, 'worktree', 'remove', '--force', path.join(worktrees, wt));
  for (const branch of git(repo, 'branch', '--list', 'caesar/*', '--format=%(refname:short)').split('\n').filter(Boolean)) git(repo, 'branch', '-q', '-D', branch);
  for (const dir of ['tasks', 'state']) rmSync(path.join(repo, '.caesar', dir), { recursive: true, force: true });
  rmSync(path.join(repo, 'bench.txt'), { force: true });
}

/** The CLI and the supervisor (its loader and its bundle), bundled from the current sources into one folder. */
export async function bundleCli(): Promise<string> {
  const out = remember(benchDir('caesar-bench-cli-'));
  const entries: Array<[string, string]> = [
    ['src/bin/cli-loader.ts', 'caesar.js'],
    ['src/bin/caesar.ts', 'caesar-main.js'],
    ['src/bin/run-main.ts', 'caesar-run.js'],
    ['src/bin/supervisor.ts', 'supervisor.js'],
    ['src/bin/supervisor-main.ts', 'supervisor-main.js'],
    // Loaded by a supervisor only for a cut network whose endpoint is a host name (sandbox.bench.ts measures it).
    ['src/engine/sandbox/host-proxy-server.ts', 'host-proxy.js'],
  ];
  // The same plugins and options as esbuild.mjs, so that size, start time and memory are the shipped bundles'.
  const { zodEnglishOnly, asciiOutput } = (await import(path.join(REPO_ROOT, 'esbuild-plugins.mjs'))) as { zodEnglishOnly: Plugin; asciiOutput: Plugin };
  // An entry the sources do not have (an older revision, measured for comparison) is left out, as esbuild.mjs does.
  for (const [entry, file] of entries.filter(([e]) => existsSync(path.join(REPO_ROOT, e)))) {
    const lean = file === 'supervisor-main.js' || file === 'host-proxy.js' ? { minifyWhitespace: true, minifySyntax: true } : {};
    await build({ entryPoints: [path.join(REPO_ROOT, entry)], bundle: true, platform: 'node', target: 'node20', format: 'cjs', outfile: path.join(out, file), logLevel: 'silent', charset: 'ascii', plugins: [zodEnglishOnly, asciiOutput], ...lean });
  }
  return path.join(out, 'caesar.js');
}

export async function benchTask(): Promise<Record<string, number | string>> {
  const runs = runsFromEnv(5);
  const cli = await bundleCli();
  const scratch = remember(benchDir('caesar-bench-floor-'));
  const out: Record<string, number | string> = { runs, load_before: loadNote() };
  const reference = referenceCli();
  if (reference) out.reference = reference;
  // A compile cache of this run's own: the first (warm-up) task fills it, as a user's first task does.
  // A warm folder of the bench's own (issue 27): its idle supervisors are this bundle's alone.
  const env = { ...process.env, CAESAR_CLI_JS: cli, CAESAR_COMPILE_CACHE: remember(benchDir('caesar-bench-cache-')), HOME: benchHome(GLOBAL_CONFIG), CAESAR_WARM_SUPERVISOR: '1', CAESAR_WARM_DIR: warmFolder() };
  const NO_WARM = { CAESAR_WARM_SUPERVISOR: '0' };
  try {
    for (const size of sizesFromEnv([2000, 10000, 50000])) {
      const repo = makeBenchRepo(size);
      writeConfig(repo);
      const referenceRepo = reference ? makeBenchRepo(size, 'caesar-bench-ref-repo-') : undefined;
      if (referenceRepo) writeReferenceConfig(referenceRepo);
      const theirs = (agent: string, isolation: string) => ({
        run: () => runReference(reference!, referenceRepo!, agent, isolation),
        cleanup: () => cleanupReference(referenceRepo!),
      });
      let lastTask = '';
      const runOurs = async (agent: string, isolation: string, onSpawn?: (pid: number) => void, extraEnv: NodeJS.ProcessEnv = {}) => {
        const child = execFile(process.execPath, [cli, 'run', 'write bench.txt', '--agent', agent, '--isolation', isolation, '--mode', 'write', '--json'], { cwd: repo, env: { ...env, ...extraEnv }, maxBuffer: 1 << 24 });
        if (child.pid) onSpawn?.(child.pid);
        let stdout = '';
        let stderr = '';
        child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
        child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
        const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
        const result = JSON.parse(stdout || '{}') as { task_id: string; status: string; diff?: { files: unknown[] } };
        if (code !== 0 || result.status !== 'succeeded' || result.diff?.files.length !== 1) throw new Error(`task did not succeed (exit ${code}): ${stdout.slice(0, 500)} ${stderr.slice(0, 1000)}`);
        lastTask = result.task_id;
      };
      const cleanupOurs = (isolation: string) => () => {
        // Untimed: a reviewed task's worktree would be applied or discarded later.
        if (isolation === 'worktree') {
          git(repo, 'worktree', 'remove', '--force', path.join(repo, '.caesar', 'wt', lastTask));
          git(repo, 'branch', '-q', '-D', `caesar/${lastTask}`);
        } else rmSync(path.join(repo, 'bench.txt'), { force: true });
        rmSync(path.join(repo, '.caesar', 'tasks', lastTask), { recursive: true, force: true });
      };
      // With the warm supervisor on (the default), each run first waits, untimed, for the idle one to listen.
      const ours = (agent: string, isolation: string, extraEnv?: NodeJS.ProcessEnv) => ({
        ...(extraEnv?.CAESAR_WARM_SUPERVISOR === '0' ? {} : { prepare: async () => void (await waitForIdle(cli, env)) }),
        run: () => runOurs(agent, isolation, undefined, extraEnv),
        cleanup: cleanupOurs(isolation),
      });
      const floorWorktree = (sleepSeconds: number) => ({
        run: async () => {
          const wt = path.join(scratch, `wt-${size}`);
          const script = `set -e\ngit worktree add -q --detach "$1" HEAD\n(cd "$1" && CAESAR_REPORT_PATH="$2" /bin/sh -c "$3")\ngit worktree remove --force "$1"\n`;
          await run('/bin/sh', ['-c', script, 'floor', wt, path.join(scratch, 'report.json'), agentScript(sleepSeconds)], { cwd: repo });
        },
      });
      const floorInplace = {
        run: async () => {
          const script = `set -e\nCAESAR_REPORT_PATH="$1" /bin/sh -c "$2"\ngit status --porcelain -uall >/dev/null\n`;
          await run('/bin/sh', ['-c', script, 'floor', path.join(scratch, 'report.json'), agentScript(0.2)], { cwd: repo });
        },
        cleanup: () => rmSync(path.join(repo, 'bench.txt'), { force: true }),
      };
      const cases: Parameters<typeof interleave>[0] = {
        ours_worktree: ours('sleeper', 'worktree'),
        floor_worktree: floorWorktree(0.2),
        ours_worktree_no_warm: ours('sleeper', 'worktree', NO_WARM),
        ours_worktree_agent_exits_at_once: ours('quick', 'worktree'),
        floor_worktree_agent_exits_at_once: floorWorktree(0),
        // Without the warm supervisor: the standby the CLI's loader starts (the previous revision), then not even that.
        ours_worktree_agent_exits_at_once_no_warm: ours('quick', 'worktree', NO_WARM),
        ours_worktree_agent_exits_at_once_no_standby: ours('quick', 'worktree', { ...NO_WARM, CAESAR_SUPERVISOR_STANDBY: 'off' }),
      };
      if (size === 2000 || process.env.BENCH_INPLACE_ALL) {
        cases.ours_inplace = ours('sleeper', 'inplace');
        cases.ours_inplace_no_warm = ours('sleeper', 'inplace', NO_WARM);
        cases.floor_inplace = floorInplace;
      }
      if (referenceRepo) {
        cases.reference_worktree = theirs('sleeper', 'worktree');
        // Not the agent that exits at once: the reference never ends such a task (its runner awaits two writes before
        // it listens for the agent's exit, so an exit meanwhile is never seen); BENCH_REFERENCE_QUICK=1 tries anyway.
        if (process.env.BENCH_REFERENCE_QUICK === '1') cases.reference_worktree_agent_exits_at_once = theirs('quick', 'worktree');
        if (cases.ours_inplace) cases.reference_inplace = theirs('sleeper', 'inplace');
      }
      const k = `${size / 1000}k`;
      const m = await interleave(cases, size >= 50000 ? Math.min(runs, 3) : runs, { warmup: true });
      // CPU is left out: the supervisor is detached, so this process cannot account for it.
      for (const [name, measured] of Object.entries(m)) Object.assign(out, figures(`${k}_${name}`, measured, false));
      const pairs: Array<[string, Measured | undefined, Measured | undefined]> = [
        ['worktree', m.ours_worktree, m.floor_worktree],
        ['worktree_agent_exits_at_once', m.ours_worktree_agent_exits_at_once, m.floor_worktree_agent_exits_at_once],
        ['inplace', m.ours_inplace, m.floor_inplace],
      ];
      for (const [name, a, b] of pairs) if (a && b) out[`${k}_ratio_${name}_to_floor`] = ratio(a, b);
      for (const [name, a, floor] of pairs) {
        const theirs = m[`reference_${name}`];
        if (!a || !floor || !theirs) continue;
        out[`${k}_ratio_reference_${name}_to_floor`] = ratio(theirs, floor);
        out[`${k}_ratio_${name}_ours_to_reference`] = ratio(a, theirs);
      }
      out[`${k}_ratio_standby_to_no_standby`] = ratio(m.ours_worktree_agent_exits_at_once_no_warm!, m.ours_worktree_agent_exits_at_once_no_standby!);
      out[`${k}_ratio_warm_to_no_warm_exits_at_once`] = ratio(m.ours_worktree_agent_exits_at_once!, m.ours_worktree_agent_exits_at_once_no_warm!);
      out[`${k}_ratio_warm_to_no_warm_worktree`] = ratio(m.ours_worktree!, m.ours_worktree_no_warm!);
      if (size >= 10000) Object.assign(out, await poolFigures(k, repo, scratch, runOurs, () => lastTask, runs));
      if (size === 2000) {
        const idleBefore = new Map<number, number>();
        const runWarm = async (agent: string, isolation: string, onSpawn?: (pid: number, extra?: number[]) => void) => {
          const idle = await waitForIdle(cli, env);
          await new Promise((r) => setTimeout(r, 200)); // its load is done: what it holds idle, untimed
          idleBefore.set(idle, residentMiB(idle).rss);
          await runOurs(agent, isolation, (pid) => onSpawn?.(pid, [idle]));
        };
        Object.assign(out, await peakMemory(runWarm, cleanupOurs('worktree'), runs, '', 2, idleBefore));
        const runCold = (agent: string, isolation: string, onSpawn?: (pid: number) => void) => runOurs(agent, isolation, onSpawn, NO_WARM);
        Object.assign(out, await peakMemory(runCold, cleanupOurs('worktree'), runs, 'no_warm_'));
        Object.assign(out, await idleHolds(cli, env));
        Object.assign(out, await conclusionGit(repo, env, runOurs, () => lastTask, cleanupOurs('worktree'), runs));
        Object.assign(out, await conclusionGit(repo, env, runOurs, () => lastTask, cleanupOurs('worktree'), runs, true));
      }
      if (size === 2000 && referenceRepo) {
        const runTheirs = (agent: string, isolation: string, onSpawn?: (pid: number) => void) => runReference(reference!, referenceRepo, agent, isolation, onSpawn);
        Object.assign(out, await peakMemory(runTheirs, () => cleanupReference(referenceRepo), runs, 'reference_', 1));
      }
      if (size === 2000) Object.assign(out, await startupFigures(cli, repo, env, runs, reference));
      // What is measured so far, on stderr, so that a long run that fails later still leaves its figures.
      console.error(`[task bench] after ${k}: ${JSON.stringify(out)}`);
    }
  } finally {
    endIdleSupervisors(cli);
    cleanupBench();
  }
  out.load_after = loadNote();
  return out;
}

/**
 * The warm worktree pool: the time from `caesar run` to the agent's first instruction, with `[worktree] pool = 1`
 * (an idle worktree waiting, untimed) and without a pool, beside the floor: `git worktree add --detach` alone (what
 * any tool must do before its agent can start in a fresh worktree). Interleaved; the config is switched untimed.
 */
async function poolFigures(
  k: string,
  repo: string,
  scratch: string,
  runOurs: (agent: string, isolation: string) => Promise<void>,
  lastTask: () => string,
  runs: number,
): Promise<Record<string, number>> {
  const toStart: Record<string, number[]> = { pool_warm: [], no_pool: [] };
  const idle = () => readdirSync(path.join(repo, '.caesar', 'wt', '.pool')).filter((n) => n.startsWith('pool-')).length;
  const ours = (name: 'pool_warm' | 'no_pool') => ({
    prepare: async () => {
      writeConfig(repo, name === 'pool_warm' ? 1 : 0);
      if (name !== 'pool_warm') return;
      // The first task of a pool finds it empty and fills it in the background: wait (untimed) until one is idle.
      for (let i = 0; i < 600 && !(existsSync(path.join(repo, '.caesar', 'wt', '.pool')) && idle() >= 1 && !existsSync(path.join(repo, '.caesar', 'wt', '.pool', '.refill.lock'))); i++) {
        if (i === 0 && !existsSync(path.join(repo, '.caesar', 'wt', '.pool'))) {
          await runOurs('starter', 'worktree');
          removeTask(repo, lastTask());
        }
        await new Promise((r) => setTimeout(r, 100));
      }
    },
    run: async () => {
      const t0 = Date.now();
      await runOurs('starter', 'worktree');
      const started = Number(readFileSync(path.join(repo, '.caesar', 'tasks', lastTask(), 'report.json.started'), 'utf8').trim()) / 1e6;
      toStart[name]!.push(started - t0);
    },
    cleanup: () => removeTask(repo, lastTask()),
  });
  const m = await interleave(
    {
      pool_warm: ours('pool_warm'),
      no_pool: ours('no_pool'),
      floor_worktree_add: {
        run: async () => void (await run('git', ['worktree', 'add', '-q', '--detach', path.join(scratch, `wt-pool-${k}`), 'HEAD'], { cwd: repo })),
        cleanup: () => void git(repo, 'worktree', 'remove', '--force', path.join(scratch, `wt-pool-${k}`)),
      },
    },
    runs,
  );
  writeConfig(repo);
  // The last task's background refill may still be checking a worktree out: let it end before anything is removed.
  const refillLock = path.join(repo, '.caesar', 'wt', '.pool', '.refill.lock');
  for (let i = 0; i < 3000 && existsSync(refillLock); i++) await new Promise((r) => setTimeout(r, 100));
  const out: Record<string, number> = {};
  for (const [name, values] of Object.entries(toStart)) Object.assign(out, figures(`${k}_${name}_to_agent_start`, { wall: values, cpu: [] }, false));
  Object.assign(out, figures(`${k}_floor_worktree_add`, m.floor_worktree_add!, false));
  Object.assign(out, figures(`${k}_pool_warm_whole_task`, m.pool_warm!, false));
  return out;
}

/** Untimed: the task's worktree (git directly, so the pool does not take it back) and its folder. */
function removeTask(repo: string, id: string): void {
  const wt = path.join(repo, '.caesar', 'wt', id);
  if (existsSync(wt)) git(repo, 'worktree', 'remove', '--force', wt);
  spawnSync('git', ['branch', '-q', '-D', `caesar/${id}`], { cwd: repo });
  rmSync(path.join(repo, '.caesar', 'tasks', id), { recursive: true, force: true });
}

/**
 * Peak memory of a whole worktree task (2k files, 0.2 s agent): the per-process peak resident set (VmHWM) of our Node
 * processes (the CLI and the supervisor it starts; git and the agent are not ours to count), sampled from /proc every
 * 10 ms, summed. Issue 14's reference figure: 104 MiB.
 */
async function peakMemory(
  runOurs: (agent: string, isolation: string, onSpawn?: (pid: number, extra?: number[]) => void) => Promise<void>,
  cleanup: () => void,
  runs: number,
  prefix = '',
  processes = 2,
  idleBefore?: Map<number, number>,
): Promise<Record<string, number>> {
  const totals: number[] = [];
  const biggest: number[] = [];
  const split: Record<'cli' | 'supervisor' | 'growth' | 'task', number[]> = { cli: [], supervisor: [], growth: [], task: [] };
  for (let i = 0; i < runs; i++) {
    let sampler: ReturnType<typeof sampleNodePeaks> | undefined;
    let cli = 0;
    await runOurs('sleeper', 'worktree', (pid, extra) => ((cli = pid), (sampler = sampleNodePeaks(pid, 10, extra))));
    const byPid = sampler?.stop() ?? new Map<number, number>();
    const peaks = [...byPid.values()];
    cleanup();
    totals.push(peaks.reduce((a, b) => a + b, 0));
    biggest.push(Math.max(...peaks));
    // Ours: the CLI and its supervisor; the reference runs its task inside its CLI.
    if (peaks.length < processes) throw new Error(`expected ${processes} node process(es), saw ${peaks.length}`);
    if (idleBefore) Object.entries(taskShare(byPid, cli, idleBefore)).forEach(([k, v]) => split[k as keyof typeof split].push(v));
  }
  const t = spread(totals);
  return {
    [`${prefix}peak_rss_all_processes_mib_min`]: t.min,
    [`${prefix}peak_rss_all_processes_mib_median`]: t.median,
    [`${prefix}peak_rss_all_processes_mib_max`]: t.max,
    [`${prefix}peak_rss_largest_process_mib_median`]: spread(biggest).median,
    ...(idleBefore
      ? {
          [`${prefix}peak_rss_cli_mib_median`]: spread(split.cli).median,
          [`${prefix}peak_rss_supervisor_mib_median`]: spread(split.supervisor).median,
          [`${prefix}supervisor_growth_over_idle_mib_median`]: spread(split.growth).median,
          [`${prefix}per_task_cli_plus_supervisor_growth_mib_median`]: spread(split.task).median,
        }
      : {}),
  };
}

/**
 * A warm task's memory apart from what its supervisor held while idle (issue 27: an idle supervisor's holding is a
 * figure of its own, paid once per user, not per task): the CLI's peak, the supervisor's peak, and how far that peak
 * rose above the supervisor's resident set just before it took the task.
 */
function taskShare(byPid: Map<number, number>, cli: number, idleBefore: Map<number, number>): Record<'cli' | 'supervisor' | 'growth' | 'task', number> {
  const supervisor = [...byPid.keys()].find((pid) => idleBefore.has(pid));
  if (supervisor === undefined) throw new Error('the warm supervisor was not sampled');
  const growth = Math.max(0, byPid.get(supervisor)! - idleBefore.get(supervisor)!);
  const cliPeak = byPid.get(cli) ?? NaN;
  return { cli: cliPeak, supervisor: byPid.get(supervisor)!, growth, task: cliPeak + growth };
}

/** What an idle supervisor holds while it waits for a task (issue 27): resident now, and its peak so far. */
async function idleHolds(cli: string, env: NodeJS.ProcessEnv): Promise<Record<string, number>> {
  const pid = await waitForIdle(cli, env);
  await new Promise((r) => setTimeout(r, 500)); // settled: its load is done, it only listens
  const { rss, hwm } = residentMiB(pid);
  return { idle_supervisor_rss_mib: rss, idle_supervisor_peak_rss_mib: hwm };
}

/**
 * The git processes of one task (2k files, worktree, an agent that exits at once), counted through a logging `git`
 * on PATH: all of them, and those after the agent's last instruction (the conclusion: checkout guard, diff, result).
 * Over `runs` tasks: the counts of the last, and the conclusion's time, from the agent's last instruction to the
 * task's `ended_at` (the conclusion written, before the slot is given back), median and spread.
 */
async function conclusionGit(
  repo: string,
  env: NodeJS.ProcessEnv,
  runOurs: (agent: string, isolation: string, onSpawn?: (pid: number) => void, extraEnv?: NodeJS.ProcessEnv) => Promise<void>,
  lastTask: () => string,
  cleanup: () => void,
  runs = 1,
  unconfined = false,
): Promise<Record<string, number | string>> {
  const log = path.join(benchDir('caesar-bench-gitlog-'), 'git.log');
  remember(path.dirname(log));
  let calls: ReturnType<typeof gitCalls> | undefined;
  const spans: number[] = [];
  for (let i = 0; i < runs; i++) {
    writeFileSync(log, '');
    // Sandboxed as a task is by default where bwrap runs; unconfined, the checkout guard's work is added.
    await runOurs('ender', 'worktree', undefined, { ...NO_WARM_ENV, ...(unconfined ? { CAESAR_SANDBOX: 'off' } : {}), PATH: `${countingGit(log)}:${env.PATH ?? ''}` });
    const folder = path.join(repo, '.caesar', 'tasks', lastTask());
    const ended = BigInt(/ended (\d+)/.exec(readFileSync(path.join(folder, 'report.json'), 'utf8'))?.[1] ?? 'x');
    const endedAt = /"ended_at":\s*"([^"]+)"/.exec(readFileSync(path.join(folder, 'state.json'), 'utf8'))?.[1];
    if (endedAt) spans.push(Date.parse(endedAt) - Number(ended / 1_000_000n));
    calls = gitCalls(log, ended);
    cleanup();
  }
  const span = spread(spans);
  const named = (name: string) => (unconfined ? `unconfined_${name}` : name);
  return {
    [named('git_processes_per_task')]: calls?.total ?? NaN,
    [named('git_processes_in_conclusion')]: calls?.afterAgent ?? NaN,
    [named('git_conclusion_commands')]: calls?.commands.join(' | ') ?? '',
    [named('conclusion_ms_min')]: span.min,
    [named('conclusion_ms_median')]: span.median,
    [named('conclusion_ms_max')]: span.max,
  };
}

const NO_WARM_ENV = { CAESAR_WARM_SUPERVISOR: '0' };

/** `caesar --version` and `caesar ps` with 200 tasks, beside `node -e 0`, interleaved. */
async function startupFigures(cli: string, repo: string, env: NodeJS.ProcessEnv, runs: number, reference?: string): Promise<Record<string, number>> {
  const many = remember(benchDir('caesar-bench-ps-'));
  git(many, 'init', '-q');
  const tasks = path.join(many, '.caesar', 'tasks');
  const createdAt = new Date().toISOString();
  for (let i = 0; i < 200; i++) {
    const id = `t_${i.toString(16).padStart(32, '0')}`;
    mkdirSync(path.join(tasks, id), { recursive: true });
    const state = { id, status: 'succeeded', agent: 'sleeper', objective: `task ${i}`, mode: 'write', isolation: 'worktree', network: true, timeout_ms: 600000, depth: 0, created_at: createdAt, ended_at: createdAt, root: many, workspace: many, excluded_paths: [] };
    writeFileSync(path.join(tasks, id, 'state.json'), JSON.stringify(sealDocument('state', bindingOf(many, id), state)));
    writeFileSync(path.join(tasks, id, 'events.jsonl'), '');
  }
  const m = await interleave(
    {
      node_e_0: { run: async () => void (await run(process.execPath, ['-e', '0'])) },
      caesar_version: { run: async () => void (await run(process.execPath, [cli, '--version'], { env })) },
      ...(reference ? { reference_version: { run: async () => void (await run(process.execPath, [reference, '--version'])) } } : {}),
      caesar_ps_200_tasks: {
        run: async () => {
          const { stdout } = await run(process.execPath, [cli, 'ps', '--status', 'succeeded', '--json'], { cwd: many, env, maxBuffer: 1 << 24 });
          if (!stdout.includes('t_000')) throw new Error(`ps saw no task: ${stdout.slice(0, 300)}`);
        },
      },
    },
    runs,
    { warmup: true },
  );
  void repo;
  const out: Record<string, number> = {};
  for (const [name, measured] of Object.entries(m)) Object.assign(out, figures(name, measured, false));
  return out;
}

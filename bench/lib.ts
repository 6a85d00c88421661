/**
 * What the benchmarks share: repositories of a given size on tmpfs (so that the disk's noise does not hide the
 * tools), interleaved timing of a figure and its floor, min/median/max, and CPU time including child processes.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import * as path from 'node:path';

/**
 * Where the benchmarks make their repositories: `$BENCH_ROOT` when set (a folder on a real disk, for the figures that
 * depend on it, such as the warm pool's), else /dev/shm when the machine has it (tmpfs), else the OS temp folder.
 */
export function benchTempRoot(): string {
  if (process.env.BENCH_ROOT) return process.env.BENCH_ROOT;
  const shm = '/dev/shm';
  return existsSync(shm) ? shm : tmpdir();
}

export function benchDir(prefix: string): string {
  return realpathSync(mkdtempSync(path.join(benchTempRoot(), prefix)));
}

const made: string[] = [];
/** Removes every directory made by makeBenchRepo / benchDir through `remember`. */
export function cleanupBench(): void {
  // Retried: a detached process (a task's supervisor, a pool refill) may still be writing there for a moment.
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true, maxRetries: 20, retryDelay: 250 });
}
export function remember(dir: string): string {
  made.push(dir);
  return dir;
}

export function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 256 * 1024 * 1024 }).trim();
}

/**
 * A repository with `files` small TypeScript files (40 lines each) spread over 50 × 7 folders, `.caesar/` ignored,
 * one commit, packed. 2k files ≈ 2 MB of sources.
 */
export function makeBenchRepo(files: number, prefix = 'caesar-bench-repo-'): string {
  const dir = remember(benchDir(prefix));
  git(dir, 'init', '-q', '-b', 'main');
  git(dir, 'config', 'user.name', 'Bench');
  git(dir, 'config', 'user.email', 'bench@example.invalid');
  git(dir, 'config', 'commit.gpgsign', 'false');
  writeFileSync(path.join(dir, '.gitignore'), '.caesar/\n');
  for (let i = 0; i < files; i++) {
    const file = path.join(dir, sourcePath(i));
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, sourceText(i));
  }
  git(dir, 'add', '-A');
  git(dir, 'commit', '-q', '-m', 'init');
  // Packed, as a cloned repository is: loose objects would make every blob read an open + inflate of its own file.
  git(dir, 'repack', '-a', '-d', '-q');
  return dir;
}

export function sourcePath(i: number): string {
  return `src/d${i % 50}/e${i % 7}/f${i}.ts`;
}

export function sourceText(i: number, edit = ''): string {
  let text = '';
  for (let j = 0; j < 40; j++) text += `export const v${i}_${j} = ${j};${j === 20 ? edit : ''}\n`;
  return text;
}

export interface Spread {
  min: number;
  median: number;
  max: number;
}

export function spread(values: number[]): Spread {
  const sorted = [...values].sort((a, b) => a - b);
  return { min: sorted[0] ?? NaN, median: sorted[Math.floor(sorted.length / 2)] ?? NaN, max: sorted[sorted.length - 1] ?? NaN };
}

/** User + system CPU of this process and of its waited-for children, in ms (children from /proc, 10 ms ticks). */
export function cpuNowMs(): number {
  const own = process.cpuUsage();
  let children = 0;
  try {
    // Fields after the command name: cutime and cstime are the 14th and 15th (1-based from `state`).
    const stat = readFileSync('/proc/self/stat', 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    children = (Number(fields[13]) + Number(fields[14])) * 10;
  } catch {
    children = 0; // not Linux: own CPU only
  }
  return (own.user + own.system) / 1000 + children;
}

export interface Measured {
  wall: number[];
  cpu: number[];
}

/**
 * Runs every case `runs` times, interleaved (case order rotated each round), so that a slow moment of a shared
 * machine hits every case alike. `prepare` (untimed) runs before each timed call, `cleanup` after it.
 */
export async function interleave(
  cases: Record<string, { run: () => Promise<void> | void; prepare?: () => Promise<void> | void; cleanup?: () => Promise<void> | void }>,
  runs: number,
  options: { warmup?: boolean } = {},
): Promise<Record<string, Measured>> {
  const names = Object.keys(cases);
  const out: Record<string, Measured> = Object.fromEntries(names.map((n) => [n, { wall: [], cpu: [] }]));
  // Untimed: fills the page cache, git's and V8's code caches, as any second task would find them.
  if (options.warmup) {
    for (const name of names) {
      const c = cases[name]!;
      await c.prepare?.();
      await c.run();
      await c.cleanup?.();
    }
  }
  for (let round = 0; round < runs; round++) {
    for (let k = 0; k < names.length; k++) {
      const name = names[(round + k) % names.length] as string;
      const c = cases[name]!;
      await c.prepare?.();
      const cpu0 = cpuNowMs();
      const t0 = performance.now();
      await c.run();
      const wall = performance.now() - t0;
      const cpu = cpuNowMs() - cpu0;
      await c.cleanup?.();
      out[name]!.wall.push(wall);
      out[name]!.cpu.push(cpu);
    }
  }
  return out;
}

/** The machine's load while a benchmark ran: 1-minute load average over the core count, before and after. */
export function loadNote(): string {
  return `load average ${loadavg()[0]!.toFixed(1)} on ${cpus().length} cores`;
}

/** Flat figures for run.ts: `<name>_wall_ms_{min,median,max}` and the median CPU. */
export function figures(name: string, m: Measured, withCpu = true): Record<string, number> {
  const w = spread(m.wall);
  const out: Record<string, number> = {
    [`${name}_ms_min`]: w.min,
    [`${name}_ms_median`]: w.median,
    [`${name}_ms_max`]: w.max,
  };
  if (withCpu) out[`${name}_cpu_ms_median`] = spread(m.cpu).median;
  return out;
}

export function ratio(a: Measured, b: Measured): number {
  return spread(a.wall).median / spread(b.wall).median;
}

export function sizesFromEnv(fallback: number[]): number[] {
  const raw = process.env.BENCH_SIZES;
  return raw ? raw.split(',').map((s) => Number(s.trim())).filter((n) => n > 0) : fallback;
}

export function runsFromEnv(fallback: number): number {
  const n = Number(process.env.BENCH_RUNS);
  return Number.isFinite(n) && n > 0 ? n : fallback;
}

/** The pids of `root` and of all its descendants, from /proc (Linux only; empty elsewhere). */
export function processTree(root: number): number[] {
  const children = new Map<number, number[]>();
  let entries: string[] = [];
  try {
    entries = readdirSync('/proc').filter((e) => /^\d+$/.test(e));
  } catch {
    return [];
  }
  for (const entry of entries) {
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      const list = children.get(ppid) ?? [];
      list.push(Number(entry));
      children.set(ppid, list);
    } catch {
      /* the process ended while we looked */
    }
  }
  const out: number[] = [];
  const queue = [root];
  while (queue.length) {
    const pid = queue.shift()!;
    out.push(pid);
    queue.push(...(children.get(pid) ?? []));
  }
  return out;
}

/**
 * Peak memory of our processes of a task: every `everyMs` the tree under `root` (the CLI) is listed and the VmHWM
 * (own peak resident set) of the root and of each task supervisor under it kept; `stop()` returns the per-process peaks, in MiB, by pid. Their sum
 * is an upper bound of the tree's peak at any one instant (the peaks need not coincide). Git and the agent are not
 * counted: only our own (node) processes.
 */
export function sampleNodePeaks(root: number, everyMs = 10, extra: number[] = []): { stop(): Map<number, number> } {
  const peaks = new Map<number, number>();
  const cmdlines = new Map<number, string>();
  const sample = () => {
    // `extra`: a task's warm supervisor (issue 27), started before this CLI and so not under it.
    for (const pid of [...processTree(root), ...extra]) {
      try {
        const status = readFileSync(`/proc/${pid}/status`, 'utf8');
        const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
        const ppid = Number(/PPid:\s+(\d+)/.exec(status)?.[1]);
        cmdlines.set(pid, cmdline);
        // Ours: the root (the CLI) and the supervisors it starts (`supervise`, or `standby` when started ahead of the
        // task by `caesar run`, supervisor-process.ts). A child between fork and exec (about to become git
        // or the agent) still looks like its Node parent, so it is told apart by its parent's identical command line.
        const forkOfParent = cmdlines.get(ppid) === cmdline;
        const ours = pid === root || extra.includes(pid) || ((cmdline.includes('\0supervise\0') || cmdline.endsWith('\0standby\0')) && !forkOfParent);
        if (!ours || (/Name:\s+(\S+)/.exec(status)?.[1] ?? '') !== 'node') continue;
        const hwm = /VmHWM:\s+(\d+) kB/.exec(status);
        if (hwm) peaks.set(pid, Math.max(peaks.get(pid) ?? 0, Number(hwm[1]) / 1024));
      } catch {
        /* ended between the listing and the read */
      }
    }
  };
  sample();
  const timer = setInterval(sample, everyMs);
  return {
    stop() {
      sample();
      clearInterval(timer);
      return peaks;
    },
  };
}

/**
 * A HOME of the bench's own, whose `~/.config/caesar/config.toml` (the user's own layer) holds `globalToml`: the
 * benches' `[[agent]]` entries and policy live there, as a user's own would. A repository's `.caesar/config.toml`
 * naming programs is used only once trusted, and its policy can only tighten the user's (issue 22). The user's real
 * HOME is never written.
 */
export function benchHome(globalToml: string): string {
  const home = remember(benchDir('caesar-bench-home-'));
  mkdirSync(path.join(home, '.config', 'caesar'), { recursive: true });
  writeFileSync(path.join(home, '.config', 'caesar', 'config.toml'), globalToml);
  return home;
}

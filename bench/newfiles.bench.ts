/**
 * A task that creates many new files (default 50,000, BENCH_SIZES to change), end to end through the bundled CLI:
 * `caesar run`, `caesar diff`, `caesar apply`, each beside its floor measured in the same round: one
 * `git status --porcelain -uall` of the same tree (the task's worktree, holding the same new files). Issue 23's
 * target: each ≤ 5× the floor. The agent (`[[agent]]`, /bin/sh) unpacks a prepared tar of the files and notes when
 * it started and ended: the run's figure is the task's time WITHOUT the agent's own work (the unpacking), which no
 * tool can avoid; the whole time is printed too. Untimed after each round: the applied files, the worktree, the task.
 * Two more floors, because `git status` reads no file's content and a patch must: the same patch made by git alone
 * (GIT_PATCH_FLOOR), and that patch applied by `git apply` alone in a fresh worktree.
 */
import { execFile, execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { bundleCli } from './task.bench';
import { benchDir, benchHome, cleanupBench, figures, git, loadNote, makeBenchRepo, ratio, remember, runsFromEnv, sizesFromEnv, type Measured } from './lib';

const run = promisify(execFile);

/** A tar of `count` new files in `gen/`, 100 per folder, made once (untimed). */
function makeTarball(count: number): string {
  const scratch = remember(benchDir('caesar-bench-newfiles-'));
  for (let i = 0; i < count; i++) {
    const dir = path.join(scratch, 'gen', `d${Math.floor(i / 100)}`);
    if (i % 100 === 0) mkdirSync(dir, { recursive: true });
    writeFileSync(path.join(dir, `n${i}.ts`), `export const n${i} = ${i};\n`);
  }
  const tarball = path.join(scratch, 'gen.tar');
  execFileSync('tar', ['-cf', tarball, 'gen'], { cwd: scratch });
  return tarball;
}

/** Returns the bench's HOME, whose user's layer holds the agent. */
function writeAgentConfig(repo: string, tarball: string): string {
  const report = JSON.stringify({ protocol: 'caesar.report/v1', status: 'success', summary: 'generated', changes: [{ path: 'gen', action: 'created' }] });
  const script = `date +%s%N > "$CAESAR_REPORT_PATH.started"; tar -xf '${tarball}'; date +%s%N > "$CAESAR_REPORT_PATH.ended"; printf '%s' '${report}' > "$CAESAR_REPORT_PATH"`;
  mkdirSync(path.join(repo, '.caesar'), { recursive: true });
  // The agent in the user's own layer (a HOME of the bench's own): a repository's file naming programs needs trust.
  return benchHome(`[[agent]]\nid = "maker"\nbin = "/bin/sh"\nargs = [${JSON.stringify('-c')}, ${JSON.stringify(script)}, "{{prompt}}"]\n`);
}

/**
 * The least git work that yields the same patch: a copy of the worktree's index, the new files marked intent-to-add
 * in one pass, one `diff-index -p --binary` (every new file is read: its content is the patch). Written to $2 for
 * the apply floor (`git apply` of it in a fresh worktree at the same commit).
 */
const GIT_PATCH_FLOOR = `set -e
cp "$(git rev-parse --git-path index)" "$1"
GIT_INDEX_FILE="$1" git add --intent-to-add -- .
GIT_INDEX_FILE="$1" git diff-index -p --binary --full-index --find-renames HEAD > "$2"
`;

async function timed(fn: () => Promise<unknown>): Promise<number> {
  const t0 = performance.now();
  await fn();
  return performance.now() - t0;
}

export async function benchNewFiles(): Promise<Record<string, number | string>> {
  const runs = runsFromEnv(3);
  const cli = await bundleCli();
  const out: Record<string, number | string> = { runs, load_before: loadNote() };
  let home = '';
  const caesar = (repo: string, ...args: string[]) => run(process.execPath, [cli, ...args], { cwd: repo, maxBuffer: 1 << 30, env: { ...process.env, CAESAR_CLI_JS: cli, HOME: home } });
  try {
    for (const count of sizesFromEnv([50000])) {
      const repo = makeBenchRepo(2000);
      const tarball = makeTarball(count);
      home = writeAgentConfig(repo, tarball);
      const scratch = remember(benchDir('caesar-bench-newfiles-floor-'));
      const m: Record<string, Measured> = {};
      const add = (name: string, ms: number) => (m[name] ??= { wall: [], cpu: [] }).wall.push(ms);
      for (let round = 0; round < runs; round++) {
        let stdout = '';
        const whole = await timed(async () => void ({ stdout } = await caesar(repo, 'run', 'generate the files', '--agent', 'maker', '--isolation', 'worktree', '--mode', 'write', '--json')));
        const result = JSON.parse(stdout) as { task_id: string; status: string; diff?: { files?: unknown[]; files_total?: number } };
        const files = result.diff?.files_total ?? result.diff?.files?.length;
        if (result.status !== 'succeeded' || files !== count) throw new Error(`task ended ${result.status} with ${files} files: ${stdout.slice(0, 300)}`);
        const taskDir = path.join(repo, '.caesar', 'tasks', result.task_id);
        const ns = (name: string) => Number(readFileSync(path.join(taskDir, `report.json.${name}`), 'utf8').trim()) / 1e6;
        add('run_whole', whole);
        add('run_without_agent_work', whole - (ns('ended') - ns('started')));
        const worktree = path.join(repo, '.caesar', 'wt', result.task_id);
        add('floor_git_status_uall', await timed(() => run('git', ['status', '--porcelain', '-uall'], { cwd: worktree, maxBuffer: 1 << 30 })));
        add('floor_git_patch', await timed(() => run('/bin/sh', ['-c', GIT_PATCH_FLOOR, 'floor', path.join(scratch, 'index'), path.join(scratch, 'patch')], { cwd: worktree })));
        const floorApply = path.join(scratch, 'apply-wt');
        git(repo, 'worktree', 'add', '-q', '--detach', floorApply, 'HEAD');
        add('floor_git_apply', await timed(() => run('/bin/sh', ['-c', 'git apply --whitespace=nowarn - < "$1"', 'floor', path.join(scratch, 'patch')], { cwd: floorApply })));
        git(repo, 'worktree', 'remove', '--force', floorApply);
        add('diff', await timed(() => caesar(repo, 'diff', result.task_id)));
        add('apply', await timed(() => caesar(repo, 'apply', result.task_id, '--json')));
        // Untimed: back to the start for the next round.
        rmSync(path.join(repo, 'gen'), { recursive: true, force: true });
        git(repo, 'worktree', 'remove', '--force', worktree);
        git(repo, 'branch', '-q', '-D', `caesar/${result.task_id}`);
        rmSync(taskDir, { recursive: true, force: true });
        console.error(`[newfiles bench] ${count} round ${round + 1}: ${Object.entries(m).map(([k, v]) => `${k} ${v.wall.at(-1)!.toFixed(0)} ms`).join(', ')}`);
      }
      const k = `${count / 1000}k`;
      for (const [name, measured] of Object.entries(m)) Object.assign(out, figures(`${k}_${name}`, measured, false));
      const floor = m.floor_git_status_uall!;
      for (const name of ['run_without_agent_work', 'run_whole', 'diff', 'apply']) out[`${k}_ratio_${name}_to_git_status`] = ratio(m[name]!, floor);
      out[`${k}_ratio_diff_to_git_patch`] = ratio(m.diff!, m.floor_git_patch!);
      out[`${k}_ratio_apply_to_git_patch_plus_apply`] = ratio(m.apply!, { wall: m.floor_git_patch!.wall.map((w, i) => w + m.floor_git_apply!.wall[i]!), cpu: [] });
    }
  } finally {
    cleanupBench();
  }
  out.load_after = loadNote();
  return out;
}

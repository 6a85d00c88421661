/**
 * A whole task end to end, as a user runs it: `caesar run --json` (CLI → detached supervisor → worktree → agent →
 * reconcile → result → the CLI prints it and exits), with a tiny OACP agent (`[[agent]]`, /bin/sh) that sleeps
 * 0.2 s, writes one file and its report. Its floor, measured in the same run and interleaved: the same agent
 * between `git worktree add --detach` and `git worktree remove` in a shell script (in place: the agent, then one
 * `git status`). Repositories of 2k and 10k files on tmpfs; the CLI is bundled from the current sources.
 * Not covered: our task keeps its worktree for review (removed untimed after each run), the floor removes it.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { build } from 'esbuild';
import { benchDir, cleanupBench, figures, git, interleave, loadNote, makeBenchRepo, ratio, remember, runsFromEnv, sizesFromEnv, type Measured } from './lib';

const run = promisify(execFile);
const REPO_ROOT = path.resolve(__dirname, '..');

const REPORT = JSON.stringify({ protocol: 'caesar.report/v1', status: 'success', summary: 'ok', changes: [{ path: 'bench.txt', action: 'created' }] });
/** The agent: sleep, write one file, write the report where OACP says ($CAESAR_REPORT_PATH). */
const agentScript = (sleepSeconds: number) =>
  `${sleepSeconds > 0 ? `sleep ${sleepSeconds}; ` : ''}echo done > bench.txt; printf '%s' '${REPORT}' > "$CAESAR_REPORT_PATH"`;

/** `[[agent]]` entries in the repository's .caesar/config.toml (a terminal user's workspace is trusted). */
function writeConfig(repo: string): void {
  const entry = (id: string, script: string) => `[[agent]]\nid = "${id}"\nbin = "/bin/sh"\nargs = [${JSON.stringify('-c')}, ${JSON.stringify(script)}, "{{prompt}}"]\n`;
  mkdirSync(path.join(repo, '.caesar'), { recursive: true });
  writeFileSync(
    path.join(repo, '.caesar', 'config.toml'),
    `[policy]\nallow_inplace_write = true\n\n${entry('sleeper', agentScript(0.2))}\n${entry('quick', agentScript(0))}`,
  );
}

async function bundleCli(): Promise<string> {
  const out = remember(benchDir('caesar-bench-cli-'));
  const outfile = path.join(out, 'caesar.js');
  await build({ entryPoints: [path.join(REPO_ROOT, 'src/bin/caesar.ts')], bundle: true, platform: 'node', target: 'node20', format: 'cjs', outfile, logLevel: 'silent' });
  return outfile;
}

export async function benchTask(): Promise<Record<string, number | string>> {
  const runs = runsFromEnv(5);
  const cli = await bundleCli();
  const scratch = remember(benchDir('caesar-bench-floor-'));
  const out: Record<string, number | string> = { runs, load_before: loadNote() };
  try {
    for (const size of sizesFromEnv([2000, 10000])) {
      const repo = makeBenchRepo(size);
      writeConfig(repo);
      const env = { ...process.env, CAESAR_CLI_JS: cli };
      let lastTask = '';
      const ours = (agent: string, isolation: string) => ({
        run: async () => {
          const { stdout } = await run(process.execPath, [cli, 'run', 'write bench.txt', '--agent', agent, '--isolation', isolation, '--mode', 'write', '--json'], { cwd: repo, env, maxBuffer: 1 << 24 });
          const result = JSON.parse(stdout) as { task_id: string; status: string; diff?: { files: unknown[] } };
          if (result.status !== 'succeeded' || result.diff?.files.length !== 1) throw new Error(`task did not succeed: ${stdout.slice(0, 500)}`);
          lastTask = result.task_id;
        },
        cleanup: () => {
          // Untimed: a reviewed task's worktree would be applied or discarded later.
          if (isolation === 'worktree') {
            git(repo, 'worktree', 'remove', '--force', path.join(repo, '.caesar', 'wt', lastTask));
            git(repo, 'branch', '-q', '-D', `caesar/${lastTask}`);
          } else rmSync(path.join(repo, 'bench.txt'), { force: true });
          rmSync(path.join(repo, '.caesar', 'tasks', lastTask), { recursive: true, force: true });
        },
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
        ours_worktree_agent_exits_at_once: ours('quick', 'worktree'),
        floor_worktree_agent_exits_at_once: floorWorktree(0),
      };
      if (size === 2000 || process.env.BENCH_INPLACE_ALL) {
        cases.ours_inplace = ours('sleeper', 'inplace');
        cases.floor_inplace = floorInplace;
      }
      const m = await interleave(cases, runs);
      const k = `${size / 1000}k`;
      // CPU is left out: the supervisor is detached, so this process cannot account for it.
      for (const [name, measured] of Object.entries(m)) Object.assign(out, figures(`${k}_${name}`, measured, false));
      const pairs: Array<[string, Measured | undefined, Measured | undefined]> = [
        ['worktree', m.ours_worktree, m.floor_worktree],
        ['worktree_agent_exits_at_once', m.ours_worktree_agent_exits_at_once, m.floor_worktree_agent_exits_at_once],
        ['inplace', m.ours_inplace, m.floor_inplace],
      ];
      for (const [name, a, b] of pairs) if (a && b) out[`${k}_ratio_${name}_to_floor`] = ratio(a, b);
    }
  } finally {
    cleanupBench();
  }
  out.load_after = loadNote();
  return out;
}

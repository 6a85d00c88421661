/**
 * Reconciliation with 1,000 changed files (700 modified, 200 created and untracked, 100 deleted) in 2k- and
 * 10k-file repositories on tmpfs, against its floor: one `git diff <base>` alone (which sees only the tracked
 * changes, so it is a lower bound, not an equivalent). Interleaved runs, min/median/max, CPU with git's included.
 * BENCH_BASELINE_RECONCILE=<path to another reconcile.ts> adds its figures beside ours (a before/after run).
 */
import { execFile } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { promisify } from 'node:util';
import * as current from '../src/engine/git/reconcile';
import { createWorktree } from '../src/engine/git/worktree';
import { cleanupBench, figures, interleave, loadNote, makeBenchRepo, ratio, runsFromEnv, sizesFromEnv, sourcePath, sourceText } from './lib';

const run = promisify(execFile);
type ReconcileModule = Pick<typeof current, 'worktreeDiff' | 'inplaceDiff' | 'takeSnapshot'>;

function changeFiles(dir: string, files: number): void {
  for (let i = 0; i < 700; i++) writeFileSync(path.join(dir, sourcePath((i * 2) % files)), sourceText((i * 2) % files, ' // edited'));
  for (let i = 0; i < 100; i++) rmSync(path.join(dir, sourcePath((i * 2 + 1) % files)));
  for (let i = 0; i < 200; i++) writeFileSync(path.join(dir, `src/new${i % 10}/n${i}.ts`), sourceText(files + i));
}

function mkdirs(dir: string): void {
  for (let i = 0; i < 10; i++) mkdirSync(path.join(dir, `src/new${i}`), { recursive: true });
}

export async function benchReconcile(): Promise<Record<string, number | string>> {
  const runs = runsFromEnv(7);
  const baselinePath = process.env.BENCH_BASELINE_RECONCILE;
  const baseline: ReconcileModule | undefined = baselinePath ? require(path.resolve(baselinePath)) : undefined;
  const out: Record<string, number | string> = { runs, load_before: loadNote() };
  try {
    for (const size of sizesFromEnv([2000, 10000])) {
      const repo = makeBenchRepo(size);
      const wt = await createWorktree({ gitRoot: repo, id: `t_bench${size}` });
      const snapshot = await current.takeSnapshot(repo);
      const baselineSnapshot = baseline ? await baseline.takeSnapshot(repo) : snapshot;
      for (const dir of [wt.path, repo]) {
        mkdirs(dir);
        changeFiles(dir, size);
      }
      const first = await current.worktreeDiff(wt.path, wt.base_ref, []);
      if (first.files.length !== 1000) throw new Error(`expected 1000 changed files, got ${first.files.length}`);
      const cases: Parameters<typeof interleave>[0] = {
        floor_git_diff: { run: async () => void (await run('git', ['diff', '--no-ext-diff', wt.base_ref], { cwd: wt.path, maxBuffer: 1 << 28 })) },
        ours_worktree: { run: async () => void (await current.worktreeDiff(wt.path, wt.base_ref, [])) },
        ours_worktree_no_patch: { run: async () => void (await current.worktreeDiff(wt.path, wt.base_ref, [], { patch: false })) },
        ours_inplace: { run: async () => void (await current.inplaceDiff(repo, snapshot, [])) },
      };
      if (baseline) {
        cases.baseline_worktree = { run: async () => void (await baseline.worktreeDiff(wt.path, wt.base_ref, [])) };
        cases.baseline_inplace = { run: async () => void (await baseline.inplaceDiff(repo, baselineSnapshot, [])) };
      }
      const m = await interleave(cases, runs);
      const k = `${size / 1000}k`;
      for (const [name, measured] of Object.entries(m)) Object.assign(out, figures(`${k}_${name}`, measured));
      out[`${k}_ratio_worktree_to_floor`] = ratio(m.ours_worktree!, m.floor_git_diff!);
      out[`${k}_ratio_worktree_no_patch_to_floor`] = ratio(m.ours_worktree_no_patch!, m.floor_git_diff!);
      out[`${k}_ratio_inplace_to_floor`] = ratio(m.ours_inplace!, m.floor_git_diff!);
      if (baseline) {
        out[`${k}_ratio_baseline_worktree_to_floor`] = ratio(m.baseline_worktree!, m.floor_git_diff!);
        out[`${k}_ratio_baseline_inplace_to_floor`] = ratio(m.baseline_inplace!, m.floor_git_diff!);
      }
    }
  } finally {
    cleanupBench();
  }
  out.load_after = loadNote();
  return out;
}

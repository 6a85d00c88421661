/**
 * `npm run bench`: every benchmark, each figure beside its floor (or baseline) measured in the same run, interleaved,
 * printed with min/median/max and the ratio. Not part of `npm test`. BENCH_ONLY=follow,reconcile,task picks some;
 * BENCH_RUNS and BENCH_SIZES (e.g. 2000,10000) shorten or widen a run; see docs/performance.md.
 */
import { benchEditor } from './editor.bench';
import { benchFollow } from './follow.bench';
import { benchMailbox } from './mailbox.bench';
import { benchMany } from './many.bench';
import { benchNewFiles } from './newfiles.bench';
import { benchOverlap } from './overlap.bench';
import { benchReconcile } from './reconcile.bench';
import { benchRecordSeal } from './record-seal.bench';
import { benchSandbox } from './sandbox.bench';
import { benchSlurm } from './slurm.bench';
import { benchTask } from './task.bench';
import { benchTimeline } from './timeline.bench';
import { benchTranslate } from './translate.bench';

const BENCHES: Array<[string, string, () => Promise<Record<string, number | string>>]> = [
  ['follow', 'follow a 100k-event task (ours: byte-offset tail; baseline: 200 ms whole-file polling), one process each', benchFollow],
  ['seal', 'sealing events.jsonl: 100k events written and read with and without the per-line HMAC-SHA256 (floor: JSON.stringify / readEventLine alone)', benchRecordSeal],
  ['many', '16 tasks written at once, one observer: latency (16 × 1,000 events/s × 5 s) and soak (16 × 200 events/s × BENCH_SOAK_SECONDS, default 60)', benchMany],
  ['mailbox', 'expire 10,000 pending questions at a task\'s end (QuestionsRelay.expireUnanswered; before issue 23: 2,000 not done after 300 s)', benchMailbox],
  ['reconcile', 'reconcile 1,000 changed files (floor: one `git diff <base>` alone)', benchReconcile],
  ['newfiles', 'a task creating 50,000 new files: `caesar run`, `caesar diff`, `caesar apply` (floor: one `git status --porcelain -uall` of the same tree; target ≤ 5×)', benchNewFiles],
  ['overlap', 'overlap detection, 20 running tasks in 20 worktrees of a 2,000-file repository, 110 overlapping pairs (floor: one `git status` per worktree)', benchOverlap],
  ['translate', 'translate 100k lines of real captured agent output (floor: JSON.parse of the same lines alone)', benchTranslate],
  ['task', 'a whole task, `caesar run` (floor: `git worktree add` + the same agent + `git worktree remove` in sh)', benchTask],
  ['sandbox', 'the sandbox: a whole task sandboxed and not (`caesar run`, 2k files, an agent that exits at once); bwrap around /bin/true', benchSandbox],
  ['slurm', 'a task through Slurm against the same task locally (`caesar run --launcher slurm|local`, demo agent, 2k files), and submit → agent started; needs a controller (`npm run bench:slurm`)', benchSlurm],
  ['editor', 'the editor (real VS Code): activation, the Tasks tree with 200 tasks, a 100k-event timeline, a reused preview timeline', benchEditor],
  ['timeline', 'the timeline of a 100k- and a 1M-event task: host window queries (floor: a plain array slice), then first screen and jumps in the real editor', benchTimeline],
];

async function main() {
  const only = process.env.BENCH_ONLY?.split(',').map((s) => s.trim());
  for (const [key, title, bench] of BENCHES) {
    if (only && !only.includes(key)) continue;
    const started = Date.now();
    const figures = await bench();
    console.log(`\n## ${title} (${((Date.now() - started) / 1000).toFixed(0)} s)`);
    for (const [name, value] of Object.entries(figures)) {
      const shown = typeof value === 'string' || Number.isInteger(value) ? value : value.toFixed(2);
      console.log(`  ${name.padEnd(48)} ${shown}`);
    }
  }
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});

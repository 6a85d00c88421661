/**
 * Overlap detection (issue 25) with 20 tasks, as the Tasks view and `caesar ps` compute it: a repository of 2,000
 * files, 20 linked worktrees each changing 3 files (every task one file of its own and two of 5 shared ones), the
 * tasks running (so every one is read from git: its worktree staged into a private index, written as a tree).
 * Figures: the first computation (every worktree read, every overlapping pair predicted with merge-tree), a second
 * one with nothing changed (the cache), one after a single task moved on, and the same 20 tasks finished (their
 * files from result.json; git only for the pairs that share a file). Floor: one `git status` per worktree.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { OverlapTracker, type TaskSummary } from '../src/engine/tasks';
import { benchDir, cleanupBench, git } from './lib';

const TASKS = 20;
const FILES = 2000;

function makeRepository(): string {
  const repo = benchDir('overlap-');
  git(repo, 'init', '-q', '-b', 'main');
  for (let i = 0; i < FILES; i++) {
    const file = path.join(repo, `src/d${i % 40}/f${i}.txt`);
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, Array.from({ length: 20 }, (_, l) => `file ${i} line ${l}`).join('\n') + '\n');
  }
  git(repo, 'add', '-A');
  git(repo, '-c', 'user.name=b', '-c', 'user.email=b@b', 'commit', '-q', '-m', 'init');
  return repo;
}

function summaryOf(repo: string, i: number, base: string, status: 'running' | 'succeeded', files: string[]): TaskSummary {
  const id = `t_${i.toString(16).padStart(32, '0')}`;
  return {
    id,
    observed: status,
    eventsBytes: 100,
    pendingQuestions: [],
    state: {
      id, status, agent: 'bench', objective: 'o', mode: 'write', isolation: 'worktree', network: false, timeout_ms: 1000, depth: 0,
      created_at: new Date().toISOString(), ended_at: status === 'running' ? undefined : new Date().toISOString(),
      root: repo, workspace: repo, worktree: path.join(repo, '.caesar/wt', id), base_ref: base, excluded_paths: [],
    },
    ...(status === 'running' ? {} : { result: { diff: { is_empty: false, files: files.map((p) => ({ path: p, action: 'modified', additions: 1, deletions: 1, binary: false })) } } }),
  } as unknown as TaskSummary;
}

async function timed(fn: () => Promise<unknown>): Promise<number> {
  const started = process.hrtime.bigint();
  await fn();
  return Number(process.hrtime.bigint() - started) / 1e6;
}

export async function benchOverlap(): Promise<Record<string, number | string>> {
  const repo = makeRepository();
  const base = git(repo, 'rev-parse', 'HEAD');
  const changed: string[][] = [];
  for (let i = 0; i < TASKS; i++) {
    const wt = path.join(repo, '.caesar/wt', `t_${i.toString(16).padStart(32, '0')}`);
    git(repo, 'worktree', 'add', '-q', '--detach', wt, base);
    // Two of five shared files (line i: neighbours merge, the same line conflicts) and one of its own.
    const files = [`src/d0/f${(i % 5) * 40}.txt`, `src/d0/f${((i + 1) % 5) * 40}.txt`, `src/d1/f${41 + i * 40}.txt`];
    for (const [k, rel] of files.entries()) {
      const lines = Array.from({ length: 20 }, (_, l) => `file ${rel} line ${l}`);
      lines[(i + k) % 20] = `changed by task ${i}`;
      writeFileSync(path.join(wt, rel), lines.join('\n') + '\n');
    }
    changed.push(files);
  }
  const running = changed.map((files, i) => summaryOf(repo, i, base, 'running', files));
  // liveRefreshMs 0: a task that moved on is read again at once (the views wait LIVE_REFRESH_MS between reads).
  const tracker = new OverlapTracker(repo, { liveRefreshMs: 0 });
  let pairs = 0;
  const cold = await timed(async () => (pairs = [...(await tracker.compute(running)).values()].reduce((n, o) => n + o.length, 0) / 2));
  const warm = await timed(() => tracker.compute(running));
  const moved = running.map((s, i) => (i === 3 ? { ...s, eventsBytes: s.eventsBytes + 1 } : s));
  const oneMoved = await timed(() => tracker.compute(moved));
  const finished = changed.map((files, i) => summaryOf(repo, i, base, 'succeeded', files));
  const finishedCold = await timed(() => new OverlapTracker(repo).compute(finished));
  const floor = await timed(async () => {
    for (let i = 0; i < TASKS; i++) git(path.join(repo, '.caesar/wt', `t_${i.toString(16).padStart(32, '0')}`), 'status', '--porcelain');
  });
  cleanupBench();
  return {
    'overlapping pairs': pairs,
    'first computation, 20 running (ms)': cold,
    'again, nothing changed (ms)': warm,
    'again, one task moved on (ms)': oneMoved,
    'first computation, 20 finished (ms)': finishedCold,
    'floor: 20 × git status (ms)': floor,
  };
}

if (require.main === module) {
  void benchOverlap().then((figures) => {
    for (const [name, value] of Object.entries(figures)) console.log(`  ${name.padEnd(40)} ${typeof value === 'number' && !Number.isInteger(value) ? value.toFixed(0) : value}`);
  });
}

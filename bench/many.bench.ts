/**
 * Many tasks at once, seen by one observer: 16 tasks' events.jsonl written at the same time (by the clock, a fixed
 * rate per task), followed by ONE process the way the extension host and `caesar watch` do (TaskStore.follow per
 * task). Two runs:
 *  - latency: 16 tasks × 1,000 events/s × 5 s → latency p50/p99 (parse time minus the event's `at`, 1 ms resolution);
 *  - soak: 16 tasks × 200 events/s × 60 s (BENCH_SOAK_SECONDS shortens it; the printed figures say how long it ran)
 *    → events lost (must be 0), the observer's CPU (live, its own process), its memory sampled each second (first
 *    and last quarter of the run: flat or not).
 * Floor: none that means anything for latency; the writer's own duration is printed beside the nominal one, and
 * the CPU is printed as a share of one core. Not covered: the extension host's UI work (tree, timeline) on top.
 */
import { bindingOf, sealEventLine } from '../src/engine/store/record-seal';
import { fork } from 'node:child_process';
import { appendFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { taskPaths } from '../src/protocol';
import { TaskStore } from '../src/engine/store/store';
import { benchDir, cleanupBench, loadNote, remember, spread } from './lib';

const TASKS = 16;
const TICK_MS = 5;

interface ObserverReport {
  seen: number;
  cpu_ms: number;
  wall_ms: number;
  latency_p50_ms: number;
  latency_p99_ms: number;
  rss_mib: number[];
  heap_mib: number[];
}

/** A line as Caesar's EventsWriter writes it: sealed for the task under its root (record-seal.ts). */
function eventLine(root: string, id: string, seq: number): string {
  const at = new Date().toISOString();
  const binding = bindingOf(root, id);
  return seq % 3 === 0
    ? `${sealEventLine(binding, JSON.stringify({ protocol: 'caesar.event/v1', seq, at, task_id: id, type: 'tool_use', tool: 'bash', id: `c${seq}`, input_summary: `npm test -- --grep case${seq}`, status: 'started' }))}\n`
    : `${sealEventLine(binding, JSON.stringify({ protocol: 'caesar.event/v1', seq, at, task_id: id, type: 'message', text: `step ${seq}: ${'lorem ipsum '.repeat(4)}` }))}\n`;
}

/** In the observer process: follow every task until `total` events in all, sampling memory each second. */
function observerMain(root: string, ids: string[], total: number): void {
  const store = new TaskStore(root);
  const latencies: number[] = [];
  const rss: number[] = [];
  const heap: number[] = [];
  let seen = 0;
  const cpuStart = process.cpuUsage();
  const t0 = Date.now();
  const sample = () => {
    const m = process.memoryUsage();
    rss.push(m.rss / 1024 / 1024);
    heap.push(m.heapUsed / 1024 / 1024);
  };
  const sampler = setInterval(sample, 1000);
  const subs = ids.map((id) =>
    store.follow(id, 0, (events) => {
      const now = Date.now();
      for (const e of events) latencies.push(now - Date.parse(e.at));
      seen += events.length;
      if (seen >= total) finish();
    }),
  );
  let finished = false;
  const finish = () => {
    if (finished) return;
    finished = true;
    sample();
    clearInterval(sampler);
    for (const s of subs) s.dispose();
    const cpu = process.cpuUsage(cpuStart);
    latencies.sort((a, b) => a - b);
    const q = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))] ?? NaN;
    const report: ObserverReport = { seen, cpu_ms: (cpu.user + cpu.system) / 1000, wall_ms: Date.now() - t0, latency_p50_ms: q(0.5), latency_p99_ms: q(0.99), rss_mib: rss, heap_mib: heap };
    process.send?.(report, () => process.exit(0));
  };
  // The writer tells us when it is done: whatever has not arrived a few seconds later is lost.
  process.on('message', (message) => {
    if (message === 'writer-done') setTimeout(finish, 3000).unref();
  });
  process.send?.('ready');
}

async function runOnce(ratePerTask: number, seconds: number): Promise<Record<string, number>> {
  const root = remember(benchDir('caesar-bench-many-'));
  const ids = Array.from({ length: TASKS }, (_, i) => `t_many${i}`);
  for (const id of ids) {
    mkdirSync(taskPaths(root, id).dir, { recursive: true });
    writeFileSync(taskPaths(root, id).events, '');
  }
  const perTask = Math.round(ratePerTask * seconds);
  const total = perTask * TASKS;
  const child = fork(__filename, ['--observer', root, ids.join(','), String(total)], { execArgv: process.execArgv, stdio: 'inherit' });
  let ready = () => {};
  const readyP = new Promise<void>((r) => (ready = r));
  const done = new Promise<ObserverReport>((resolve, reject) => {
    child.on('message', (m) => (m === 'ready' ? ready() : resolve(m as ObserverReport)));
    child.on('exit', (code) => reject(new Error(`observer exited (${code}) before reporting`)));
  });
  await readyP;
  const started = Date.now();
  const written = new Array<number>(TASKS).fill(0);
  await new Promise<void>((resolve) => {
    const tick = () => {
      const due = Math.min(perTask, Math.floor(((Date.now() - started) / 1000) * ratePerTask));
      ids.forEach((id, i) => {
        let chunk = '';
        while (written[i]! < due) chunk += eventLine(root, id, written[i]!++);
        if (chunk) appendFileSync(taskPaths(root, id).events, chunk);
      });
      if (written.some((w) => w < perTask)) setTimeout(tick, TICK_MS);
      else resolve();
    };
    tick();
  });
  const writerSeconds = (Date.now() - started) / 1000;
  child.send('writer-done');
  const r = await done;
  const quarter = Math.max(1, Math.floor(r.rss_mib.length / 4));
  return {
    events_written: total,
    events_lost: total - r.seen,
    writer_seconds: writerSeconds,
    writer_nominal_seconds: seconds,
    observer_cpu_ms: r.cpu_ms,
    observer_cpu_share_of_one_core: r.cpu_ms / r.wall_ms,
    latency_p50_ms: r.latency_p50_ms,
    latency_p99_ms: r.latency_p99_ms,
    rss_first_quarter_mib: spread(r.rss_mib.slice(0, quarter)).median,
    rss_last_quarter_mib: spread(r.rss_mib.slice(-quarter)).median,
    heap_first_quarter_mib: spread(r.heap_mib.slice(0, quarter)).median,
    heap_last_quarter_mib: spread(r.heap_mib.slice(-quarter)).median,
  };
}

export async function benchMany(): Promise<Record<string, number | string>> {
  const soakSeconds = Number(process.env.BENCH_SOAK_SECONDS ?? 60);
  const out: Record<string, number | string> = { tasks: TASKS, load_before: loadNote() };
  try {
    for (const [k, v] of Object.entries(await runOnce(1000, 5))) out[`latency_16x1000eps_${k}`] = v;
    for (const [k, v] of Object.entries(await runOnce(200, soakSeconds))) out[`soak_16x200eps_${k}`] = v;
  } finally {
    cleanupBench();
  }
  out.load_after = loadNote();
  return out;
}

if (process.argv[2] === '--observer') {
  const [, , , root, ids, total] = process.argv;
  observerMain(root as string, (ids as string).split(','), Number(total));
}

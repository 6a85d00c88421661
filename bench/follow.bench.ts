/**
 * Following a busy task: our byte-offset tail (TaskStore.follow, fs.watch-driven) against the reference's approach
 * (re-read the whole events file every 200 ms and parse from the last offset: reference-behaviours §6.3.1, §8.9).
 *
 * Each follower runs in its own process, so its CPU time is its own and measured live (process.cpuUsage over the
 * whole run, reported by the follower itself), and neither blocks the other's event loop. The writer appends at a
 * fixed RATE by the clock (a tick writes whatever is due), so the run lasts EVENTS / RATE seconds on any machine
 * that keeps up: the polling follower then makes the same number of reads on a fast and on a slow machine, and its
 * cost no longer grows with the machine's slowness. Latency = the time a follower parsed an event minus the
 * writer's timestamp in it (`at`, millisecond resolution).
 */
import { bindingOf, sealEventLine, type RecordBinding } from '../src/engine/store/record-seal';
import { fork } from 'node:child_process';
import { appendFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { readEventLine, taskPaths } from '../src/protocol';
import { TaskStore } from '../src/engine/store/store';
import { benchDir, cleanupBench, loadNote, remember } from './lib';

const EVENTS = Number(process.env.BENCH_EVENTS ?? 100_000);
/** Events per second written by the writer: 100k events in 2 s. */
const RATE = Number(process.env.BENCH_FOLLOW_RATE ?? 50_000);
const TICK_MS = 5;
const POLL_MS = 200;

/** A line as Caesar's EventsWriter writes it: sealed (record-seal.ts), so the writer pays the HMAC as the real one does. */
function line(binding: RecordBinding, seq: number): string {
  const at = new Date().toISOString();
  const id = binding.taskId;
  return seq % 3 === 0
    ? `${sealEventLine(binding, JSON.stringify({ protocol: 'caesar.event/v1', seq, at, task_id: id, type: 'tool_use', tool: 'bash', id: `c${seq}`, input_summary: `npm test -- --grep case${seq}`, status: 'started' }))}\n`
    : `${sealEventLine(binding, JSON.stringify({ protocol: 'caesar.event/v1', seq, at, task_id: id, type: 'message', text: `step ${seq}: ${'lorem ipsum '.repeat(4)}` }))}\n`;
}

interface FollowerReport {
  kind: 'ours' | 'polling';
  seen: number;
  cpu_ms: number;
  bytes_read: number;
  last_at: number;
  latency_p50_ms: number;
  latency_p99_ms: number;
}

/** Runs in the child process: follow until every event is seen, then report. */
function followerMain(kind: 'ours' | 'polling', root: string, id: string, total: number): void {
  const latencies: number[] = [];
  let seen = 0;
  let bytesRead = 0;
  let lastAt = 0;
  let stop = () => {};
  // The watcher alone does not keep a process alive (it is not persistent): this does, until the report is sent.
  const keepAlive = setInterval(() => {}, 1000);
  const cpuStart = process.cpuUsage();
  const received = (events: Array<{ at: string }>) => {
    const now = Date.now();
    for (const event of events) latencies.push(now - Date.parse(event.at));
    seen += events.length;
    lastAt = now;
    if (seen >= total) finish();
  };
  const finish = () => {
    stop();
    clearInterval(keepAlive);
    const cpu = process.cpuUsage(cpuStart);
    latencies.sort((a, b) => a - b);
    const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? NaN;
    const report: FollowerReport = {
      kind,
      seen,
      cpu_ms: (cpu.user + cpu.system) / 1000,
      bytes_read: kind === 'ours' ? readFileSync(taskPaths(root, id).events).length : bytesRead,
      last_at: lastAt,
      latency_p50_ms: at(0.5),
      latency_p99_ms: at(0.99),
    };
    process.send?.(report, () => process.exit(0));
  };
  if (kind === 'ours') {
    const sub = new TaskStore(root).follow(id, 0, (events) => received(events));
    stop = () => sub.dispose();
  } else {
    const file = taskPaths(root, id).events;
    let offset = 0;
    const timer = setInterval(() => {
      const text = readFileSync(file, 'utf8');
      bytesRead += Buffer.byteLength(text);
      const fresh = text.slice(offset);
      const end = fresh.lastIndexOf('\n');
      if (end < 0) return;
      offset += end + 1;
      const events = [];
      for (const l of fresh.slice(0, end).split('\n')) if (l) events.push(readEventLine(l));
      received(events);
    }, POLL_MS);
    stop = () => clearInterval(timer);
  }
  process.send?.('ready');
}

function startFollower(kind: 'ours' | 'polling', root: string, id: string): { ready: Promise<void>; done: Promise<FollowerReport> } {
  const child = fork(__filename, ['--follower', kind, root, id, String(EVENTS)], { execArgv: process.execArgv, stdio: 'inherit' });
  let readyResolve = () => {};
  const ready = new Promise<void>((resolve) => (readyResolve = resolve));
  const done = new Promise<FollowerReport>((resolve, reject) => {
    child.on('message', (message) => (message === 'ready' ? readyResolve() : resolve(message as FollowerReport)));
    child.on('exit', (code) => reject(new Error(`${kind} follower exited (${code}) before reporting`)));
    setTimeout(() => {
      child.kill();
      reject(new Error(`${kind} follower did not see all ${EVENTS} events within 120 s`));
    }, 120_000).unref();
  });
  return { ready, done };
}

export async function benchFollow(): Promise<Record<string, number | string>> {
  const root = remember(benchDir('caesar-bench-follow-'));
  const id = 't_bench';
  const paths = taskPaths(root, id);
  mkdirSync(paths.dir, { recursive: true });
  writeFileSync(paths.events, '');
  const binding = bindingOf(root, id);
  const loadBefore = loadNote();
  try {
    const ours = startFollower('ours', root, id);
    const polling = startFollower('polling', root, id);
    await Promise.all([ours.ready, polling.ready]);

    const started = Date.now();
    let written = 0;
    await new Promise<void>((resolve) => {
      const tick = () => {
        const due = Math.min(EVENTS, Math.floor(((Date.now() - started) / 1000) * RATE));
        let chunk = '';
        while (written < due) chunk += line(binding, written++);
        if (chunk) appendFileSync(paths.events, chunk);
        if (written < EVENTS) setTimeout(tick, TICK_MS);
        else resolve();
      };
      tick();
    });
    const writerDoneAt = Date.now();
    const [o, p] = await Promise.all([ours.done, polling.done]);
    const fileBytes = readFileSync(paths.events).length;
    return {
      events: EVENTS,
      writer_seconds: (writerDoneAt - started) / 1000,
      writer_nominal_seconds: EVENTS / RATE,
      file_mib: fileBytes / 1024 / 1024,
      ours_bytes_read_mib: o.bytes_read / 1024 / 1024,
      reference_bytes_read_mib: p.bytes_read / 1024 / 1024,
      bytes_read_ratio: p.bytes_read / o.bytes_read,
      ours_cpu_ms: o.cpu_ms,
      reference_cpu_ms: p.cpu_ms,
      cpu_ratio: p.cpu_ms / Math.max(0.001, o.cpu_ms),
      ours_latency_p50_ms: o.latency_p50_ms,
      ours_latency_p99_ms: o.latency_p99_ms,
      reference_latency_p50_ms: p.latency_p50_ms,
      reference_latency_p99_ms: p.latency_p99_ms,
      ours_lag_at_end_ms: Math.max(0, o.last_at - writerDoneAt),
      reference_lag_at_end_ms: Math.max(0, p.last_at - writerDoneAt),
      load_before: loadBefore,
      load_after: loadNote(),
    };
  } finally {
    cleanupBench();
  }
}

if (process.argv[2] === '--follower') {
  const [, , , kind, root, id, total] = process.argv;
  followerMain(kind as 'ours' | 'polling', root as string, id as string, Number(total));
}

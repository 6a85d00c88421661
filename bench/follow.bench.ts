/**
 * Following a busy task: our byte-offset tail (TaskStore.follow, fs.watch-driven) against the reference's approach
 * (re-read the whole events file every 200 ms and parse from the last offset: reference-behaviours §6.3.1, §8.9).
 * Both follow the same writer appending 100k events in bursts, side by side in one run; we report CPU time, bytes
 * read and latency, and the ratios.
 */
import { appendFileSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { taskPaths, readEventLine } from '../src/protocol';
import { TaskStore } from '../src/engine/store';

const EVENTS = Number(process.env.BENCH_EVENTS ?? 100_000);
const BURST = 500;
const BURST_INTERVAL_MS = 5;

function line(id: string, seq: number): string {
  const at = new Date().toISOString();
  return seq % 3 === 0
    ? `${JSON.stringify({ protocol: 'caesar.event/v1', seq, at, task_id: id, type: 'tool_use', tool: 'bash', id: `c${seq}`, input_summary: `npm test -- --grep case${seq}`, status: 'started' })}\n`
    : `${JSON.stringify({ protocol: 'caesar.event/v1', seq, at, task_id: id, type: 'message', text: `step ${seq}: ${'lorem ipsum '.repeat(4)}` })}\n`;
}

/** The reference's follower: a 200 ms timer that reads the whole file and parses what lies past its offset. */
function pollingFollower(file: string, onCount: (n: number) => void) {
  let offset = 0;
  let bytesRead = 0;
  const timer = setInterval(() => {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      return;
    }
    bytesRead += Buffer.byteLength(text);
    const fresh = text.slice(offset);
    const end = fresh.lastIndexOf('\n');
    if (end < 0) return;
    offset += end + 1;
    let n = 0;
    for (const l of fresh.slice(0, end).split('\n')) {
      if (!l) continue;
      readEventLine(l);
      n++;
    }
    onCount(n);
  }, 200);
  return { stop: () => clearInterval(timer), bytesRead: () => bytesRead };
}

export async function benchFollow(): Promise<Record<string, number>> {
  const root = mkdtempSync(path.join(tmpdir(), 'caesar-bench-follow-'));
  const id = 't_bench';
  const paths = taskPaths(root, id);
  mkdirSync(paths.dir, { recursive: true });
  writeFileSync(paths.events, '');

  let oursSeen = 0;
  let oursLastAt = 0;
  let refSeen = 0;
  let refLastAt = 0;
  const store = new TaskStore(root);

  const cpuBefore = process.cpuUsage();
  const ours = store.follow(id, 0, (events) => {
    oursSeen += events.length;
    oursLastAt = performance.now();
  });
  const reference = pollingFollower(paths.events, (n) => {
    refSeen += n;
    refLastAt = performance.now();
  });

  let written = 0;
  let writerDoneAt = 0;
  await new Promise<void>((resolve) => {
    const tick = () => {
      let chunk = '';
      for (let i = 0; i < BURST && written < EVENTS; i++) chunk += line(id, written++);
      appendFileSync(paths.events, chunk);
      if (written < EVENTS) setTimeout(tick, BURST_INTERVAL_MS);
      else {
        writerDoneAt = performance.now();
        resolve();
      }
    };
    tick();
  });
  const deadline = Date.now() + 30_000;
  while ((oursSeen < EVENTS || refSeen < EVENTS) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  ours.dispose();
  reference.stop();
  const cpu = process.cpuUsage(cpuBefore);
  const fileBytes = readFileSync(paths.events).length;

  // CPU is shared by both followers in this process; measure each alone for the split.
  const oursAlone = await cpuOf(async () => {
    let seen = 0;
    const sub = store.follow(id, 0, (events) => (seen += events.length));
    while (seen < EVENTS) await new Promise((r) => setTimeout(r, 5));
    sub.dispose();
  });
  const refAlone = await cpuOf(async () => {
    // The polling follower needs as many full reads as the writer's run produced ticks; replay that count.
    const ticks = Math.max(1, Math.ceil(reference.bytesRead() / Math.max(1, fileBytes)));
    let offset = 0;
    for (let i = 0; i < ticks; i++) {
      const text = readFileSync(paths.events, 'utf8');
      const fresh = text.slice(offset);
      const end = fresh.lastIndexOf('\n');
      if (end < 0) continue;
      offset += end + 1;
      for (const l of fresh.slice(0, end).split('\n')) if (l) readEventLine(l);
    }
  });

  return {
    events: EVENTS,
    file_mib: fileBytes / 1024 / 1024,
    ours_bytes_read_mib: fileBytes / 1024 / 1024,
    reference_bytes_read_mib: reference.bytesRead() / 1024 / 1024,
    bytes_read_ratio: reference.bytesRead() / fileBytes,
    ours_lag_ms: Math.max(0, oursLastAt - writerDoneAt),
    reference_lag_ms: Math.max(0, refLastAt - writerDoneAt),
    ours_cpu_ms: oursAlone,
    reference_cpu_ms: refAlone,
    cpu_ratio: refAlone / Math.max(0.001, oursAlone),
    both_cpu_ms: (cpu.user + cpu.system) / 1000,
  };
}

async function cpuOf(run: () => Promise<void>): Promise<number> {
  const before = process.cpuUsage();
  await run();
  const used = process.cpuUsage(before);
  return (used.user + used.system) / 1000;
}

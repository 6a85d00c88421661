/**
 * The cost of sealing events.jsonl (record-seal.ts): 100k events written and read back, with and without the
 * per-line HMAC-SHA256, interleaved in one process (each figure beside its floor, same run). Writing = JSON.stringify
 * of each event (the writer's floor) vs the same plus its seal; reading = readEventLine of each line (the readers'
 * floor) vs readSealedEventLine (verify, then parse). Also the bytes the seal adds. `BENCH_EVENTS` changes the count.
 */
import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { readEventLine, taskPaths } from '../src/protocol';
import { bindingOf, sealEventLine } from '../src/engine/store/record-seal';
import { readSealedEventLine } from '../src/engine/store/sealed-events';
import { loadNote, runsFromEnv } from './lib';

const EVENTS = Number(process.env.BENCH_EVENTS ?? 100_000);

function events(id: string): object[] {
  const at = new Date().toISOString();
  return Array.from({ length: EVENTS }, (_, seq) =>
    seq % 3 === 0
      ? { protocol: 'caesar.event/v1', seq, at, task_id: id, type: 'tool_use', tool: 'bash', id: `c${seq}`, input_summary: `npm test -- --grep case${seq}`, status: 'started' }
      : { protocol: 'caesar.event/v1', seq, at, task_id: id, type: 'message', text: `step ${seq}: ${'lorem ipsum '.repeat(4)}` },
  );
}

function timed(work: () => void): number {
  const started = process.hrtime.bigint();
  work();
  return Number(process.hrtime.bigint() - started) / 1e6;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

export async function benchRecordSeal(): Promise<Record<string, number | string>> {
  const root = mkdtempSync(path.join(tmpdir(), 'caesar-bench-seal-'));
  const id = `t_${randomUUID().replaceAll('-', '')}`;
  mkdirSync(taskPaths(root, id).dir, { recursive: true });
  const binding = bindingOf(root, id);
  const all = events(id);
  const plain = all.map((e) => JSON.stringify(e));
  const sealed = plain.map((json) => sealEventLine(binding, json));
  const runs = runsFromEnv(5);
  const m = { write: [] as number[], writeSealed: [] as number[], read: [] as number[], readSealed: [] as number[] };
  try {
    for (let run = 0; run < runs; run++) {
      m.write.push(timed(() => all.forEach((e) => JSON.stringify(e))));
      m.writeSealed.push(timed(() => all.forEach((e) => sealEventLine(binding, JSON.stringify(e)))));
      m.read.push(timed(() => plain.forEach((line) => readEventLine(line))));
      m.readSealed.push(timed(() => sealed.forEach((line) => readSealedEventLine(binding, line))));
    }
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
  const bytes = (lines: string[]) => lines.reduce((n, l) => n + Buffer.byteLength(l) + 1, 0);
  return {
    events: EVENTS,
    write_floor_ms_median: median(m.write),
    write_sealed_ms_median: median(m.writeSealed),
    write_seal_us_per_event: ((median(m.writeSealed) - median(m.write)) * 1000) / EVENTS,
    read_floor_ms_median: median(m.read),
    read_sealed_ms_median: median(m.readSealed),
    read_ratio: median(m.readSealed) / median(m.read),
    bytes_plain: bytes(plain),
    bytes_sealed: bytes(sealed),
    load: loadNote(),
  };
}

/**
 * The timeline at scale, host side: a task of 100k and 1M events (events.jsonl on tmpfs) indexed by the extension
 * host's TimelineSource, then windows of rows asked for at random positions, as the webview does when it is scrolled
 * or jumped. Floor: slicing the same number of rows out of a plain in-memory array (what a host keeping every row as
 * an object would pay, minus that memory). Also: time to the first window (the first screen's host share), to the
 * whole backlog indexed, a text search through the file, and the host memory the index costs.
 *
 * What it does not cover: the webview side (rendering, the channel). bench/timeline-editor.mjs measures the first
 * screen and a jump in the real editor (code-server + Chromium) when the editor cache is present.
 */
import { bindingOfTaskFile, sealEventLine } from '../src/engine/store/record-seal';
import { spawnSync } from 'node:child_process';
import { statSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { TimelineSource } from '../src/extension/timeline/timeline-source';
import { benchDir, cleanupBench, figures, interleave, loadNote, remember, runsFromEnv } from './lib';

const WINDOW = 80;

/** A mixed stream like a busy agent's: paired tool calls, messages, thoughts, a few file changes, then finished. */
export function writeEventsFile(file: string, count: number): void {
  const base = Date.parse('2026-12-01T10:00:00.000Z');
  const chunks: string[] = [];
  let chunk = '';
  // Sealed as Caesar's EventsWriter seals them, for the task the file's place names (record-seal.ts).
  const binding = bindingOfTaskFile(file);
  const line = (seq: number, body: Record<string, unknown>) =>
    `${sealEventLine(binding, JSON.stringify({ protocol: 'caesar.event/v1', seq, at: new Date(base + seq * 10).toISOString(), task_id: binding.taskId, ...body }))}\n`;
  for (let seq = 0; seq < count - 1; seq++) {
    const kind = seq % 4;
    if (kind === 0) chunk += line(seq, { type: 'tool_use', tool: 'read', input_summary: `src/file-${seq}.ts`, status: 'started', id: `c${seq}` });
    else if (kind === 1) chunk += line(seq, { type: 'tool_use', tool: 'read', input_summary: `src/file-${seq - 1}.ts`, status: 'succeeded', id: `c${seq - 1}` });
    else if (kind === 2) chunk += line(seq, { type: 'message', text: `message number ${seq}: ${'lorem ipsum '.repeat(4)}${seq % 1000 === 2 ? ' NEEDLE' : ''}` });
    else chunk += seq % 100 === 3 ? line(seq, { type: 'file_changed', path: `src/out-${seq % 5000}.ts`, action: 'modified' }) : line(seq, { type: 'thinking', text: `thought ${seq}` });
    if (chunk.length > 1 << 20) {
      chunks.push(chunk);
      chunk = '';
    }
  }
  chunks.push(chunk + line(count - 1, { type: 'finished', status: 'success', summary: 'done' }));
  writeFileSync(file, chunks.join(''));
}

function waitUntil(test: () => boolean): Promise<void> {
  return new Promise((resolve) => {
    const check = () => (test() ? resolve() : setTimeout(check, 1));
    check();
  });
}

/** A full collection before reading memory (the flag is set at run time: the bench runs under tsx). */
function collect(): void {
  setFlagsFromString('--expose-gc');
  (runInNewContext('gc') as () => void)();
}

function memoryMb(): number {
  const m = process.memoryUsage();
  return (m.heapUsed + m.arrayBuffers) / (1 << 20);
}

async function benchSize(count: number, runs: number): Promise<Record<string, number>> {
  const dir = remember(benchDir('caesar-bench-timeline-'));
  const file = path.join(dir, 'events.jsonl');
  writeEventsFile(file, count);
  const { size } = statSync(file);
  const k = count >= 1_000_000 ? `${count / 1_000_000}M` : `${count / 1000}k`;

  collect();
  const memBefore = memoryMb();
  const opened = performance.now();
  let firstWindowMs = NaN;
  const source = new TimelineSource(file, { onRows: () => undefined, onBadLine: () => undefined, onReset: () => undefined });
  source.start();
  await waitUntil(() => source.rowCount >= WINDOW);
  await source.window(source.rowCount - WINDOW, WINDOW); // the first screen follows the end of what is indexed
  firstWindowMs = performance.now() - opened;
  await waitUntil(() => source.status.caughtUp);
  const indexedMs = performance.now() - opened;
  collect();
  const indexMb = memoryMb() - memBefore;
  const rows = source.rowCount;

  // The floor: the same slices out of an array holding every row as an object.
  const plain = Array.from({ length: rows }, (_, i) => ({ index: i, label: `row ${i}` }));
  let pick = 12345;
  const nextStart = () => {
    pick = (pick * 1103515245 + 12345) % 2 ** 31;
    return pick % Math.max(1, rows - WINDOW);
  };
  let sink = 0;
  const measured = await interleave(
    {
      window: { run: async () => void (sink += (await source.window(nextStart(), WINDOW)).rows.length) },
      slice: { run: () => void (sink += plain.slice(nextStart(), nextStart() + WINDOW).length) },
    },
    runs,
  );
  const searchStart = performance.now();
  await source.setQuery({ text: 'needle', types: [] });
  const searchMs = performance.now() - searchStart;
  const matches = source.total;
  source.dispose();
  if (sink < 0) console.log(sink);
  return {
    [`${k}_events_file_mb`]: size / (1 << 20),
    [`${k}_first_window_ms`]: firstWindowMs,
    [`${k}_backlog_indexed_ms`]: indexedMs,
    [`${k}_index_memory_mb`]: indexMb,
    ...figures(`${k}_window_${WINDOW}_rows`, measured.window!, false),
    ...figures(`${k}_floor_array_slice`, measured.slice!, false),
    [`${k}_search_ms`]: searchMs,
    [`${k}_search_matches`]: matches,
  };
}

/** The in-editor figures (bench/timeline-editor.mjs), flattened: skipped when the editor cache is absent. */
function editorFigures(): Record<string, number | string> {
  if (process.env.BENCH_TIMELINE_EDITOR === '0') return { editor: 'skipped (BENCH_TIMELINE_EDITOR=0)' };
  const run = spawnSync(process.execPath, [path.join(__dirname, 'timeline-editor.mjs')], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  const last = (run.stdout ?? '').trim().split('\n').at(-1) ?? '';
  let parsed: Record<string, unknown>;
  try {
    parsed = JSON.parse(last) as Record<string, unknown>;
  } catch {
    return { editor: `failed: ${(run.stderr ?? '').slice(-500)}` };
  }
  if (typeof parsed.skipped === 'string') return { editor: `skipped: ${parsed.skipped}` };
  if (typeof parsed.failed === 'string') return { editor: `failed: ${parsed.failed}` };
  const out: Record<string, number | string> = {};
  for (const [size, figures] of Object.entries(parsed)) {
    if (size === 'xss') out.editor_xss_proof = String(figures);
    else for (const [name, value] of Object.entries(figures as Record<string, unknown>)) {
      out[`editor_${size}_${name}`] = Array.isArray(value) ? value.join(' ') : (value as number);
    }
  }
  return out;
}

export async function benchTimeline(): Promise<Record<string, number | string>> {
  const sizes = (process.env.BENCH_TIMELINE_SIZES ?? '100000,1000000').split(',').map(Number).filter((n) => n > 0);
  const runs = runsFromEnv(200);
  const out: Record<string, number | string> = { load: loadNote() };
  try {
    for (const size of sizes) Object.assign(out, await benchSize(size, runs));
  } finally {
    cleanupBench();
  }
  return { ...out, ...editorFigures(), load_after: loadNote() };
}

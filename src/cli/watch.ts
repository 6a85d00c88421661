import { loadConfig } from '../config';
import type { ProtocolEvent } from '../protocol';
import { formatDuration } from '../common/format';
import { EMPTY_TASK_VIEW, foldTaskView, isStalled, silenceMs } from '../common/task-view';
import type { IDisposable as Disposable } from '../base/disposable';
import { DEFAULT_MAX_PARALLEL, SeqGaps, isActive, observedStatus, type TaskStore, type TaskSummary } from '../engine/tasks';
import { requireTask, stopSignal, storeFor, type CommonOptions } from './common';
import { formatEventLine, shortId, styleFor, truncate, type Style } from './format';
import type { CliIo } from './io';
import { concludingLine, renderFrame, type WatchedTask } from './watch-frame';

export interface WatchOptions extends CommonOptions {
  once?: boolean;
}

/** A finished task stays on screen this long after its end was seen (reference §6.3.3; how many: watch-frame.ts). */
export const LINGER_MS = 5 * 60_000;
const TICK_MS = 1000;
/** Outside a terminal, a "concluding…" line this often while a task's conclusion runs. */
const HEARTBEAT_MS = 10_000;
/** Once a task settled, how long its last lines get to arrive before watch stops waiting for its `finished`. */
const DRAIN_GRACE_MS = 3000;

type Mode = 'tty' | 'plain' | 'json';

export async function runWatch(io: CliIo, ids: string[], opts: WatchOptions): Promise<void> {
  const store = storeFor(io, opts);
  const unique = [...new Set(ids)];
  for (const id of unique) await requireTask(store, id);
  // Only shown in the header: a broken configuration must not stop anyone from watching.
  const maxParallel = await loadConfig({ root: store.root, env: io.env }).then(
    (loaded) => loaded.config.policy.max_parallel,
    () => DEFAULT_MAX_PARALLEL,
  );
  if (opts.once) return watchOnce(io, store, unique, opts, maxParallel);
  const mode: Mode = opts.json ? 'json' : io.stdoutIsTTY ? 'tty' : 'plain';
  await new WatchSession(io, store, unique, mode, maxParallel).run();
}

/** The tasks worth showing when none were named: the active ones and those that ended less than 5 minutes ago. */
function selectInitial(all: TaskSummary[], ids: string[], now: number): TaskSummary[] {
  if (ids.length) return all.filter((t) => ids.includes(t.id));
  return all.filter((t) => isActive(t.observed) || now - recordedEnd(t, now) < LINGER_MS);
}

function recordedEnd(t: TaskSummary, now: number): number {
  return Date.parse(t.state.ended_at ?? '') || now;
}

async function watchOnce(io: CliIo, store: TaskStore, ids: string[], opts: WatchOptions, maxParallel: number): Promise<void> {
  const now = Date.now();
  const selected = selectInitial(await store.list(), ids, now);
  const read = await Promise.all(selected.map(async (summary) => ({ summary, ...(await store.readEvents(summary.id)) })));
  if (opts.json) {
    const merged = read.flatMap((r) => r.events).sort((a, b) => Date.parse(a.at) - Date.parse(b.at) || a.seq - b.seq);
    for (const event of merged) io.out(JSON.stringify(event));
    return;
  }
  const tasks: WatchedTask[] = read.map((r) => ({
    id: r.summary.id,
    summary: r.summary,
    activity: foldTaskView(EMPTY_TASK_VIEW, r.events),
    badLines: r.badLines,
    endedAt: isActive(r.summary.observed) ? undefined : recordedEnd(r.summary, now),
  }));
  io.out(renderFrame(tasks, now, styleFor(io), io.columns ?? 100, maxParallel).join('\n'));
}

interface Tracked extends WatchedTask {
  follower?: Disposable;
  finishedSeen: boolean;
  silenceAnnounced: boolean;
  /** When the last "concluding…" line was printed (plain mode). */
  heartbeatAt?: number;
  /** The log's numbering, and what was said of the task's records (a gap, a truncated log, an older state): once. */
  numbering: SeqGaps;
  said: Set<string>;
}

class WatchSession {
  private readonly tracked = new Map<string, Tracked>();
  /** Tasks dropped after lingering: a later change in their folder (gc, apply) must not bring them back. */
  private readonly dismissed = new Set<string>();
  private readonly style: Style;
  private renderTimer: NodeJS.Timeout | undefined;
  private finish: () => void = () => {};
  private closed = false;

  constructor(
    private readonly io: CliIo,
    private readonly store: TaskStore,
    private readonly ids: string[],
    private readonly mode: Mode,
    private readonly maxParallel: number,
  ) {
    this.style = styleFor(io);
  }

  async run(): Promise<void> {
    const stop = stopSignal(this.io);
    const done = new Promise<void>((resolve) => {
      this.finish = resolve;
      stop.signal.addEventListener('abort', () => resolve(), { once: true });
    });
    const restoreTerminal = this.mode === 'tty' ? this.enterScreen() : () => {};
    let storeWatcher: Disposable | undefined;
    let ticker: NodeJS.Timeout | undefined;
    try {
      const now = Date.now();
      for (const summary of selectInitial(await this.store.list(), this.ids, now)) this.track(summary, now);
      storeWatcher = this.store.watch((changed) => void this.refresh(changed));
      ticker = setInterval(() => this.tick(), TICK_MS);
      this.changed();
      await done;
    } finally {
      // From here on nothing may draw: a refresh still in flight would paint a frame over the restored screen.
      this.closed = true;
      clearInterval(ticker);
      if (this.renderTimer) clearTimeout(this.renderTimer);
      storeWatcher?.dispose();
      for (const task of this.tracked.values()) task.follower?.dispose();
      stop.dispose();
      restoreTerminal();
    }
  }

  private track(summary: TaskSummary, now: number): void {
    const task: Tracked = {
      id: summary.id,
      summary,
      activity: EMPTY_TASK_VIEW,
      badLines: 0,
      endedAt: isActive(summary.observed) ? undefined : recordedEnd(summary, now),
      finishedSeen: false,
      silenceAnnounced: false,
      numbering: new SeqGaps(),
      said: new Set(),
    };
    this.tracked.set(summary.id, task);
    this.sayOfRecords(task, summary.unverified);
    // From the start of the file, once: the fold needs the whole story (files touched, open tools); afterwards only
    // the appended bytes are read.
    task.follower = this.store.follow(
      summary.id,
      0,
      (events) => this.onEvents(task, events),
      (_line, error) => {
        task.badLines++;
        if (this.mode === 'plain') this.io.err(`${shortId(task.id)} unreadable event line: ${truncate(error, 500)}`);
        this.changed();
      },
    );
  }

  private onEvents(task: Tracked, events: ProtocolEvent[]): void {
    if (this.closed) return;
    for (const event of events) task.numbering.see(event.seq);
    if (task.numbering.first) this.sayOfRecords(task, [task.numbering.first]);
    task.activity = foldTaskView(task.activity, events);
    task.silenceAnnounced = false;
    if (events.some((e) => e.type === 'finished')) task.finishedSeen = true;
    if (this.mode === 'json') for (const event of events) this.io.out(JSON.stringify(event));
    if (this.mode === 'plain') for (const event of events) this.io.out(`${this.prefix(task)}${formatEventLine(event)}`);
    this.changed();
  }

  private prefix(task: WatchedTask): string {
    // truncate() also makes the record's agent name terminal-safe.
    return `${shortId(task.id)} ${truncate(task.summary.state.agent, 60)}  `;
  }

  private async refresh(ids: string[]): Promise<void> {
    const now = Date.now();
    for (const id of ids) {
      if (this.dismissed.has(id) || (this.ids.length && !this.ids.includes(id))) continue;
      let summary: TaskSummary | undefined;
      try {
        summary = await this.store.summary(id);
      } catch {
        continue; // unreadable for a moment (a writer that does not rename): keep what we know, the next change retries
      }
      if (this.closed) return;
      const task = this.tracked.get(id);
      if (!summary) {
        if (task) this.untrack(task);
        continue;
      }
      if (!task) {
        if (isActive(summary.observed) || now - recordedEnd(summary, now) < LINGER_MS) this.track(summary, now);
        continue;
      }
      this.update(task, summary, now);
    }
    this.changed();
  }

  /** A record that is not whole or not in order (record-order.ts) is said, each once: counted as unreadable on screen. */
  private sayOfRecords(task: Tracked, reasons: readonly string[]): void {
    for (const why of reasons) {
      if (task.said.has(why)) continue;
      task.said.add(why);
      task.badLines++;
      if (this.mode === 'plain') this.io.err(`${shortId(task.id)} ${truncate(why, 500)}`);
    }
  }

  private update(task: Tracked, summary: TaskSummary, now: number): void {
    const wasActive = task.endedAt === undefined;
    task.summary = summary;
    this.sayOfRecords(task, summary.unverified);
    if (wasActive && !isActive(summary.observed)) {
      task.endedAt = now;
      if (this.mode === 'plain' && summary.observed === 'lost') {
        this.io.out(`${this.prefix(task)}lost: its supervisor died before concluding (the worktree, if any, is kept; \`caesar gc\` concludes it)`);
      }
    }
  }

  private untrack(task: Tracked): void {
    task.follower?.dispose();
    this.tracked.delete(task.id);
  }

  /** Once a second: clocks and silences move, supervisors may have died, lingering tasks expire. */
  private tick(): void {
    const now = Date.now();
    for (const task of this.tracked.values()) {
      const observed = observedStatus(task.summary.state, now);
      if (observed !== task.summary.observed) this.update(task, { ...task.summary, observed }, now);
      const concluding = concludingLine(task.summary.state, now);
      if (this.mode === 'plain' && !task.endedAt && concluding) {
        // A heartbeat line every HEARTBEAT_MS while the conclusion runs, instead of one "silence" line.
        if (now - (task.heartbeatAt ?? 0) >= HEARTBEAT_MS) {
          task.heartbeatAt = now;
          this.io.out(`${this.prefix(task)}${concluding}`);
        }
      } else if (this.mode === 'plain' && !task.endedAt && !task.silenceAnnounced && isStalled(task.activity, now)) {
        task.silenceAnnounced = true;
        this.io.out(`${this.prefix(task)}silence ${formatDuration(silenceMs(task.activity, now) ?? 0)} (no event since the last one)`);
      }
      if (!this.ids.length && task.endedAt !== undefined && now - task.endedAt > LINGER_MS) {
        this.untrack(task);
        this.dismissed.add(task.id);
      }
    }
    if (this.mode === 'tty') this.render();
    else this.stopWhenNamedTasksEnded(now);
  }

  /** Outside a terminal, `watch <ids>` ends once every named task has ended and its last events were printed. */
  private stopWhenNamedTasksEnded(now: number): void {
    if (!this.ids.length || this.mode === 'tty') return;
    const all = this.ids.map((id) => this.tracked.get(id));
    const drained = (t: Tracked | undefined) =>
      !t || (t.endedAt !== undefined && (t.finishedSeen || t.summary.observed === 'lost' || now - t.endedAt > DRAIN_GRACE_MS));
    if (all.every(drained)) this.finish();
  }

  private changed(): void {
    if (this.closed) return;
    if (this.mode === 'tty') {
      this.renderTimer ??= setTimeout(() => {
        this.renderTimer = undefined;
        this.render();
      }, 30);
    } else {
      this.stopWhenNamedTasksEnded(Date.now());
    }
  }

  private render(): void {
    if (this.closed) return;
    const tasks = [...this.tracked.values()];
    this.io.out(`\x1b[H\x1b[2J${renderFrame(tasks, Date.now(), this.style, this.io.columns ?? 100, this.maxParallel).join('\n')}`);
  }

  /** Alternate screen, hidden cursor, raw keys; returns the function that puts the terminal back as it was. */
  private enterScreen(): () => void {
    this.io.out('\x1b[?1049h\x1b[?25l');
    const stdin = this.io.stdin;
    const onKey = (chunk: Buffer | string) => {
      const key = chunk.toString();
      if (key.includes('q') || key.includes('Q') || key.includes('\x03')) this.finish();
    };
    if (stdin) {
      if (stdin.isTTY) stdin.setRawMode?.(true);
      stdin.on('data', onKey);
      stdin.resume();
    }
    return () => {
      if (stdin) {
        stdin.off('data', onKey);
        if (stdin.isTTY) stdin.setRawMode?.(false);
        stdin.pause();
      }
      this.io.out('\x1b[?25h\x1b[?1049l');
    };
  }
}

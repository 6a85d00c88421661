import type { Command } from 'commander';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { checksSuffix, taskPaths, type ProtocolEvent } from '../../protocol';
import { UnsealedEventError, bindingOf, distinctPrefixLength, isActive, readSealedEventLine, reviewOutcome, tailLines, type ReviewOutcome, type TaskStore, type TaskSummary } from '../../engine/tasks';
import type { IDisposable as Disposable } from '../../base/disposable';
import type { ObservedStatus } from '../../protocol';
import { TaskStatusSchema } from '../../protocol';
import { formatJob } from '../../common/format';
import { runNumbers, taskTitle } from '../../common/titles';
import { taskLifecycle, type LifecyclePhase } from '../../common/lifecycle';
import { cliAdvice, nextActions } from '../../common/next-actions';
import { addCommonOptions, requireTask, splitList, stopSignal, storeFor, taskIdArgument, type CommonOptions } from '../common';
import { SHORT_ID_LENGTH, ago, formatEventLine, formatUsage, shortId, styleFor, table, termSafe, termSafeBlock, type Style } from '../format';
import { readRegularFileBounded } from '../../base/safe-read';
import { ExitCode, UsageError, printJson, type CliIo } from '../io';
import { waitUntilSettled } from '../settle';
import { overlapLines, overlapsJson, overlapsOf } from '../overlap-lines';
import { runWatch, type WatchOptions } from '../watch';
import { SeqGaps } from '../../engine/tasks';

const OBSERVED_STATUSES: readonly ObservedStatus[] = [...TaskStatusSchema.options, 'lost', 'queued', 'unverified'];
/** What `ps` shows and filters on: the task's status, or what the user did with its work once they applied or discarded it. */
const REVIEW_OUTCOMES: readonly ReviewOutcome[] = ['applied', 'discarded'];
const SHOWN_STATUSES: readonly string[] = [...OBSERVED_STATUSES, ...REVIEW_OUTCOMES];
/** Finished tasks `ps` lists by default, after every active one (reference §6.2.8). */
const RECENT_FINISHED = 10;
/** After a followed task settles, how long to wait for the last lines to reach the follower before giving up. */
const FINAL_DRAIN_MS = 3000;
/** `caesar logs` without --follow reads a whole file: past this it refuses rather than exhausting memory. */
const MAX_LOG_READ = 256 * 1024 * 1024;

export function registerFollow(program: Command, io: CliIo): void {
  addCommonOptions(
    program
      .command('ps')
      .description('List tasks: every active one and the 10 most recently finished, newest first')
      .option('--status <list>', `only these statuses (comma-separated: ${SHOWN_STATUSES.join(', ')})`, splitList),
  ).action((opts: CommonOptions & { status?: string[] }) => ps(io, opts));

  addCommonOptions(
    program
      .command('watch')
      .description('Follow tasks live: a full-screen view on a terminal, one line per event otherwise')
      .addArgument(taskIdArgument('[ids...]', 'tasks to follow (default: every active task and the ones that just finished)'))
      .option('--once', 'print one frame (or the events so far, with --json) and exit'),
  ).action((ids: string[], opts: WatchOptions) => runWatch(io, ids, opts));

  addCommonOptions(
    program
      .command('logs')
      .description("Print a task's events as `[seq] type …` lines")
      .addArgument(taskIdArgument('<id>', 'task id'))
      .option('--raw', "print the agent's raw output (raw.log) instead of the events")
      .option('-f, --follow', 'keep printing new lines until the task is no longer active'),
  ).action((id: string, opts: LogsOptions) => logs(io, id, opts));
}

async function ps(io: CliIo, opts: CommonOptions & { status?: string[] }): Promise<void> {
  const wanted = opts.status;
  for (const status of wanted ?? []) {
    if (!SHOWN_STATUSES.includes(status)) {
      throw new UsageError(`Unknown status "${status}": expected one of ${SHOWN_STATUSES.join(', ')}.`);
    }
  }
  const store = storeFor(io, opts);
  const now = Date.now();
  const all = (await store.list()).sort((a, b) => createdAt(b) - createdAt(a));
  const shown = wanted?.length
    ? all.filter((t) => wanted.includes(t.observed) || wanted.includes(reviewOutcome(t) ?? ''))
    : [...all.filter((t) => isActive(t.observed)), ...all.filter((t) => !isActive(t.observed)).slice(0, RECENT_FINISHED)].sort(
        (a, b) => createdAt(b) - createdAt(a),
      );
  const overlaps = await overlapsOf(store.root, all);
  if (opts.json) {
    const numbers = runNumbers(all);
    printJson(io, shown.map((t) => ({ ...psJson(t, now), title: taskTitle(t, numbers), overlaps: overlapsJson(overlaps, t.id) })));
    return;
  }
  if (shown.length === 0) {
    io.out(wanted?.length ? `No task with status ${wanted.join(', ')}.` : 'No task yet. Start one with `caesar run --agent demo "…"`.');
    return;
  }
  const style = styleFor(io);
  const listing: Listing = { now, style, numbers: runNumbers(all), idLength: distinctPrefixLength(all.map((t) => t.id), SHORT_ID_LENGTH) };
  const rows = [
    ['ID', 'TITLE', 'AGENT•ROLE', 'STATUS', 'REPORT', 'ISOLATION•MODE', 'AGE', 'USAGE'].map((h) => style.bold(h)),
    ...shown.map((t) => psRow(t, listing)),
  ];
  io.out([...table(rows), ...overlapLines(shown, overlaps, style), ...adviceLines(shown, listing)].join('\n'));
  // Records that are not Caesar's are said to be so, never passed off as the truth (record-seal.ts).
  for (const t of shown) for (const why of t.unverified) io.err(`caesar: ${shortId(t.id)}: ${termSafe(why)}`);
}

/** The phases that wait for the user: each such task gets its "next:" line under the table. */
const WAITING_FOR_USER: readonly LifecyclePhase[] = ['waiting', 'review', 'partly_applied'];

/** What the user can do next about the tasks that wait for them (src/common/next-actions.ts, as the editor offers it). */
function adviceLines(shown: readonly TaskSummary[], { style, idLength }: Listing): string[] {
  const lines: string[] = [];
  for (const t of shown) {
    const life = taskLifecycle(t);
    if (!WAITING_FOR_USER.includes(life.phase)) continue;
    // The question to answer is known here: named, instead of the placeholder.
    const question = t.pendingQuestions[0];
    const advice = cliAdvice(nextActions(life), t.id).replace('<question-id>', question ? termSafe(question.id) : '<question-id>');
    lines.push(`${termSafe(t.id.slice(0, idLength))} ${life.label} — ${style.dim(advice)}`);
  }
  return lines.length ? ['', ...lines] : [];
}

function createdAt(t: TaskSummary): number {
  return Date.parse(t.state.created_at) || 0;
}

function reportStatus(t: TaskSummary): string | undefined {
  return t.state.report_status ?? t.result?.report.status;
}

/** What every row of one `ps` listing shares: the clock, the style, run numbers, and how much of an id tells tasks apart. */
interface Listing {
  now: number;
  style: Style;
  numbers: ReadonlyMap<string, number>;
  /** Ids are shown as short as still names one task of this root: what is printed is accepted back by every command. */
  idLength: number;
}

function psRow(t: TaskSummary, { now, style, numbers, idLength }: Listing): string[] {
  const questions = t.pendingQuestions.length && isActive(t.observed) ? ` ?${t.pendingQuestions.length}` : '';
  const job = t.job && isActive(t.observed) ? style.dim(` ${termSafe(formatJob(t.job) ?? '')}`) : '';
  // A task record may come from a cloned repository: every value it chose is escaped (termSafe) before styling.
  return [
    termSafe(t.id.slice(0, idLength)),
    termSafe(taskTitle(t, numbers)),
    termSafe([t.state.agent, t.state.role].filter(Boolean).join('•')),
    shownStatus(t, style) + (checksSuffix(t.state) ? style.red(checksSuffix(t.state)) : '') + questions + job,
    termSafe(reportStatus(t) ?? '-'),
    termSafe(`${t.state.isolation}•${t.state.mode}`),
    ago(t.state.created_at, now),
    formatUsage(t.state.usage ?? t.result?.usage) ?? '',
  ];
}

/** A task whose work was applied or discarded reads as such; its run's own status stays in `ps --json`. */
function shownStatus(t: TaskSummary, style: Style): string {
  const outcome = reviewOutcome(t);
  // "landed" when the landing queue wrote it (the lifecycle's label); the same next steps as applied.
  if (outcome === 'applied') return style.green(taskLifecycle(t).label);
  if (outcome === 'discarded') return style.dim('discarded');
  return colourStatus(t.observed, style);
}

export function colourStatus(status: ObservedStatus, style: Style): string {
  switch (status) {
    case 'succeeded':
      return style.green(status);
    case 'failed':
    case 'lost':
    case 'timed_out':
    case 'unverified':
      return style.red(status);
    case 'cancelled':
      return style.yellow(status);
    default:
      return style.cyan(status);
  }
}

function psJson(t: TaskSummary, now: number) {
  return {
    id: t.id,
    agent: t.state.agent,
    role: t.state.role ?? null,
    status: t.observed,
    recorded_status: t.state.status,
    unverified: t.unverified,
    report_status: reportStatus(t) ?? null,
    checks: t.state.checks ?? null,
    review: reviewOutcome(t) ?? null,
    applied_at: t.applied?.applied_at ?? null,
    discarded_at: t.discarded?.discarded_at ?? null,
    isolation: t.state.isolation,
    mode: t.state.mode,
    objective: t.state.objective,
    created_at: t.state.created_at,
    started_at: t.state.started_at ?? null,
    ended_at: t.state.ended_at ?? null,
    age_ms: Math.max(0, now - createdAt(t)),
    worktree: t.state.worktree ?? null,
    job: t.job ?? null,
    pending_questions: t.pendingQuestions.map((q) => ({ id: q.id, question: q.question, options: q.options })),
    usage: t.state.usage ?? t.result?.usage ?? null,
  };
}

interface LogsOptions extends CommonOptions {
  raw?: boolean;
  follow?: boolean;
}

async function logs(io: CliIo, id: string, opts: LogsOptions): Promise<void> {
  if (opts.raw && opts.json) throw new UsageError('--raw prints raw.log as the agent wrote it; it has no JSON form. Drop --json or --raw.');
  const store = storeFor(io, opts);
  const view = await requireTask(store, id);
  const paths = taskPaths(store.root, id);
  const print = (event: ProtocolEvent) => io.out(opts.json ? JSON.stringify(event) : formatEventLine(event));

  if (!opts.follow) {
    if (opts.raw) {
      const text = await readTaskFile(paths.rawLog, store.tasksDir);
      if (text) io.out(termSafeBlock(text));
      return;
    }
    const text = await readTaskFile(paths.events, store.tasksDir);
    const binding = bindingOf(store.root, id);
    const numbering = new SeqGaps();
    text.split('\n').forEach((line, i) => {
      if (!line.trim()) return;
      try {
        const event = readSealedEventLine(binding, line);
        numbering.see(event.seq);
        print(event);
      } catch (err) {
        // A line Caesar did not write is never shown as an event (record-seal.ts): it is reported as what it is.
        const what = err instanceof UnsealedEventError ? 'is not shown, it is not Caesar\'s' : 'is unreadable';
        io.err(`caesar: events.jsonl line ${i + 1} ${what}: ${termSafe((err as Error).message)}`);
      }
    });
    // Events cut out of the log, or its end cut off, are said to be missing (record-order.ts), never passed over.
    if (numbering.first) io.err(`caesar: ${numbering.first}`);
    for (const why of view.unverified) io.err(`caesar: ${termSafe(why)}`);
    return;
  }
  await followUntilSettled(io, store, id, opts.raw ? paths.rawLog : paths.events, (onProgress) =>
    opts.raw
      ? tailLines(paths.rawLog, {
          fromOffset: 0,
          onLines: (lines, next) => {
            for (const line of lines) io.out(termSafeBlock(line));
            onProgress(next, false);
          },
        })
      : store.follow(
          id,
          0,
          (events, next) => {
            for (const event of events) print(event);
            onProgress(next, events.some((e) => e.type === 'finished'));
          },
          (line, error) => io.err(`caesar: unreadable event line (${termSafe(error)}): ${termSafe(line.slice(0, 200))}`),
        ),
  );
}

/**
 * A task file as `logs` prints it: regular files only, never through a symlink, bounded, opened without blocking (a
 * FIFO planted at events.jsonl must not hang the command). Missing → empty; refused → exit 1 with the reason.
 */
async function readTaskFile(file: string, tasksDir: string): Promise<string> {
  try {
    return (await readRegularFileBounded(file, MAX_LOG_READ, { within: tasksDir })).toString('utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return '';
    throw new ExitCode(1, `${path.basename(file)} could not be read: ${(err as Error).message}`);
  }
}

/**
 * Tails `file` (through `start`) until the task is no longer active, then lets the last lines arrive: done when the
 * `finished` event was seen or everything up to the file's size was read (a lost task has no `finished`).
 */
async function followUntilSettled(
  io: CliIo,
  store: TaskStore,
  id: string,
  file: string,
  start: (onProgress: (offset: number, finished: boolean) => void) => Disposable,
): Promise<void> {
  let offset = 0;
  let finishedSeen = false;
  const follower = start((next, finished) => {
    offset = next;
    finishedSeen ||= finished;
  });
  const stop = stopSignal(io);
  try {
    const settled = await waitUntilSettled(store, id, stop.signal);
    if (!settled) return;
    const deadline = Date.now() + FINAL_DRAIN_MS;
    while (!finishedSeen && Date.now() < deadline && !stop.signal.aborted) {
      const size = await fs.stat(file).then((s) => s.size, () => 0);
      // A settled task's events end with `finished` unless its supervisor died; raw.log has no such marker.
      const noMarkerComing = settled.observed === 'lost' || file !== taskPaths(store.root, id).events;
      if (offset >= size && noMarkerComing) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    if (settled.observed === 'lost') io.err(`caesar: task ${shortId(id)}… is lost: its supervisor died before concluding. \`caesar gc\` concludes it and stops any agent it left running.`);
  } finally {
    stop.dispose();
    follower.dispose();
  }
}

import { promises as fs, watch, type Dirent, type FSWatcher } from 'node:fs';
import type { z } from 'zod';
import * as path from 'node:path';
import {
  QuestionFileSchema,
  TaskSchema,
  isSafeId,
  TASK_FILES,
  taskPaths,
  tasksDir,
  type ProtocolEvent,
  type QuestionFile,
  type Task,
} from '../../protocol';
import { readJsonFile } from './atomic';
import { listFolder, readRegularFileBounded } from '../../base/safe-read';
import { bindingOf, type RecordKind } from './record-seal';
import { readSealedJsonFile } from './sealed-read';
import { olderStateReason, truncatedLogReason } from './record-order';
import { NO_EVENTS, readLastSealedEvent, readSealedEventLine, readSealedEventsText, type SealedEventsRead } from './sealed-events';
import { combineDisposables, toDisposable, type IDisposable as Disposable } from '../../base/disposable';
import { Debouncer } from '../../base/event';
import { QUESTIONS_CLOSED_FILE } from '../../protocol';
import { questionsClosedAt } from './questions-closed';
import { workDecision } from '../../common/lifecycle';
import { AppliedDocSchema, MAX_BYTES, ResultDocSchema, type AppliedDoc, type ResultDoc } from '../../protocol';
import { ACTIVE_STATUSES, DiscardedDocSchema, LauncherRecordSchema, TaskStateSchema, type DiscardedDoc, type ObservedStatus, type TaskState } from '../../protocol';
import { jobView, observedStatus, probeJob, type JobView } from './observed-status';
import { tailLines } from './tail';
import { relayedSummary } from './delegation-socket';
import { existsSync } from 'node:fs';

export interface TaskSummary {
  id: string;
  state: TaskState;
  /** The status to show: the recorded one, or 'lost' when the supervisor died without concluding. */
  observed: ObservedStatus;
  lastEvent?: ProtocolEvent;
  /** Size of events.jsonl: where a follower that has seen everything so far would resume. */
  eventsBytes: number;
  pendingQuestions: QuestionFile[];
  result?: ResultDoc;
  /** Written by apply and discard (never by the supervisor): what the user did with the task's work. */
  applied?: AppliedDoc;
  discarded?: DiscardedDoc;
  /** The job system's side of a task run as a job (`[launcher] kind = "slurm"`): its id and, while active, its state. */
  job?: JobView;
  /**
   * Caesar's records of this task that do not verify (record-seal.ts), each with its reason; empty when all do. An
   * unverified state.json makes the task 'unverified'; an unverified result.json or applied.json is left out.
   */
  unverified: string[];
}

/** A task folder whose records Caesar sealed for another root: copied in, refused (its records are not this root's). */
export class ForeignTaskError extends Error {
  constructor(
    message: string,
    readonly sealedRoot: string,
  ) {
    super(message);
    this.name = 'ForeignTaskError';
  }
}

export { observedStatus, type JobProbe, type JobView } from './observed-status';

export interface TaskView extends TaskSummary {
  task?: Task;
}

/** readEvents() reads the whole file into one string: past this it is refused rather than exhausting memory. */
const MAX_EVENTS_READ = 256 * 1024 * 1024;

/**
 * The read side of tasks, shared by the CLI, the MCP server and the extension. It never writes: the supervisor is the
 * only writer of a task's files (DESIGN.md principle 2), and everyone else sends requests (see requests.ts).
 */
export class TaskStore {
  constructor(readonly root: string) {}

  get tasksDir(): string {
    return tasksDir(this.root);
  }

  /** Reads stay inside the tasks folder: no symlinked task folder or questions/ folder leads them elsewhere. */
  private get inTasks(): { within: string } {
    return { within: this.tasksDir };
  }

  /** Task ids present on disk (directories with a safe name). */
  async ids(): Promise<string[]> {
    try {
      const entries = await fs.readdir(this.tasksDir, { withFileTypes: true });
      return entries.filter((e) => e.isDirectory() && isSafeId(e.name)).map((e) => e.name);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw err;
    }
  }

  /** Every readable task, needing input first, then active, then finished newest first. Unreadable ones are skipped. */
  async list(): Promise<TaskSummary[]> {
    const summaries = await Promise.all((await this.ids()).map((id) => this.summary(id).catch(() => undefined)));
    return sortForDisplay(summaries.filter((s): s is TaskSummary => s !== undefined));
  }

  async get(id: string): Promise<TaskView | undefined> {
    if (!isSafeId(id)) return undefined;
    const summary = await this.summary(id);
    if (!summary) return undefined;
    const task = await readJsonFile(taskPaths(this.root, id).task, TaskSchema, undefined, this.inTasks).catch(() => undefined);
    return { ...summary, task };
  }

  /** Like get(), but a missing task is an error that names the id and the root searched. */
  async require(id: string): Promise<TaskView> {
    const view = await this.get(id);
    if (!view) throw new Error(`Unknown task "${id}" (looked in ${this.tasksDir}).`);
    return view;
  }

  async summary(id: string): Promise<TaskSummary | undefined> {
    // A sub-task started through the supervisor of the sandbox this runs in: its records are checked outside.
    const relayed = await relayedSummary<TaskSummary>(this.root, id, () => existsSync(taskPaths(this.root, id).state));
    if (relayed !== 'no') return relayed.summary;
    const first = await this.readSummary(id);
    // A supervisor writes the final state, then exits. A state read just before that write and judged after the exit
    // (the liveness probe comes after the reads) would look lost: a "lost" verdict is confirmed by reading again, which
    // sees the final state if there is one, since it was written before the process ended.
    // The same for records out of order: read between result.json and the final state, a state looks an older one.
    return first?.observed === 'lost' || first?.unverified.length ? this.readSummary(id) : first;
  }

  /** One listing of a task folder (its own method so a test can conclude a task between the listing and the reads). */
  private listTaskFolder(dir: string): Promise<Map<string, Dirent> | undefined> {
    return listFolder(dir, this.tasksDir);
  }

  private async readSummary(id: string): Promise<TaskSummary | undefined> {
    const paths = taskPaths(this.root, id);
    // Task folders may come from a cloned repository: every read is regular-file-only, bounded, inside the tasks folder.
    // One listing of the folder first (issue 14: `ps` reads five files of each of hundreds of tasks): a file it does
    // not hold costs nothing, and one it lists as a regular file is read without checking the folder again.
    const listing = await this.listTaskFolder(paths.dir);
    if (!listing?.has(TASK_FILES.state)) return undefined;
    const options = (file: string) => ({ ...this.inTasks, listed: listing.get(path.basename(file))!.isFile() });
    // Anything else than a regular file takes the checked path, which refuses it with its reason.
    const read = <T>(file: string, schema: z.ZodType<T>, maxBytes?: number) =>
      listing.has(path.basename(file)) ? readJsonFile(file, schema, maxBytes, options(file)) : Promise.resolve(undefined);
    const unverified: string[] = [];
    const sealed = async <T>(file: string, kind: RecordKind, schema: z.ZodType<T>, maxBytes?: number) => {
      if (!listing.has(path.basename(file))) return undefined;
      const record = await readSealedJsonFile(file, kind, schema, maxBytes, options(file));
      if (!record || record.verdict.ok) return record;
      if (record.verdict.reason === 'other-root') throw new ForeignTaskError(record.verdict.message, record.verdict.sealedRoot);
      unverified.push(record.verdict.message);
      return record;
    };
    const stateRecord = await sealed(paths.state, 'state', TaskStateSchema);
    if (!stateRecord) return undefined;
    const state = stateRecord.value;
    // The listing predates the state read: a supervisor concluding in between wrote result.json, then the final state
    // (finalize.ts), after the listing. A finished state is never shown without the result written before it.
    if (!ACTIVE_STATUSES.includes(state.status) && !listing.has(TASK_FILES.result)) {
      const written = (await this.listTaskFolder(paths.dir))?.get(TASK_FILES.result);
      if (written) listing.set(TASK_FILES.result, written);
    }
    // Never shown as the truth: a result or applied record Caesar did not write is left out (its reason is listed).
    const trusted = <T>(record: { value: T; verdict: { ok: boolean } } | undefined) => (record?.verdict.ok ? record.value : undefined);
    const binding = bindingOf(this.root, id);
    const [last, pendingQuestions, result, applied, discarded, probe] = await Promise.all([
      listing.has(TASK_FILES.events) ? readLastSealedEvent(binding, paths.events, options(paths.events)) : NO_EVENTS,
      listing.has(TASK_FILES.questionsDir) ? readPendingQuestions(paths.questionsDir, paths.answersDir) : [],
      sealed(paths.result, 'result', ResultDocSchema, MAX_BYTES.result).then(trusted, () => undefined),
      sealed(paths.applied, 'applied', AppliedDocSchema).then(trusted, () => undefined),
      read(paths.discarded, DiscardedDocSchema).catch(() => undefined),
      listing.has(TASK_FILES.launcher)
        ? probeJob(state, read(paths.launcher, LauncherRecordSchema).catch(() => undefined), listing.has(TASK_FILES.cancelRequest))
        : undefined,
    ]);
    let observed: ObservedStatus = stateRecord.verdict.ok ? observedStatus(state, Date.now(), probe) : 'unverified';
    if (stateRecord.verdict.ok) {
      // A seal says who wrote a record, not when: an earlier state put back is refused like a forged one (record-order.ts).
      const older = olderStateReason(state, { result, lastEvent: last.event, supervisorGone: observed === 'lost' });
      if (older) observed = 'unverified';
      const truncated = await this.truncatedLog(id, state, last.event);
      unverified.push(...[older, truncated].filter((why): why is string => why !== undefined));
    }
    return {
      id,
      state,
      observed,
      ...(probe ? { job: jobView(probe) } : {}),
      lastEvent: last.event,
      eventsBytes: last.size,
      pendingQuestions,
      result,
      applied,
      discarded,
      unverified,
    };
  }

  /**
   * Why the log holds fewer events than the state vouches for. The last event comes from the end of the file; one
   * longer than that window hides it, so a shortfall is confirmed on the whole log before it is said (a rare path).
   */
  private async truncatedLog(id: string, state: TaskState, lastEvent: ProtocolEvent | undefined): Promise<string | undefined> {
    if (!truncatedLogReason(state, lastEvent?.seq)) return undefined;
    const whole = await this.readEvents(id).catch(() => undefined);
    return truncatedLogReason(state, whole ? whole.lastSeq : lastEvent?.seq);
  }

  /**
   * Follows a task's events from a byte offset (0 = from the start), live, without re-reading the file. Lines that do
   * not parse, or that Caesar did not write (sealed-events.ts), are reported to onBadLine with their reason (the
   * reference skips them silently) and never delivered: a forged `finished` ends no follower.
   */
  follow(
    id: string,
    fromOffset: number,
    onEvents: (events: ProtocolEvent[], nextOffset: number) => void,
    onBadLine?: (line: string, error: string) => void,
  ): Disposable {
    const binding = bindingOf(this.root, id);
    return tailLines(taskPaths(this.root, id).events, {
      fromOffset,
      onLines: (lines, nextOffset) => {
        const events: ProtocolEvent[] = [];
        for (const line of lines) {
          if (!line.trim()) continue;
          try {
            events.push(readSealedEventLine(binding, line));
          } catch (err) {
            onBadLine?.(line, (err as Error).message);
          }
        }
        if (events.length) onEvents(events, nextOffset);
      },
    });
  }

  /** Reads every event once (for `logs` and MCP; followers use follow()). Bad and unverified lines are counted, not shown. */
  async readEvents(id: string): Promise<SealedEventsRead> {
    let text = '';
    try {
      text = (await readRegularFileBounded(taskPaths(this.root, id).events, MAX_EVENTS_READ, this.inTasks)).toString('utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
    return readSealedEventsText(bindingOf(this.root, id), text);
  }

  /**
   * Calls onChange with the ids of tasks that appeared or whose files changed, coalesced over `debounceMs`.
   * Driven by fs.watch on the tasks folder and on each task folder; works before `.caesar/tasks` exists. With `only`,
   * just that task is watched (a CLI following one task need not watch a folder per task of the repository).
   */
  watch(onChange: (ids: string[]) => void, debounceMs = 50, only?: string): Disposable {
    const taskWatchers = new Map<string, FSWatcher>();
    const changed = new Debouncer<string>(debounceMs, onChange);
    let rootWatcher: FSWatcher | undefined;
    let disposed = false;
    const mark = (id: string) => changed.add(id);
    const watchTask = (id: string) => {
      if (taskWatchers.has(id) || !isSafeId(id)) return;
      const watcher = safeWatch(path.join(this.tasksDir, id), () => mark(id), true);
      if (watcher) taskWatchers.set(id, watcher);
    };
    const rescan = async () => {
      const all = await this.ids().catch(() => [] as string[]);
      const ids = only === undefined ? all : all.filter((id) => id === only);
      for (const id of ids) {
        if (!taskWatchers.has(id)) {
          watchTask(id);
          mark(id);
        }
      }
      for (const [id, watcher] of taskWatchers) {
        if (!ids.includes(id)) {
          watcher.close();
          taskWatchers.delete(id);
          mark(id);
        }
      }
    };
    // Until .caesar/tasks exists, watch the nearest existing ancestor inside the root for its creation.
    const armRoot = () => {
      if (disposed) return;
      rootWatcher?.close();
      const candidates = [this.tasksDir, path.dirname(this.tasksDir), this.root];
      for (const dir of candidates) {
        rootWatcher = safeWatch(dir, () => {
          if (dir !== this.tasksDir) armRoot();
          void rescan();
        });
        if (rootWatcher) break;
      }
      void rescan();
    };
    armRoot();

    return combineDisposables([
      toDisposable(() => {
        disposed = true;
        rootWatcher?.close();
        for (const watcher of taskWatchers.values()) watcher.close();
        taskWatchers.clear();
        changed.dispose();
      }),
    ]);
  }
}


export type ReviewOutcome = 'applied' | 'discarded';

/**
 * What the user did with a finished task's work: applied it, or threw it away (`caesar discard`, or `gc --force` on
 * unapplied changes). Applied wins: discarding the worktree after applying is the usual clean-up. A worktree gc
 * removed because it held nothing (or only applied work) is no decision of the user's: no outcome.
 */
export function reviewOutcome(task: Pick<TaskSummary, 'applied' | 'discarded'>): ReviewOutcome | undefined {
  return workDecision(task);
}

/** Not active: an 'unverified' task is no running task anyone can vouch for (settle.ts waits on it all the same). */
export function isActive(status: ObservedStatus): boolean {
  return status === 'pending' || status === 'running' || status === 'queued';
}

/** Needs input first, then running, then pending, then finished (newest first). */
export function sortForDisplay(tasks: TaskSummary[]): TaskSummary[] {
  const rank = (t: TaskSummary) =>
    t.pendingQuestions.length && isActive(t.observed) ? 0 : t.observed === 'running' ? 1 : t.observed === 'pending' || t.observed === 'queued' ? 2 : 3;
  const time = (t: TaskSummary) => Date.parse(t.state.ended_at ?? t.state.started_at ?? t.state.created_at) || 0;
  return [...tasks].sort((a, b) => rank(a) - rank(b) || time(b) - time(a));
}

/** Questions without an answer and not expired, oldest first. */
export async function readPendingQuestions(questionsDir: string, answersDir: string): Promise<QuestionFile[]> {
  const names = await fs.readdir(questionsDir).catch(() => [] as string[]);
  if (names.length === 0 || (names.includes(QUESTIONS_CLOSED_FILE) && (await questionsClosedAt(questionsDir)))) return [];
  const answered = new Set((await fs.readdir(answersDir).catch(() => [] as string[])).filter((n) => n.endsWith('.json')));
  const pending: QuestionFile[] = [];
  for (const name of names) {
    if (!name.endsWith('.json') || name.startsWith('.') || answered.has(name)) continue;
    const file = path.join(questionsDir, name);
    const question = await readJsonFile(file, QuestionFileSchema, undefined, { within: path.dirname(questionsDir) }).catch(() => undefined);
    if (question && !question.expired_at && `${question.id}.json` === name) pending.push(question);
  }
  return pending.sort((a, b) => a.asked_at.localeCompare(b.asked_at));
}

function safeWatch(dir: string, onChange: () => void, persistent = false): FSWatcher | undefined {
  try {
    const watcher = watch(dir, { persistent }, () => onChange());
    watcher.on('error', () => watcher.close());
    return watcher;
  } catch {
    return undefined;
  }
}

import { existsSync, promises as fs } from 'node:fs';
import { openRegularFile } from '../../base/safe-read';
import { isSafeId, taskPaths, tasksDir, type ProtocolEvent } from '../../protocol';
import { applyTask, type ApplyOutcome } from '../git/apply';
import { worktreeDiff, type FileChange } from '../git/reconcile';
import { RequestError } from '../store/requests';
import { TaskStore, isActive, type TaskView } from '../store/store';
import { ambiguousIdMessage, matchTaskIdPrefix } from '../store/task-id-prefix';

/**
 * Task operations a front end calls by id (diff, apply, logs), with the checks every front end needs done the same
 * way: a malformed id or an unknown task is a RequestError, never a crash, and a task still running is said so.
 */

/** The task, or a RequestError naming the id: 'invalid_id' for a malformed one, 'unknown_task' when none exists. */
export async function requireTaskView(root: string, id: string): Promise<TaskView> {
  if (!isSafeId(id)) throw new RequestError(`Invalid task id ${JSON.stringify(id)}: task ids look like t_0123abcd…`, 'invalid_id');
  const store = new TaskStore(root);
  const view = await store.get(id);
  if (!view) throw new RequestError(`Unknown task "${id}" (looked in ${store.tasksDir}).`, 'unknown_task');
  return view;
}

export interface TaskDiff {
  task_id: string;
  /** null when the task ran in place or has no worktree yet: its files come from result.json (git-verified). */
  worktree: string | null;
  base_ref: string | null;
  files: FileChange[];
  is_empty: boolean;
  /** The unified patch (binary-safe) against base_ref; null without a worktree. */
  patch: string | null;
  /** sha256 of the patch's bytes: two tasks with the same digest made the very same change. */
  patch_digest?: string;
  /** Why there is no patch, when there is none. */
  message?: string;
}

/** A task's changes, recomputed from git against its base commit (what the user reviews is what apply applies). */
export async function diffTask(root: string, id: string): Promise<TaskDiff> {
  const view = await requireTaskView(root, id);
  const { state } = view;
  if (!state.worktree || !state.base_ref) {
    const files = view.result?.diff?.files ?? [];
    const message =
      state.isolation === 'inplace'
        ? `Task ${id} ran in place: there is no worktree, its changes are already in the workspace (${state.workspace}).`
        : `Task ${id} has no worktree${isActive(view.observed) ? ' yet' : ''} (status ${view.observed}).`;
    return { task_id: id, worktree: null, base_ref: null, files, is_empty: files.length === 0, patch: null, message };
  }
  if (!existsSync(state.worktree)) {
    return {
      task_id: id,
      worktree: state.worktree,
      base_ref: state.base_ref,
      files: view.result?.diff?.files ?? [],
      is_empty: true,
      patch: null,
      message: `The worktree of task ${id} (${state.worktree}) no longer exists (discarded or collected by gc).`,
    };
  }
  const diff = await worktreeDiff(state.worktree, state.base_ref, state.excluded_paths);
  return { task_id: id, worktree: state.worktree, base_ref: state.base_ref, files: diff.files, is_empty: diff.is_empty, patch: diff.patch, patch_digest: diff.patch_digest };
}

/**
 * Applies a finished task's changes onto the workspace, all or nothing (engine applyTask). A task still running is
 * refused with reason 'active'; `files` naming a path the task did not change is a RequestError, never a silent
 * partial apply.
 */
export async function applyTaskById(root: string, id: string, files?: string[], options: { acceptRepositoryChanges?: boolean } = {}): Promise<ApplyOutcome> {
  const view = await requireTaskView(root, id);
  if (isActive(view.observed)) {
    return { applied: false, files: [], conflicts: [], reason: 'active', message: `Task ${id} is still ${view.observed}: wait for it to finish, or cancel it first.` };
  }
  const { state } = view;
  if (files?.length && state.worktree && state.base_ref && existsSync(state.worktree)) {
    const changed = await worktreeDiff(state.worktree, state.base_ref, state.excluded_paths);
    const known = new Set(changed.files.flatMap((f) => (f.old_path ? [f.path, f.old_path] : [f.path])));
    const unknown = files.filter((f) => !known.has(f.replace(/^\.\//, '')));
    if (unknown.length) {
      throw new RequestError(`Task ${id} did not change ${unknown.join(', ')}. Its files: ${[...known].join(', ') || '(none)'}.`, 'unknown_file');
    }
  }
  return applyTask({ root, state, ...(files?.length ? { files } : {}), ...(options.acceptRepositoryChanges ? { acceptRepositoryChanges: true } : {}) });
}

export interface EventPage {
  task_id: string;
  events: ProtocolEvent[];
  /** Events in the file so far (unreadable lines excluded). */
  total_events: number;
  bad_lines: number;
  /** Pass back as `cursor` to read the events after this page; equals total_events when there are no more yet. */
  next_cursor: number;
}

/** Normalized events, `limit` at a time from `cursor` (an event index); without a cursor, the last `limit`. */
export async function readEventPage(root: string, id: string, options: { cursor?: number; limit: number }): Promise<EventPage> {
  await requireTaskView(root, id);
  const { events, badLines } = await new TaskStore(root).readEvents(id);
  const start = options.cursor === undefined ? Math.max(0, events.length - options.limit) : Math.min(options.cursor, events.length);
  const page = events.slice(start, start + options.limit);
  return { task_id: id, events: page, total_events: events.length, bad_lines: badLines, next_cursor: start + page.length };
}

export interface RawLogPage {
  task_id: string;
  text: string;
  /** Size of raw.log now. */
  total_bytes: number;
  /** The page starts later than asked because the rest would exceed the bound. */
  truncated: boolean;
  /** Byte offset to pass back as `cursor` for what follows. */
  next_cursor: number;
}

/** raw.log (the agent's own stdout+stderr) by byte offset, at most `maxBytes`; without a cursor, its end. */
export async function readRawLogPage(root: string, id: string, options: { cursor?: number; maxBytes: number }): Promise<RawLogPage> {
  await requireTaskView(root, id);
  const file = taskPaths(root, id).rawLog;
  let handle: fs.FileHandle | undefined;
  try {
    // Regular file only, no symlink, non-blocking open: a FIFO or a /dev/zero link at raw.log is refused, not read.
    handle = await openRegularFile(file, { within: tasksDir(root) });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { task_id: id, text: '', total_bytes: 0, truncated: false, next_cursor: 0 };
    throw err;
  }
  try {
    const { size } = await handle.stat();
    const from = options.cursor === undefined ? Math.max(0, size - options.maxBytes) : Math.min(options.cursor, size);
    const length = Math.min(options.maxBytes, size - from);
    const buffer = Buffer.alloc(length);
    await handle.read(buffer, 0, length, from);
    return { task_id: id, text: buffer.toString('utf8'), total_bytes: size, truncated: options.cursor === undefined ? from > 0 : from + length < size, next_cursor: from + length };
  } finally {
    await handle.close();
  }
}

/**
 * The task id a person meant: `given` itself when a task has that id, else the one task whose id begins with it.
 * A prefix of several is a RequestError ('ambiguous_id') listing them; a prefix of none is returned unchanged, so the
 * caller's own "Unknown task" names what was typed.
 */
export async function resolveTaskIdPrefix(root: string, given: string): Promise<string> {
  if (!isSafeId(given)) return given;
  const match = matchTaskIdPrefix(await new TaskStore(root).ids(), given);
  if (match.kind === 'ambiguous') throw new RequestError(ambiguousIdMessage(given, match.candidates), 'ambiguous_id');
  return match.kind === 'none' ? given : match.id;
}

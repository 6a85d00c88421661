import { isPidAlive } from '../../base/process';
import { existsSync } from 'node:fs';
import { realpath } from 'node:fs/promises';
import * as path from 'node:path';
import { taskPaths } from '../../protocol';
import { readJsonFile } from '../store/atomic';
import { writeJsonAtomic } from '../../base/atomic';
import { gitText, gitToplevel, runGit } from './git';
import { worktreeDiff, type DiffResult } from './reconcile';
import { AppliedDocSchema, type AppliedDoc } from '../../protocol';
import { ACTIVE_STATUSES, type DiscardedDoc, type TaskState } from '../../protocol';
import { removeWorktree } from './worktree';
import { partialDigest, tooLargeNote } from './large-files';

export const APPLIED_FILE = 'applied.json';
export const DISCARDED_FILE = 'discarded.json';

export function appliedPath(root: string, id: string): string {
  return path.join(taskPaths(root, id).dir, APPLIED_FILE);
}

export function discardedPath(root: string, id: string): string {
  return path.join(taskPaths(root, id).dir, DISCARDED_FILE);
}

export async function readApplied(root: string, id: string): Promise<AppliedDoc | undefined> {
  return readJsonFile(appliedPath(root, id), AppliedDocSchema);
}

export type { DiscardedDoc } from '../../protocol';

/** Why nothing was applied. `already_applied` is no failure: the work is in the workspace already. */
export type ApplyFailure = 'no_worktree' | 'worktree_missing' | 'active' | 'conflicts' | 'already_applied' | 'too_large';

export interface ApplyOutcome {
  applied: boolean;
  /** True when the task changed nothing: "applied" trivially, nothing recorded. */
  empty?: boolean;
  /** Repository-relative paths applied (or that would have been, on failure). */
  files: string[];
  /** Files whose part of the patch does not apply to the workspace as it is now. Nothing was written. */
  conflicts: string[];
  reason?: ApplyFailure;
  message: string;
  applied_at?: string;
  patch_digest?: string;
}

/** A task is active while pending/running with a supervisor that may still be alive (no pid proves nothing). */
export function isTaskActive(state: Pick<TaskState, 'status' | 'supervisor_pid'>): boolean {
  if (!ACTIVE_STATUSES.includes(state.status)) return false;
  return state.supervisor_pid === undefined || isPidAlive(state.supervisor_pid);
}


/**
 * Applies a worktree task's diff to the user's workspace, ALL OR NOTHING:
 *  - the diff is recomputed against base_ref (what the user reviews is what gets applied), `--binary` included;
 *  - it is applied from the git TOPLEVEL of the workspace, so files outside a caesar root that is a subfolder of the
 *    repository are not silently skipped (reference §8.4);
 *  - `git apply --check` runs first; on any conflict nothing is written and the conflicting files are named (§8.5);
 *  - then a plain `git apply` touches only the working tree: the user's index stays as it was and their uncommitted
 *    edits to other files are untouched. `--3way` is deliberately not used: it stages into the user's index and
 *    leaves conflict markers, which is exactly the partial apply we refuse.
 */
export async function applyTask(options: { root: string; state: TaskState; files?: string[] }): Promise<ApplyOutcome> {
  const { root, state } = options;
  if (!state.worktree || !state.base_ref) {
    return { applied: false, reason: 'no_worktree', files: [], conflicts: [], message: `Task ${state.id} did not run in a worktree: its changes are already in the workspace; there is nothing to apply.` };
  }
  const earlier = await readApplied(root, state.id).catch(() => undefined);
  if (!existsSync(state.worktree)) {
    if (earlier) return alreadyApplied(state, earlier, { worktreeGone: true });
    return { applied: false, reason: 'worktree_missing', files: [], conflicts: [], message: `The worktree of task ${state.id} (${state.worktree}) no longer exists (discarded or collected); there is nothing to apply.` };
  }
  if (isTaskActive(state)) {
    // The agent is still writing: a diff taken now is a moving snapshot, not the result the user reviews.
    return { applied: false, reason: 'active', files: [], conflicts: [], message: `Task ${state.id} is still ${state.status}; wait for it to finish (or cancel it) before applying.` };
  }
  const target = await applyTarget(state);
  let diff = await worktreeDiff(state.worktree, state.base_ref, state.excluded_paths, options.files?.length ? { only: options.files } : {});
  if (diff.is_empty) {
    return { applied: true, empty: true, files: [], conflicts: [], message: `Task ${state.id} changed nothing; there is nothing to apply.` };
  }
  if (earlier) {
    // Applied before: only files not applied then are left (a first apply may have been limited with --files).
    const before = new Set(earlier.files);
    const remaining = diff.files.filter((f) => !before.has(f.path)).map((f) => f.path);
    if (remaining.length === 0) {
      // Still applicable means the user reverted those changes since: applying them again is what they ask for.
      if ((await gitApply(target, diff.patch_bytes, ['--check'])).code !== 0) return alreadyApplied(state, earlier);
    } else if (remaining.length < diff.files.length) {
      diff = await worktreeDiff(state.worktree, state.base_ref, state.excluded_paths, { only: remaining });
    }
  }
  // Files too large for a patch are listed in the diff but not in its patch (large-files.ts): left for the user.
  const tooLarge = diff.files.filter((f) => f.too_large);
  if (tooLarge.length) {
    // patch_bytes is not enumerable (kept out of JSON): carried over by hand.
    diff = Object.defineProperty({ ...diff, files: diff.files.filter((f) => !f.too_large) }, 'patch_bytes', { value: diff.patch_bytes, enumerable: false });
  }
  const files = diff.files.map((f) => f.path);
  if (files.length === 0) {
    return { applied: false, reason: 'too_large', files: [], conflicts: [], message: `Nothing was applied: ${tooLargeNote(tooLarge, state.worktree)}` };
  }

  const check = await gitApply(target, diff.patch_bytes, ['--check']);
  if (check.code !== 0) {
    const conflicts = await conflictingFiles(target, diff);
    return {
      applied: false,
      reason: 'conflicts',
      files,
      conflicts: conflicts.map((c) => c.path),
      message: `Nothing was applied: ${conflicts.map((c) => `${c.path} (${c.why})`).join('; ')}. Resolve these files in your workspace (or apply a subset with --files) and retry.`,
    };
  }
  const applied = await gitApply(target, diff.patch_bytes, []);
  if (applied.code !== 0) {
    // The check passed a moment ago: the workspace changed in between. git apply writes nothing when it fails.
    return { applied: false, reason: 'conflicts', files, conflicts: files, message: `Nothing was applied: the workspace changed during apply (${firstError(applied.stderr)}). Retry.` };
  }
  const allApplied = [...new Set([...(earlier?.files ?? []), ...files])];
  // Once every file of the task is in, the record carries the whole diff's digest: gc knows it may collect the worktree.
  const whole = options.files?.length || earlier ? await worktreeDiff(state.worktree, state.base_ref, state.excluded_paths) : diff;
  const complete = whole.files.every((f) => allApplied.includes(f.path));
  const digest = complete ? whole.patch_digest : diff.patch_digest;
  const record: AppliedDoc = { applied_at: new Date().toISOString(), patch_digest: tooLarge.length ? partialDigest(digest) : digest, files: allApplied };
  await writeJsonAtomic(appliedPath(root, state.id), record);
  const note = tooLarge.length ? ` ${tooLargeNote(tooLarge, state.worktree)}` : '';
  return { applied: true, files, conflicts: [], message: `Applied ${files.length} file(s) to ${target}.${note}`, applied_at: record.applied_at, patch_digest: record.patch_digest };
}

function alreadyApplied(state: TaskState, earlier: AppliedDoc, options: { worktreeGone?: boolean } = {}): ApplyOutcome {
  return {
    applied: false,
    reason: 'already_applied',
    files: earlier.files,
    conflicts: [],
    applied_at: earlier.applied_at,
    patch_digest: earlier.patch_digest,
    message:
      `Task ${state.id} was already applied (${earlier.applied_at}, ${earlier.files.length} file(s)): its changes are in your workspace, ` +
      `nothing is left to apply.${options.worktreeGone ? '' : ` Remove its worktree and branch with \`caesar discard ${state.id}\`.`}`,
  };
}

/** The toplevel of the user's workspace, after checking it is the repository the worktree belongs to. */
async function applyTarget(state: TaskState): Promise<string> {
  const worktree = state.worktree as string;
  const target = await gitToplevel(state.workspace);
  if (!target) throw new Error(`Cannot apply task ${state.id}: its workspace ${state.workspace} is no longer inside a git repository.`);
  const [mine, theirs] = await Promise.all([commonDir(target), commonDir(worktree)]);
  if (mine !== theirs) {
    throw new Error(`Cannot apply task ${state.id}: its worktree belongs to ${theirs}, but the workspace ${state.workspace} is in ${mine}.`);
  }
  return target;
}

async function commonDir(dir: string): Promise<string> {
  const common = await gitText(['rev-parse', '--git-common-dir'], dir);
  return realpath(path.resolve(dir, common));
}

function gitApply(cwd: string, patch: Buffer, flags: string[]) {
  // --whitespace=nowarn: a user's apply.whitespace=error must not reject the agent's trailing spaces.
  return runGit(['apply', '--whitespace=nowarn', ...flags, '-'], { cwd, input: patch, okCodes: [0, 1, 128] });
}

/**
 * Names the files whose part of the patch does not apply, by checking each file's section on its own. The patch's
 * sections come in the same order as the diff's file list (one `diff --git` header per file).
 */
async function conflictingFiles(cwd: string, diff: DiffResult): Promise<{ path: string; why: string }[]> {
  const sections = splitPatch(diff.patch_bytes);
  if (sections.length !== diff.files.length) {
    const check = await gitApply(cwd, diff.patch_bytes, ['--check']);
    return diff.files.map((f) => ({ path: f.path, why: firstError(check.stderr) }));
  }
  const conflicts: { path: string; why: string }[] = [];
  for (const [index, section] of sections.entries()) {
    const check = await gitApply(cwd, section, ['--check']);
    if (check.code !== 0) conflicts.push({ path: (diff.files[index] as { path: string }).path, why: firstError(check.stderr) });
  }
  if (conflicts.length === 0) {
    // Each file applies alone but not together (should not happen with one section per file): name them all.
    return diff.files.map((f) => ({ path: f.path, why: 'the patch does not apply as a whole' }));
  }
  return conflicts;
}

const SECTION_HEADER = Buffer.from('\ndiff --git ');

/**
 * Splits a patch at its `diff --git` headers. Safe on --binary patches: hunk lines start with ' ', '+', '-' or '\',
 * and base85 lines cannot contain the space of "diff --git ".
 */
export function splitPatch(patch: Buffer): Buffer[] {
  const starts: number[] = [];
  if (patch.subarray(0, SECTION_HEADER.length - 1).equals(SECTION_HEADER.subarray(1))) starts.push(0);
  for (let at = patch.indexOf(SECTION_HEADER); at !== -1; at = patch.indexOf(SECTION_HEADER, at + 1)) starts.push(at + 1);
  return starts.map((start, i) => patch.subarray(start, starts[i + 1] ?? patch.length));
}

function firstError(stderr: string): string {
  const line = stderr.split('\n').find((l) => l.startsWith('error:')) ?? stderr.split('\n').find((l) => l.trim() !== '') ?? 'does not apply';
  return line.replace(/^error:\s*/, '').trim();
}

export interface DiscardOutcome {
  discarded: boolean;
  reason?: 'no_worktree';
  message: string;
}

/** Removes the task's worktree and branch (never the workspace) and records `<taskDir>/discarded.json`. */
export async function discardTask(options: { root: string; state: TaskState }): Promise<DiscardOutcome> {
  const { root, state } = options;
  if (!state.worktree) {
    return { discarded: false, reason: 'no_worktree', message: `Task ${state.id} did not run in a worktree: there is nothing to discard (in-place changes are yours to revert).` };
  }
  if (isTaskActive(state)) {
    throw new Error(`Task ${state.id} is still ${state.status}; cancel it before discarding its worktree.`);
  }
  const gitRoot = path.resolve(state.worktree, '..', '..', '..');
  await removeWorktree({ gitRoot, path: state.worktree, ...(state.branch ? { branch: state.branch } : {}) });
  const record: DiscardedDoc = { discarded_at: new Date().toISOString(), worktree: state.worktree, ...(state.branch ? { branch: state.branch } : {}), by: 'discard' };
  await writeJsonAtomic(discardedPath(root, state.id), record);
  return { discarded: true, message: `Discarded the worktree ${state.worktree}${state.branch ? ` and branch ${state.branch}` : ''}.` };
}

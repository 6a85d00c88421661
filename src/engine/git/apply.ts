import { isPidAlive } from '../../base/process';
import { plural } from '../../common/format';
import { existsSync } from 'node:fs';
import { realpath } from 'node:fs/promises';
import * as path from 'node:path';
import { taskPaths } from '../../protocol';
import { readJsonFile } from '../store/atomic';
import { unverifiedTaskRecords } from '../store/sealed-read';
import { taskDiffSource } from './worktree-seal';
import { writeJsonAtomic } from '../../base/atomic';
import { gitText, gitToplevel, runGit } from './git';
import type { DiffResult } from './reconcile';
import { AppliedDocSchema, MAX_BYTES, ResultDocSchema, type AppliedDoc } from '../../protocol';
import { ACTIVE_STATUSES, type DiscardedDoc, type TaskState } from '../../protocol';
import { removeWorktree } from './worktree';
import { partialDigest, tooLargeNote } from './large-files';
import { ApplyBusyError, acquireApplyLock, type ApplyLock } from './apply-lock';
import { crashNow, testCrashDelay, testCrashPoint } from './apply-crash-hook';
import { ApplyRefusedError, prepareApplyJournal, type ApplyJournal } from './apply-journal';
import { recoverLocked, type RecoveryReport } from './apply-recovery';
import { bareLayoutReasons, bareRepositoryLayouts } from './bare-layout';

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
export type ApplyFailure =
  | 'no_worktree'
  | 'worktree_missing'
  | 'active'
  | 'conflicts'
  | 'already_applied'
  /** Every changed file is too large for a patch: nothing to apply, the files stay in the worktree. */
  | 'too_large'
  /** Another apply holds the checkout's apply lock (longer than we wait). */
  | 'busy'
  /** Writing failed (disk full...): nothing was applied, whatever had been touched was restored. */
  | 'write_failed'
  /** A path the change needs is not one the apply takes on as the checkout is now (a folder it replaces, a symlinked folder on the way): nothing was written. */
  | 'unsupported_change'
  /** An interrupted apply could not be finished or rolled back yet; its journal stays. */
  | 'interrupted'
  /** The shared git dir changed during the task (result.json's repository_changes) and the user has not accepted it. */
  | 'repository_changed'
  /** state.json, result.json or applied.json is not Caesar's record (record-seal.ts): nothing is applied on its word. */
  | 'unverified_records';

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
  /** An interrupted earlier apply this call finished or rolled back first. */
  recovered?: RecoveryReport;
  /** With reason `repository_changed`: what changed in the shared git dir during the task. */
  repository_changes?: string[];
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
 *    leaves conflict markers, which is exactly the partial apply we refuse;
 *  - one apply at a time per checkout (apply-lock.ts), and the write is a transaction (apply-journal.ts): a kill, a
 *    power loss or a full disk leaves the checkout as before or as applied, never half-way, and an interrupted
 *    earlier apply is finished or rolled back first (`recovered` says which).
 */
export async function applyTask(options: { root: string; state: TaskState; files?: string[]; acceptRepositoryChanges?: boolean }): Promise<ApplyOutcome> {
  const { root, state } = options;
  const unverified = await unverifiedTaskRecords(root, state.id);
  if (unverified.length) {
    return { applied: false, reason: 'unverified_records', files: [], conflicts: [], message: `Nothing was applied: the records of task ${state.id} are not Caesar's, so what they say cannot be trusted. ${unverified.join('; ')}.` };
  }
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
  const changed = options.acceptRepositoryChanges ? undefined : await unacceptedRepositoryChanges(root, state.id);
  if (changed) return repositoryChangedRefusal(state.id, changed);
  const target = await applyTarget(state);
  // One apply at a time per checkout: a second one waits, then checks against what the first one left.
  let lock: ApplyLock;
  try {
    lock = await acquireApplyLock(target, state.id, APPLY_LOCK_WAIT_MS);
  } catch (error) {
    if (!(error instanceof ApplyBusyError)) throw error;
    return { applied: false, reason: 'busy', files: [], conflicts: [], message: `Nothing was applied: ${error.message} Retry when it is done.` };
  }
  try {
    const recovered = await recoverLocked(target);
    if (recovered?.action === 'failed') {
      return { applied: false, reason: 'interrupted', files: [], conflicts: [], message: `Nothing was applied: ${recovered.message}` };
    }
    const outcome = await applyLocked(root, state, target, options.files, options.acceptRepositoryChanges === true);
    return recovered ? { ...outcome, recovered, message: `${recovered.message}\n${outcome.message}` } : outcome;
  } finally {
    await lock.release();
  }
}

/**
 * What the task's result says changed in the shared git dir (repository-watch.ts), when anything did. A result that
 * cannot be read is no excuse to apply blind: it is reported as a change the user must accept too.
 */
export async function unacceptedRepositoryChanges(root: string, id: string): Promise<string[] | undefined> {
  let result;
  try {
    result = await readJsonFile(taskPaths(root, id).result, ResultDocSchema, MAX_BYTES.result);
  } catch (error) {
    return [`the task's result.json could not be read (${errorText(error)}), so the repository's changes are unknown`];
  }
  const changes = result?.repository_changes ?? [];
  return changes.length ? changes : undefined;
}

export function repositoryChangedRefusal(id: string, changes: string[]): ApplyOutcome {
  return {
    applied: false,
    reason: 'repository_changed',
    files: [],
    conflicts: [],
    repository_changes: changes,
    message:
      `Nothing was applied: task ${id} left what git could run unchecked or changed (the repository's shared git dir, or planted repositories):\n${changes.map((c) => `  - ${c}`).join('\n')}\n` +
      `Check these (a planted hook or config runs in your own git commands). To apply anyway: caesar apply ${id} --accept-repository-changes`,
  };
}

/** How long a second apply waits for the first one in the same checkout before refusing (a 50,000-file apply fits). */
export const APPLY_LOCK_WAIT_MS = 120_000;

async function applyLocked(root: string, state: TaskState, target: string, only: string[] | undefined, accepted: boolean): Promise<ApplyOutcome> {
  const worktree = state.worktree as string;
  // Read under the lock: a concurrent apply or a recovery may just have written it.
  const earlier = await readApplied(root, state.id).catch(() => undefined);
  // The task's work as it concluded (worktree-seal.ts), not what another writer left in its worktree since.
  const source = await taskDiffSource(root, state);
  let diff = await source.diff(only?.length ? { only } : {});
  if (diff.is_empty) {
    return { applied: true, empty: true, files: [], conflicts: [], message: `Task ${state.id} changed nothing; there is nothing to apply.` };
  }
  // Checked on the files as they are now, whatever the conclusion said: a HEAD git would take for a repository's.
  const layouts = accepted ? [] : await bareRepositoryLayouts(worktree, diff.files);
  if (layouts.length) return repositoryChangedRefusal(state.id, bareLayoutReasons(layouts));
  if (earlier) {
    // Applied before: only files not applied then are left (a first apply may have been limited with --files).
    const before = new Set(earlier.files);
    const remaining = diff.files.filter((f) => !before.has(f.path)).map((f) => f.path);
    if (remaining.length === 0) {
      // Still applicable means the user reverted those changes since: applying them again is what they ask for.
      if ((await gitApply(target, diff.patch_bytes, ['--check'])).code !== 0) return alreadyApplied(state, earlier);
    } else if (remaining.length < diff.files.length) {
      diff = await source.diff({ only: remaining });
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
    return { applied: false, reason: 'too_large', files: [], conflicts: [], message: `Nothing was applied: ${tooLargeNote(tooLarge, worktree)}` };
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
  const allApplied = [...new Set([...(earlier?.files ?? []), ...files])];
  // Once every file of the task is in, the record carries the whole diff's digest: gc knows it may collect the worktree.
  const whole = only?.length || earlier ? await source.diff() : diff;
  const complete = whole.files.every((f) => allApplied.includes(f.path));
  const digest = complete ? whole.patch_digest : diff.patch_digest;
  const record: AppliedDoc = { applied_at: new Date().toISOString(), patch_digest: tooLarge.length ? partialDigest(digest) : digest, files: allApplied };
  const touched = diff.files.flatMap((f) => (f.old_path ? [f.path, f.old_path] : [f.path]));
  const note = `${tooLarge.length ? ` ${tooLargeNote(tooLarge, worktree)}` : ''}${source.note}`;
  return writeTransaction({ root, state, target, patch: diff.patch_bytes, touched, files, record, note });
}

/**
 * The journaled write (apply-journal.ts): the touched files are copied aside before git writes anything, so every
 * failure from here on either touched nothing or is rolled back, and the message says which.
 */
export async function writeTransaction(tx: {
  root: string;
  state: TaskState;
  target: string;
  patch: Buffer;
  touched: string[];
  files: string[];
  record: AppliedDoc;
  /** Said after "Applied …": what was left out (files too large for a patch). */
  note: string;
}): Promise<ApplyOutcome> {
  const { state, target, files, record } = tx;
  const refused = (reason: ApplyFailure, message: string): ApplyOutcome => ({ applied: false, reason, files, conflicts: reason === 'conflicts' ? files : [], message });
  let journal: ApplyJournal;
  try {
    journal = await prepareApplyJournal({ checkout: target, taskRoot: tx.root, taskId: state.id, paths: tx.touched, patch: tx.patch, record });
  } catch (error) {
    if (error instanceof ApplyRefusedError) return refused('unsupported_change', `Nothing was applied: ${error.message} Your workspace was not touched.`);
    return refused('write_failed', `Nothing was applied: the copy of the files it would change could not be written (${errorText(error)}). Your workspace was not touched. Free some disk space and retry.`);
  }
  testCrashPoint('prepared');
  let failure: string | undefined;
  try {
    const applied = await gitApplyFile(target, journal.patchFile);
    if (applied.code !== 0) failure = `git apply failed: ${firstError(applied.stderr)}`;
  } catch (error) {
    failure = errorText(error);
  }
  if (failure === undefined) {
    testCrashPoint('applied');
    try {
      await journal.markWritten();
      testCrashPoint('written');
      await journal.commit();
      return { applied: true, files, conflicts: [], message: `Applied ${plural(files.length, 'file')} to ${target}.${tx.note}`, applied_at: record.applied_at, patch_digest: record.patch_digest };
    } catch (error) {
      failure = `recording the apply failed: ${errorText(error)}`;
    }
  }
  try {
    await journal.rollback();
  } catch (error) {
    return refused('interrupted', `The apply failed (${failure}) and could not be rolled back yet (${errorText(error)}): the journal in ${journal.dir} keeps the files as they were; the next caesar command restores them.`);
  }
  return refused('write_failed', `Nothing was applied: ${failure}. Every file it had touched was restored as it was. Retry (free some disk space first if it is full).`);
}

function errorText(error: unknown): string {
  const err = error as NodeJS.ErrnoException;
  return err?.code && !String(err.message).includes(err.code) ? `${err.code}: ${err.message}` : String(err?.message ?? err);
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
      `Task ${state.id} was already applied (${earlier.applied_at}, ${plural(earlier.files.length, 'file')}): its changes are in your workspace, ` +
      `nothing is left to apply.${options.worktreeGone ? '' : ` Remove its worktree and branch with \`caesar discard ${state.id}\`.`}`,
  };
}

/** The toplevel of the user's workspace, after checking it is the repository the worktree belongs to. */
export async function applyTarget(state: TaskState): Promise<string> {
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

/** git apply of the journal's copy of the patch, crashing mid-write when the test hook asks (`git:<ms>`). */
async function gitApplyFile(cwd: string, patchFile: string) {
  const crash = testCrashDelay('git-write');
  const timer = crash ? setTimeout(() => crashNow(crash.self), crash.ms) : undefined;
  try {
    return await runGit(['apply', '--whitespace=nowarn', patchFile], { cwd, okCodes: [0, 1, 128] });
  } finally {
    if (timer) clearTimeout(timer);
  }
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

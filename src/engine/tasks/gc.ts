import { existsSync } from 'node:fs';
import { readdir, realpath } from 'node:fs/promises';
import * as path from 'node:path';
import { AppliedDocSchema, TaskStateSchema, isSafeId, tasksDir, worktreesDir, TASK_FILES, type TaskState } from '../../protocol';
import { readVerifiedJsonFile } from '../store/sealed-read';
import { writeJsonAtomic } from '../../base/atomic';
import { appliedPath, discardedPath, isTaskActive, type DiscardedDoc } from '../git/apply';
import { gitText, gitToplevel, runGit } from '../git/git';
import { worktreeDiff } from '../git/reconcile';
import { listWorktrees, removeWorktree, worktreeOwnerRoot, type ListedWorktree } from '../git/worktree';
import { isPoolEntry } from '../git/worktree-pool';
import { recoverInterruptedApply } from '../git/apply-recovery';
import { dropStalePins } from '../git/repository-watch';

export type GcAction = 'removed' | 'kept' | 'would_remove';
export type GcReason = 'clean' | 'applied' | 'modified' | 'active' | 'inspection_failed' | 'not_in_checkout';

export interface GcEntry {
  id: string;
  path: string;
  branch?: string;
  orphan: boolean;
  status?: TaskState['status'];
  applied_at?: string;
  action: GcAction;
  reason: GcReason;
  error?: string;
}

export interface GcResult {
  dry_run: boolean;
  force: boolean;
  removed: number;
  would_remove: number;
  kept: number;
  entries: GcEntry[];
}

interface Candidate {
  id: string;
  /** The caesar root whose task owns the worktree (this root, or another root of the same repository). */
  taskRoot: string;
  path: string;
  branch?: string;
  orphan: boolean;
  state?: TaskState;
  /** Why the candidate cannot be judged (unreadable state.json). */
  unreadable?: string;
}

type Verdict = { reason: GcReason; removable: boolean; applied_at?: string; error?: string };

/**
 * Collects task worktrees that hold nothing worth keeping (reference §2.11, with §8.1 fixed):
 *  - "modified" is judged by the DIFF AGAINST base_ref, so work the agent committed but nobody applied is kept;
 *  - "applied" means applied.json's digest equals the recomputed patch digest (nothing changed since the apply);
 *  - active tasks (pending/running with a supervisor that may be alive) are never removed, not even with force;
 *  - orphans (folders/registrations under <gitRoot>/.caesar/wt that no task of this root records) are judged by
 *    their uncommitted changes and by commits reachable from no other ref;
 *  - dryRun writes nothing at all (the diff runs on a temporary index).
 */
export async function collectGarbage(options: { root: string; dryRun: boolean; force: boolean }): Promise<GcResult> {
  const { root, dryRun, force } = options;
  const result: GcResult = { dry_run: dryRun, force, removed: 0, would_remove: 0, kept: 0, entries: [] };
  const gitRoot = await gitToplevel(root);
  if (!gitRoot) return result;

  // An interrupted apply is finished or rolled back first: its record must be true before it is judged by.
  if (!dryRun) await recoverInterruptedApply(gitRoot);
  const listed = await listWorktrees(gitRoot);
  for (const candidate of await findCandidates(root, gitRoot, listed)) {
    const verdict = await judge(gitRoot, candidate, force);
    const entry: GcEntry = {
      id: candidate.id,
      path: candidate.path,
      ...(candidate.branch ? { branch: candidate.branch } : {}),
      orphan: candidate.orphan,
      ...(candidate.state ? { status: candidate.state.status } : {}),
      ...(verdict.applied_at ? { applied_at: verdict.applied_at } : {}),
      action: 'kept',
      reason: verdict.reason,
      ...(verdict.error ? { error: verdict.error } : {}),
    };
    if (verdict.removable) {
      if (dryRun) {
        entry.action = 'would_remove';
      } else {
        try {
          await removeWorktree({ gitRoot, path: candidate.path, ...(candidate.branch ? { branch: candidate.branch } : {}) });
          entry.action = 'removed';
          if (!candidate.orphan) await recordCollected(candidate, verdict.reason);
        } catch (error) {
          entry.reason = 'inspection_failed';
          entry.error = (error as Error).message;
        }
      }
    }
    result.entries.push(entry);
    if (entry.action === 'removed') result.removed++;
    else if (entry.action === 'would_remove') result.would_remove++;
    else result.kept++;
  }
  // base_ref pins whose worktree is gone: nothing diffs against them any more (repository-watch.ts).
  if (!dryRun) await dropStalePins(gitRoot).catch(() => undefined);
  return result;
}

async function findCandidates(root: string, gitRoot: string, listed: ListedWorktree[]): Promise<Candidate[]> {
  const container = worktreesDir(gitRoot);
  const realContainer = await realpathOr(container);
  const branchByPath = new Map<string, string | undefined>();
  for (const wt of listed) {
    const real = await realpathOr(wt.path);
    if (path.dirname(real) === realContainer) branchByPath.set(real, wt.branch);
  }

  const candidates: Candidate[] = [];
  const recorded = new Set<string>();
  for (const id of await listDirs(tasksDir(root))) {
    if (!isSafeId(id)) continue;
    let state: TaskState | undefined;
    let unreadable: string | undefined;
    try {
      // A state.json Caesar did not write is unreadable to gc: its worktree is judged by nothing it says, and kept.
      state = await readVerifiedJsonFile(path.join(tasksDir(root), id, TASK_FILES.state), 'state', TaskStateSchema);
      if (!state) continue; // a task dir without state.json is still being created
    } catch (error) {
      unreadable = (error as Error).message;
    }
    // Unreadable state: the worktree, if any, is at the conventional place; never treat it as an orphan.
    const wtPath = state?.worktree ?? (unreadable ? path.join(container, id) : undefined);
    if (!wtPath) continue;
    const real = await realpathOr(wtPath);
    if (!existsSync(real)) continue;
    recorded.add(real);
    // The registration's branch is the real one (reference §2.4.3); the recorded name is the fallback.
    const branch = branchByPath.get(real) ?? state?.branch;
    candidates.push({
      id,
      taskRoot: root,
      path: wtPath,
      orphan: false,
      ...(branch ? { branch } : {}),
      ...(state ? { state } : {}),
      ...(unreadable ? { unreadable } : {}),
    });
  }

  const orphanPaths = new Set<string>([...branchByPath.keys()]);
  for (const name of await listDirs(container)) orphanPaths.add(await realpathOr(path.join(container, name)));
  for (const real of orphanPaths) {
    // A registration whose folder is gone is not collectable work; removeWorktree's prune forgets it. Idle worktrees
    // of the warm pool (and its marker folder) belong to no task and are the pool's to bound, not orphans.
    if (recorded.has(real) || !existsSync(real) || isPoolEntry(path.basename(real))) continue;
    const id = path.basename(real);
    const branch = branchByPath.get(real);
    const base = { id, path: path.join(container, id), ...(branch ? { branch } : {}) };
    const owner = await ownedElsewhere(root, real, id);
    candidates.push(owner ? { ...base, ...owner, orphan: false } : { ...base, taskRoot: root, orphan: true });
  }
  return candidates.sort((a, b) => a.id.localeCompare(b.id) || a.path.localeCompare(b.path));
}

/**
 * A worktree created for a task of ANOTHER caesar root of the same repository (createWorktree's owner marker):
 * judged by that task's state, so an active task there is never taken for an orphan.
 */
async function ownedElsewhere(root: string, worktree: string, id: string): Promise<Pick<Candidate, 'taskRoot' | 'state' | 'unreadable'> | undefined> {
  const owner = await worktreeOwnerRoot(worktree);
  if (!owner || !isSafeId(id) || (await realpathOr(owner)) === (await realpathOr(root))) return undefined;
  const stateFile = path.join(tasksDir(owner), id, TASK_FILES.state);
  try {
    const state = await readVerifiedJsonFile(stateFile, 'state', TaskStateSchema);
    return state ? { taskRoot: owner, state } : undefined;
  } catch (error) {
    return { taskRoot: owner, unreadable: (error as Error).message };
  }
}

async function judge(gitRoot: string, candidate: Candidate, force: boolean): Promise<Verdict> {
  if (candidate.unreadable) return { reason: 'inspection_failed', removable: false, error: candidate.unreadable };
  const state = candidate.state;
  if (state && isTaskActive(state)) return { reason: 'active', removable: false };
  try {
    if (state?.base_ref) return await judgeRecorded(candidate.taskRoot, candidate.path, state, force);
    return await judgeOrphan(gitRoot, candidate, force);
  } catch (error) {
    return { reason: 'inspection_failed', removable: false, error: (error as Error).message };
  }
}

async function judgeRecorded(root: string, worktree: string, state: TaskState, force: boolean): Promise<Verdict> {
  const diff = await worktreeDiff(worktree, state.base_ref as string, state.excluded_paths);
  if (diff.is_empty) return { reason: 'clean', removable: true };
  // Only Caesar's own applied.json says the work is safe in the checkout (a forged one would have gc delete it).
  const applied = await readVerifiedJsonFile(appliedPath(root, state.id), 'applied', AppliedDocSchema).catch(() => undefined);
  if (applied && applied.patch_digest === diff.patch_digest) {
    // applied.json says so; the checkout must agree. A change another writer overwrote (or the user took back) is
    // not in the checkout any more, and the worktree is then its only copy: kept, unless --force.
    if (await changeIsInCheckout(state, diff.patch_bytes)) return { reason: 'applied', removable: true, applied_at: applied.applied_at };
    return { reason: 'not_in_checkout', removable: force, applied_at: applied.applied_at };
  }
  return { reason: 'modified', removable: force, ...(applied ? { applied_at: applied.applied_at } : {}) };
}

/** True when the task's patch can be taken back from the checkout as it is now, i.e. every line of it is there. */
async function changeIsInCheckout(state: TaskState, patch: Buffer): Promise<boolean> {
  const checkout = await gitToplevel(state.workspace);
  if (!checkout) return false;
  const check = await runGit(['apply', '--whitespace=nowarn', '--reverse', '--check', '-'], { cwd: checkout, input: patch, okCodes: [0, 1, 128] });
  return check.code === 0;
}

/**
 * Without a task record there is no base_ref. An orphan holds work when it has uncommitted changes or commits that
 * no other branch, tag, remote or the main HEAD reaches.
 */
async function judgeOrphan(gitRoot: string, candidate: Candidate, force: boolean): Promise<Verdict> {
  if (!(await isRegisteredWorktree(candidate.path))) {
    // A plain folder (half-created worktree): nothing git could lose; its files are judged by existence only.
    const entries = await readdir(candidate.path).catch(() => []);
    return entries.length === 0 ? { reason: 'clean', removable: true } : { reason: 'modified', removable: force };
  }
  const status = await runGit(['status', '--porcelain', '-z', '--untracked-files=normal'], {
    cwd: candidate.path,
    env: { GIT_OPTIONAL_LOCKS: '0' },
  });
  if (status.stdout.length > 0) return { reason: 'modified', removable: force };
  const head = await gitText(['rev-parse', '--verify', 'HEAD'], candidate.path);
  const others = await otherTips(gitRoot, candidate.branch);
  const unique = await gitText(['rev-list', '--count', head, '--not', ...others], gitRoot);
  return Number(unique) === 0 ? { reason: 'clean', removable: true } : { reason: 'modified', removable: force };
}

async function otherTips(gitRoot: string, ownBranch: string | undefined): Promise<string[]> {
  const refs = await gitText(['for-each-ref', '--format=%(objectname) %(refname)', 'refs/heads', 'refs/tags', 'refs/remotes'], gitRoot);
  const tips = refs
    .split('\n')
    .filter((line) => line && (!ownBranch || line.split(' ')[1] !== `refs/heads/${ownBranch}`))
    .map((line) => line.split(' ')[0] as string);
  const mainHead = await runGit(['rev-parse', '--verify', '--quiet', 'HEAD'], { cwd: gitRoot, okCodes: [0, 1] });
  if (mainHead.code === 0) tips.push(mainHead.stdout.toString('utf8').trim());
  return [...new Set(tips)];
}

async function isRegisteredWorktree(dir: string): Promise<boolean> {
  const probe = await runGit(['rev-parse', '--show-toplevel'], { cwd: dir, okCodes: [0, 128] });
  if (probe.code !== 0) return false;
  return (await realpathOr(probe.stdout.toString('utf8').trim())) === (await realpathOr(dir));
}

async function recordCollected(candidate: Candidate, reason: GcReason): Promise<void> {
  const record: DiscardedDoc = {
    discarded_at: new Date().toISOString(),
    worktree: candidate.path,
    ...(candidate.branch ? { branch: candidate.branch } : {}),
    by: 'gc',
    reason,
  };
  await writeJsonAtomic(discardedPath(candidate.taskRoot, candidate.id), record);
}

async function listDirs(dir: string): Promise<string[]> {
  try {
    const entries = await readdir(dir, { withFileTypes: true });
    return entries.filter((e) => e.isDirectory()).map((e) => e.name);
  } catch {
    return [];
  }
}

async function realpathOr(p: string): Promise<string> {
  try {
    return await realpath(p);
  } catch {
    return path.resolve(p);
  }
}

import * as path from 'node:path';
import { MAX_BYTES, ResultDocSchema, taskPaths, type TaskState } from '../../protocol';
import { readVerifiedJsonFile } from '../store/sealed-read';
import { excludePathspec, gitText, recheckedWorktreeRepo, runGit, verifiedWorktreeRepo, withTempIndex, worktreeGitArgs, type WorktreeRepo } from './git';
import { findTooLarge, parseListing } from './large-files';
import { normalizeExcluded } from './rel-path';
import { treeDiff, worktreeDiff, type DiffOptions, type DiffResult, type FileChange } from './reconcile';

/*
 * A worktree is a folder like any other: with the sandbox off, another task's agent can write into it, before or
 * after its own task concluded, and the line it wrote would be applied as this task's. The supervisor therefore seals
 * the worktree's state at the conclusion (result.json `worktree_tree`, a git tree), and apply applies the diff from
 * base_ref to that tree: what anyone writes into the worktree later is not this task's work, and is named, not
 * applied. (A write made while the task itself still ran is in its tree: only the sandbox, which keeps each agent in
 * its own worktree, stops that.) A task from before, or concluded by gc, has no sealed tree: its worktree is applied.
 */

/**
 * The worktree's whole state as a tree object (its new and changed files hashed into the repository's objects, in a
 * private copy of its index): what result.json seals at the task's conclusion, so that what apply applies is the
 * task's work as it concluded, not whatever the worktree holds later (taskDiffSource). Excluded paths and files too
 * large for a patch keep their base entries (no change), as in the diff.
 */
export async function worktreeTree(worktree: string, excluded: readonly string[], known?: WorktreeRepo): Promise<string> {
  const repo = known ? await recheckedWorktreeRepo(worktree, known) : await verifiedWorktreeRepo(worktree);
  const explicit = worktreeGitArgs(repo);
  const exclusions = normalizeExcluded(excluded).map(excludePathspec);
  const listing = await runGit([...explicit, 'ls-files', '--others', '--modified', '--exclude-standard', '-t', '-z', '--', ...exclusions], { cwd: repo.workTree, env: { GIT_OPTIONAL_LOCKS: '0' } });
  const tooLarge = await findTooLarge(repo.workTree, parseListing(listing.stdout));
  return withTempIndex(
    repo.workTree,
    async (env) => {
      await runGit([...explicit, 'add', '-A', '--', '.', ...exclusions, ...tooLarge.map((f) => excludePathspec(f.path))], { cwd: repo.workTree, env });
      return gitText([...explicit, 'write-tree'], repo.workTree, env);
    },
    path.join(repo.gitDir, 'index'),
  );
}

export interface TaskDiffSource {
  /** The task's diff (its sealed tree's, or the worktree's when none was sealed). */
  diff(options?: DiffOptions): Promise<DiffResult>;
  /** Said after "Applied …": how the worktree differs from what the task left, or why that was not known. */
  note: string;
}

/** What apply applies for a worktree task (state.worktree and base_ref set; its records already verified). */
export async function taskDiffSource(root: string, state: TaskState): Promise<TaskDiffSource> {
  const worktree = state.worktree as string;
  const baseRef = state.base_ref as string;
  const live: TaskDiffSource = { diff: (options = {}) => worktreeDiff(worktree, baseRef, state.excluded_paths, options), note: '' };
  const result = await readVerifiedJsonFile(taskPaths(root, state.id).result, 'result', ResultDocSchema, MAX_BYTES.result).catch(() => undefined);
  const sealed = result?.worktree_tree;
  if (!sealed) return live;
  const repo = await verifiedWorktreeRepo(worktree);
  const git = (args: string[], okCodes = [0]) => runGit([...worktreeGitArgs(repo), ...args], { cwd: repo.workTree, env: { GIT_OPTIONAL_LOCKS: '0' }, okCodes });
  if ((await git(['cat-file', '-e', `${sealed}^{tree}`], [0, 1, 128])).code !== 0) {
    return { ...live, note: ` The worktree as the task left it (tree ${sealed}) is no longer in the repository: its worktree as it is now was applied.` };
  }
  const now = await worktreeTree(worktree, state.excluded_paths).catch(() => undefined);
  const changed = now && now !== sealed ? (await git(['diff-tree', '-r', '--name-only', '-z', sealed, now])).stdout.toString('utf8').split('\0').filter(Boolean) : [];
  const shown = changed.length > 20 ? `${changed.slice(0, 20).join(', ')} and ${changed.length - 20} more` : changed.join(', ');
  const note = !now
    ? ' Whether the worktree changed since the task concluded could not be checked; the task\'s work as it concluded was applied.'
    : changed.length
      ? ` The worktree changed after the task concluded (${shown}): not the task's work, not applied (another task or process wrote into it).`
      : '';
  // The sealed tree keeps files too large for a patch at their base entries (they are never applied): they are listed
  // from the worktree, so that apply says they were left there instead of dropping them without a word.
  const tooLarge = async () => (await worktreeDiff(worktree, baseRef, state.excluded_paths, { patch: false })).files.filter((f) => f.too_large);
  return { diff: async (options = {}) => withTooLarge(await treeDiff(worktree, baseRef, sealed, state.excluded_paths, options), await tooLarge(), options), note };
}

/** `diff` with the task's too-large files listed again (those `options.only` names, when it names some). */
function withTooLarge(diff: DiffResult, tooLarge: readonly FileChange[], options: DiffOptions): DiffResult {
  const listed = options.only ? tooLarge.filter((f) => options.only!.includes(f.path)) : tooLarge;
  if (!listed.length) return diff;
  // patch_bytes is not enumerable (kept out of JSON): carried over by hand, as apply does.
  return Object.defineProperty({ ...diff, files: [...diff.files, ...listed], is_empty: false }, 'patch_bytes', { value: diff.patch_bytes, enumerable: false });
}

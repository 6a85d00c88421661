import * as path from 'node:path';
import { CAESAR_DIR } from '../../protocol';
import { excludePathspec, runGit, splitNul, verifiedWorktreeRepo, withTempIndex, worktreeGitArgs, type WorktreeRepo } from './git';
import { findTooLarge, parseListing } from './large-files';
import { normalizeExcluded } from './rel-path';

/*
 * What overlap detection (overlap.ts) asks of git, on worktrees an agent controls: the tree of a worktree as it is
 * now, the files that tree changed since the task's base, and whether two such states would merge. Nothing here
 * touches the worktree's index or files, or the user's checkout: the worktree is staged into a private copy of its
 * index (withTempIndex) and written as a tree; the merge is `git merge-tree --write-tree`, which writes objects only.
 * Every process goes through runGit (git-safety.ts: no hook, filter or merge driver the repository chose runs).
 */

/** A worktree's state as git objects: the tree of its files now, and the files that differ from its base. */
export interface WorktreeState {
  repo: WorktreeRepo;
  /** The repository's common git dir: two worktrees of one repository share it. */
  commonDir: string;
  tree: string;
  files: string[];
}

/** Read-only inspection: no opportunistic index refresh. */
const READ_ONLY = { GIT_OPTIONAL_LOCKS: '0' };

/** `.caesar/` at any depth, and the task's [worktree] copy/link paths: never part of a task's change. */
function exclusionsOf(excluded: readonly string[]): string[] {
  return [`:(exclude,glob,top)**/${CAESAR_DIR}/**`, ...normalizeExcluded(excluded).map(excludePathspec)];
}

/** The verified worktree and its common dir (named explicitly in every later call: no discovery in the agent's folder). */
export async function verifiedRepository(worktree: string): Promise<{ repo: WorktreeRepo; commonDir: string }> {
  const repo = await verifiedWorktreeRepo(worktree);
  // verifiedWorktreeRepo checked gitDir is `<common dir>/worktrees/<name>`.
  return { repo, commonDir: path.dirname(path.dirname(repo.gitDir)) };
}

/**
 * The worktree's files now as a tree object, and the files changed since `baseRef`. Huge files are left out (as in
 * every snapshot: `git add` would hash every byte of them), so are the exclusions.
 */
export async function worktreeState(worktree: string, baseRef: string, excluded: readonly string[]): Promise<WorktreeState> {
  const { repo, commonDir } = await verifiedRepository(worktree);
  const explicit = worktreeGitArgs(repo);
  const exclusions = exclusionsOf(excluded);
  const listing = await runGit([...explicit, 'ls-files', '--others', '--modified', '--exclude-standard', '-t', '-z', '--', ...exclusions], { cwd: repo.workTree, env: READ_ONLY });
  const tooLarge = (await findTooLarge(repo.workTree, parseListing(listing.stdout))).map((f) => excludePathspec(f.path));
  const tree = await withTempIndex(
    repo.workTree,
    async (env) => {
      await runGit([...explicit, 'add', '-A', '--', '.', ...exclusions, ...tooLarge], { cwd: repo.workTree, env });
      return (await runGit([...explicit, 'write-tree'], { cwd: repo.workTree, env })).stdout.toString('utf8').trim();
    },
    path.join(repo.gitDir, 'index'),
  );
  const files = await changedBetween(repo, baseRef, tree);
  return { repo, commonDir, tree, files };
}

/** Paths that differ between two tree-ishes (renames as a deletion and an addition: both paths count). */
export async function changedBetween(repo: WorktreeRepo, from: string, to: string): Promise<string[]> {
  const diff = await runGit([...worktreeGitArgs(repo), 'diff-tree', '-r', '--no-renames', '--name-only', '-z', '--end-of-options', from, to], { cwd: repo.workTree });
  return splitNul(diff.stdout);
}

/** A fixed identity and date: the same tree on the same base always gives the same commit (and the same cache key). */
const FIXED_IDENTITY = {
  GIT_AUTHOR_NAME: 'Caesar',
  GIT_AUTHOR_EMAIL: 'caesar@localhost',
  GIT_AUTHOR_DATE: '1970-01-01T00:00:00Z',
  GIT_COMMITTER_NAME: 'Caesar',
  GIT_COMMITTER_EMAIL: 'caesar@localhost',
  GIT_COMMITTER_DATE: '1970-01-01T00:00:00Z',
};

/**
 * A commit of `tree` on `base`: merge-tree (git 2.39) merges commits, not trees, and finds their merge base itself,
 * so two tasks started from different commits are compared from the right ancestor. Unreferenced: gc drops it.
 */
export async function stateCommit(repo: WorktreeRepo, tree: string, base: string): Promise<string> {
  const made = await runGit([...worktreeGitArgs(repo), 'commit-tree', '-p', base, '-m', 'caesar: overlap prediction', '--end-of-options', tree], {
    cwd: repo.workTree,
    env: FIXED_IDENTITY,
  });
  return made.stdout.toString('utf8').trim();
}

export interface MergePrediction {
  conflict: boolean;
  /** The files git could not merge (empty when it merges cleanly). */
  conflicts: string[];
}

/**
 * Many `git merge-tree --write-tree` merges in ONE process (`--stdin`, a pair of commits per line): per merge,
 * `<1 clean | 0 conflicts>\0<tree>\0<conflicted path>\0…\0`. It writes the merged trees' objects and nothing
 * else: no index, no working tree, no ref.
 */
export async function predictMerges(repo: WorktreeRepo, pairs: ReadonlyArray<readonly [string, string]>): Promise<MergePrediction[]> {
  if (pairs.length === 0) return [];
  const merged = await runGit([...worktreeGitArgs(repo), 'merge-tree', '--stdin', '--write-tree', '--name-only', '--no-messages', '-z'], {
    cwd: repo.workTree,
    input: pairs.map(([a, b]) => `${a} ${b}\n`).join(''),
  });
  const fields = splitNul(merged.stdout);
  const predictions: MergePrediction[] = [];
  let at = 0;
  while (predictions.length < pairs.length && at < fields.length) {
    const clean = fields[at] === '1';
    at += 2; // the status, then the merged tree's id
    const conflicts: string[] = [];
    while (at < fields.length && fields[at] !== '') conflicts.push(fields[at++] as string);
    at++; // the empty field that ends this merge
    predictions.push({ conflict: !clean, conflicts: [...new Set(conflicts)] });
  }
  if (predictions.length !== pairs.length) throw new Error(`git merge-tree answered ${predictions.length} of ${pairs.length} merges`);
  return predictions;
}

/** The blob id of each `<tree>:<path>` (undefined when the tree has no such file), in one `cat-file --batch-check`. */
export async function blobIds(repo: WorktreeRepo, specs: readonly string[]): Promise<Map<string, string | undefined>> {
  const ids = new Map<string, string | undefined>();
  if (specs.length === 0) return ids;
  const answer = await runGit([...worktreeGitArgs(repo), 'cat-file', '-z', '--batch-check=%(objectname) %(objecttype)'], {
    cwd: repo.workTree,
    input: specs.map((spec) => `${spec}\0`).join(''),
  });
  // One line per spec, in order: `<oid> <type>`, or `<spec> missing`.
  const lines = answer.stdout.toString('utf8').split('\n');
  specs.forEach((spec, i) => {
    const [oid, type] = (lines[i] ?? '').split(' ');
    ids.set(spec, type === 'blob' ? oid : undefined);
  });
  return ids;
}

import { existsSync } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import * as path from 'node:path';
import { NEUTRAL_CONFIG, gitText, runGit, splitNul, withTempIndex } from './git';

/*
 * Land's replay (issue 25): a task's change, made against its base_ref, is merged three-way onto what the checkout
 * holds now — entirely in git's object store. Nothing here writes the user's index, refs or files:
 *  - the task's result is a tree built in a private index (base_ref + the task's patch);
 *  - both sides become throwaway commits whose only parent is base_ref, so the merge base is exactly the commit the
 *    task started from, whatever the user's history did since (a reset, a rebase);
 *  - `git merge-tree --write-tree` merges them and names each conflicted file; the hunks are read from the conflict
 *    markers it wrote into the merged tree's blobs.
 * The checks run in a scratch worktree of the merged tree (scratchWorktree); only a clean, checked result reaches the
 * checkout, through the apply transaction (land-apply.ts).
 */

/** A fixed identity: a machine without a git identity can land too, and the throwaway commits say who made them. */
const LAND_IDENTITY = {
  GIT_AUTHOR_NAME: 'Caesar',
  GIT_AUTHOR_EMAIL: 'caesar@localhost',
  GIT_COMMITTER_NAME: 'Caesar',
  GIT_COMMITTER_EMAIL: 'caesar@localhost',
};

export interface ConflictHunk {
  /** 1-based lines of the conflict in the merged file (markers included). */
  start: number;
  end: number;
}

export interface ReplayConflict {
  /** Repository-relative, '/'-separated. */
  path: string;
  /** git's words for it: "CONFLICT (content): Merge conflict in a.txt", "CONFLICT (modify/delete): …". */
  messages: string[];
  /** Empty when the conflict has no markers (modify/delete, binary, a file against a folder). */
  hunks: ConflictHunk[];
}

export interface ReplayResult {
  /** The merged tree; with conflicts it holds git's conflict markers (what a follow-up starts from). */
  tree: string;
  conflicts: ReplayConflict[];
}

/** The tree of base_ref with the task's patch applied (a private index: no real index is touched). */
export async function taskResultTree(gitRoot: string, baseRef: string, patch: Buffer): Promise<string> {
  return withTempIndex(gitRoot, async (env) => {
    await runGit(['read-tree', baseRef], { cwd: gitRoot, env });
    if (patch.length) await runGit(['apply', '--cached', '--whitespace=nowarn', '-'], { cwd: gitRoot, env, input: patch });
    return gitText(['write-tree'], gitRoot, env);
  });
}

/** A commit object of `tree` (no ref points at it). */
export function throwawayCommit(gitRoot: string, tree: string, parent: string, message: string): Promise<string> {
  return gitText(['commit-tree', tree, '-p', parent, '-m', message], gitRoot, LAND_IDENTITY);
}

/**
 * Merge drivers the repository's own config defines (`merge.<name>.driver` in its config, config.worktree or what
 * they include). A three-way merge runs the driver a `.gitattributes` names — a command an agent could have planted
 * in the shared git dir. Filters can be switched back to the user's (git-safety.ts); a merge driver set to nothing
 * would silently keep one side, so land refuses instead and names it. The user's global and system drivers are theirs.
 */
export async function repositoryMergeDrivers(gitRoot: string): Promise<string[]> {
  const listed = await runGit(['config', '--show-scope', '--includes', '-z', '--get-regexp', '^merge\\..*\\.driver$'], { cwd: gitRoot, okCodes: [0, 1] });
  // With -z and --show-scope each entry is `<scope> NUL <key> LF <value> NUL`.
  const fields = splitNul(listed.stdout);
  const drivers: string[] = [];
  for (let i = 0; i + 1 < fields.length; i += 2) {
    const key = (fields[i + 1] as string).split('\n', 1)[0] as string;
    if (fields[i] === 'local' || fields[i] === 'worktree') drivers.push(key);
  }
  return drivers;
}

export function mergeDriverRefusal(drivers: readonly string[]): string {
  return `Nothing was landed: the repository's own config defines merge driver(s) ${drivers.join(', ')}, a command a three-way merge would run. Check it (an agent may have planted it in .git/config); remove it to land, or use caesar apply.`;
}

/** Merges `taskTree` onto `ontoTree`, both seen as changes from `baseRef`. */
export async function replayOnto(gitRoot: string, options: { baseRef: string; ontoTree: string; taskTree: string }): Promise<ReplayResult> {
  const drivers = await repositoryMergeDrivers(gitRoot);
  if (drivers.length) {
    throw new Error(mergeDriverRefusal(drivers));
  }
  const ours = await throwawayCommit(gitRoot, options.ontoTree, options.baseRef, 'caesar land: the checkout as it is');
  const theirs = await throwawayCommit(gitRoot, options.taskTree, options.baseRef, 'caesar land: the task');
  const merged = await runGit(['merge-tree', '--write-tree', '-z', '--name-only', '--no-messages', ours, theirs], { cwd: gitRoot, okCodes: [0, 1] });
  const fields = merged.stdout.toString('utf8').split('\0');
  const tree = fields[0] ?? '';
  if (!/^[0-9a-f]{40,64}$/.test(tree)) throw new Error(`git merge-tree gave no tree (${merged.stderr.trim() || 'no output'}).`);
  if (merged.code === 0) return { tree, conflicts: [] };
  const paths = [...new Set(fields.slice(1, fields.indexOf('', 1) === -1 ? undefined : fields.indexOf('', 1)))];
  const messages = await conflictMessages(gitRoot, ours, theirs);
  const conflicts: ReplayConflict[] = [];
  for (const file of paths) conflicts.push({ path: file, messages: messages.get(file) ?? [], hunks: await conflictHunks(gitRoot, tree, file) });
  return { tree, conflicts };
}

/** git's informational messages per path (a second, message-only run: the first keeps its output simple to parse). */
async function conflictMessages(gitRoot: string, ours: string, theirs: string): Promise<Map<string, string[]>> {
  const run = await runGit(['merge-tree', '--write-tree', '-z', '--name-only', ours, theirs], { cwd: gitRoot, okCodes: [0, 1] });
  const fields = run.stdout.toString('utf8').split('\0');
  const byPath = new Map<string, string[]>();
  // After the tree and the conflicted names comes an empty field, then records: <count> <path>… <type> <message>.
  let at = fields.indexOf('', 1) + 1;
  while (at > 0 && at < fields.length) {
    const count = Number(fields[at]);
    if (!Number.isInteger(count) || count < 1) break;
    const named = fields.slice(at + 1, at + 1 + count);
    const text = (fields[at + 2 + count] ?? '').trim();
    if (text.startsWith('CONFLICT')) for (const file of named) byPath.set(file, [...(byPath.get(file) ?? []), text]);
    at += count + 3;
  }
  return byPath;
}

/** The line ranges between git's `<<<<<<<` and `>>>>>>>` markers in the merged blob of `file`. */
async function conflictHunks(gitRoot: string, tree: string, file: string): Promise<ConflictHunk[]> {
  const blob = await runGit(['cat-file', '-p', `${tree}:${file}`], { cwd: gitRoot, okCodes: [0, 128], maxBytes: 64 * 1024 * 1024 });
  if (blob.code !== 0) return [];
  const hunks: ConflictHunk[] = [];
  let start: number | undefined;
  blob.stdout
    .toString('utf8')
    .split('\n')
    .forEach((line, index) => {
      if (line.startsWith('<<<<<<< ')) start = index + 1;
      else if (line.startsWith('>>>>>>> ') && start !== undefined) {
        hunks.push({ start, end: index + 1 });
        start = undefined;
      }
    });
  return hunks;
}

export interface TreeDiff {
  /** Repository-relative paths that differ (renames as a delete and an add: every touched path is named). */
  files: string[];
  patch: Buffer;
}

/** From one tree to another, as a binary-safe patch the checkout can take with `git apply`. */
export async function treeDiff(gitRoot: string, from: string, to: string): Promise<TreeDiff> {
  // NEUTRAL_CONFIG: the patch's form must not follow the user's diff settings (prefixes, quoting), or apply misreads it.
  const names = await runGit([...NEUTRAL_CONFIG, 'diff-tree', '-r', '--no-renames', '--name-only', '-z', from, to], { cwd: gitRoot });
  const patch = await runGit([...NEUTRAL_CONFIG, 'diff-tree', '-r', '-p', '--binary', '--full-index', '--no-renames', '--no-textconv', from, to], { cwd: gitRoot });
  return { files: splitNul(names.stdout), patch: patch.stdout };
}

/** Files that differ between the checkout's HEAD and its working tree, untracked ones included (`git status`). */
export async function dirtyFiles(checkout: string): Promise<Set<string>> {
  const status = await runGit(['status', '--porcelain=v1', '-z', '--untracked-files=all', '--no-renames'], { cwd: checkout, env: { GIT_OPTIONAL_LOCKS: '0' } });
  const dirty = new Set<string>();
  for (const entry of splitNul(status.stdout)) if (entry.length > 3) dirty.add(entry.slice(3));
  return dirty;
}

export interface ScratchWorktree {
  path: string;
  remove(): Promise<void>;
}

/**
 * A detached worktree of `commit` at `dir`, for the checks to run on the combined result. Removed (and pruned from
 * git's list) when done; one a crash leaves behind is removed by the next land in the same place.
 */
export async function scratchWorktree(gitRoot: string, dir: string, commit: string): Promise<ScratchWorktree> {
  await dropScratch(gitRoot, dir);
  await mkdir(path.dirname(dir), { recursive: true, mode: 0o700 });
  await runGit(['worktree', 'add', '--detach', '--quiet', dir, commit], { cwd: gitRoot });
  return { path: dir, remove: () => dropScratch(gitRoot, dir) };
}

async function dropScratch(gitRoot: string, dir: string): Promise<void> {
  if (existsSync(dir)) await runGit(['worktree', 'remove', '--force', '--force', dir], { cwd: gitRoot, okCodes: [0, 128] });
  await rm(dir, { recursive: true, force: true });
  await runGit(['worktree', 'prune'], { cwd: gitRoot, okCodes: [0, 128] });
}

import { existsSync, mkdirSync } from 'node:fs';
import { lstat, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import * as path from 'node:path';
import { CAESAR_DIR, assertSafeId, worktreesDir, type Finding } from '../../protocol';
import { GitError, gitText, gitdirOfDotGitFile, runGit, type WorktreeRepo } from './git';
import { recycleWorktree } from './worktree-pool';

export interface CreatedWorktree {
  path: string;
  branch: string;
  /** The commit the worktree started from, frozen: every later diff is taken against it, never against HEAD. */
  base_ref: string;
  /** Its folder and git dir as git registered them, read before any agent ran in it (see recheckedWorktreeRepo). */
  repo?: WorktreeRepo;
}

export function defaultBranch(id: string): string {
  return `caesar/${id}`;
}

export function worktreePath(gitRoot: string, id: string): string {
  assertSafeId(id, 'task id');
  return path.join(worktreesDir(gitRoot), id);
}

/**
 * `git worktree add -b caesar/<id> <gitRoot>/.caesar/wt/<id> HEAD`, run from the git root, then `rev-parse HEAD`
 * inside the new worktree: that SHA is base_ref. With `head` (HEAD's commit, just resolved by the caller) the
 * worktree is added at that commit and base_ref is it, without the `rev-parse`.
 *
 * For a plain branch name (isPlainBranchName) everything up to the spawn of `git worktree add` runs synchronously, so
 * a caller that starts other git work right after calling this does not delay the longest step of a task's start.
 */
export async function createWorktree(options: {
  gitRoot: string;
  id: string;
  branch?: string;
  root?: string;
  /** A commit to check out instead of HEAD (Continue with Feedback: a snapshot of an earlier task's worktree). */
  startPoint?: string;
  /** The commit diffs are taken against, when it is not the one checked out (default: the worktree's HEAD). */
  baseRef?: string;
  /** HEAD's full commit id as the caller resolved it (repoState): used instead of HEAD when there is no startPoint. */
  head?: string;
}): Promise<CreatedWorktree> {
  const { gitRoot, id } = options;
  const target = worktreePath(gitRoot, id);
  const branch = options.branch ?? defaultBranch(id);
  if (!isPlainBranchName(branch)) await assertValidBranch(gitRoot, branch);
  if (existsSync(target)) {
    throw new Error(`Cannot create the worktree: ${target} already exists. Remove it (caesar gc) or use another task id.`);
  }
  mkdirSync(path.dirname(target), { recursive: true });
  const atHead = options.startPoint === undefined && options.baseRef === undefined ? options.head : undefined;
  try {
    await runGit(['worktree', 'add', '-b', branch, target, options.startPoint ?? atHead ?? 'HEAD'], { cwd: gitRoot });
  } catch (error) {
    const stderr = error instanceof GitError ? error.stderr : String(error);
    if (/invalid reference: HEAD|not a valid object name|unknown revision/i.test(stderr)) {
      throw new Error(`Cannot create a worktree: the repository at ${gitRoot} has no commits yet. Remedy: git commit --allow-empty -m init`);
    }
    if (/already exists/i.test(stderr)) {
      throw new Error(`Cannot create the worktree: branch ${branch} already exists. Delete it (git branch -D ${branch}) or use another task id.`);
    }
    throw error;
  }
  const [base_ref, repo] = await Promise.all([
    atHead ?? gitText(['rev-parse', '--verify', `${options.baseRef ?? 'HEAD'}^{commit}`], target),
    registration(target),
  ]);
  if (options.root) await writeFile(path.join(repo.gitDir, OWNER_FILE), `${path.resolve(options.root)}\n`);
  return { path: target, branch, base_ref, repo };
}

/** A worktree git has just added: its folder and git dir, read from its `.git` file (no git process). */
async function registration(worktree: string): Promise<WorktreeRepo> {
  const [workTree, gitDir] = await Promise.all([realpath(worktree), adminDir(worktree).then((dir) => realpath(dir))]);
  return { workTree, gitDir };
}

/** Records the caesar root whose task owns the worktree (see OWNER_FILE). */
export async function recordWorktreeOwner(worktree: string, root: string): Promise<void> {
  await writeFile(path.join(await adminDir(worktree), OWNER_FILE), `${path.resolve(root)}\n`);
}

/**
 * `<git admin dir of the worktree>/caesar-root` names the caesar root whose task owns the worktree. It lives in
 * .git/worktrees/<id>/, outside the working tree, so it never shows in a diff. gc uses it so a worktree of another
 * caesar root in the same repository (a monorepo with several roots) is judged by its own task, never as an orphan.
 */
const OWNER_FILE = 'caesar-root';

/** The worktree's admin dir: from its `.git` file (`gitdir: <path>`, no git process), else by asking git. */
async function adminDir(worktree: string): Promise<string> {
  const gitdir = gitdirOfDotGitFile(await readFile(path.join(worktree, '.git'), 'utf8').catch(() => ''));
  return gitdir ? path.resolve(worktree, gitdir) : gitText(['rev-parse', '--absolute-git-dir'], worktree);
}

/** The caesar root recorded by createWorktree for this worktree, if any. */
export async function worktreeOwnerRoot(worktree: string): Promise<string | undefined> {
  try {
    const text = await readFile(path.join(await adminDir(worktree), OWNER_FILE), 'utf8');
    return text.trim() || undefined;
  } catch {
    return undefined;
  }
}

/**
 * `caesar/` and a name of letters, digits, `_` and `-` only: valid for `git check-ref-format --branch` by its rules
 * (no `.` at all, so no `..`, `.lock` or leading dot; no `@{`, space, control or `~^:?*[\` character; not `@`; not
 * starting with `-`), so the usual `caesar/t_<hex>` needs no git process. Anything else is asked of git.
 */
export function isPlainBranchName(branch: string): boolean {
  return /^caesar\/[A-Za-z0-9][A-Za-z0-9_-]*$/.test(branch);
}

async function assertValidBranch(cwd: string, branch: string): Promise<void> {
  const check = await runGit(['check-ref-format', '--branch', branch], { cwd, okCodes: [0, 1, 128] });
  if (check.code !== 0) throw new Error(`Invalid branch name ${JSON.stringify(branch)} for a worktree.`);
}

/**
 * `git worktree remove --force <path>` then `git branch -D <branch>`. git removes the tree with lstat semantics, so a
 * symlink inside the worktree (e.g. a linked node_modules) is unlinked, never followed into the workspace.
 * A folder under .caesar/wt that git does not know as a worktree (a half-created one) is deleted directly, which
 * also unlinks symlinks without following them.
 */
export async function removeWorktree(options: { gitRoot: string; path: string; branch?: string }): Promise<void> {
  const { gitRoot, branch } = options;
  const target = path.resolve(options.path);
  const container = worktreesDir(gitRoot);
  if (path.dirname(target) !== container) {
    throw new Error(`Refusing to remove ${target}: caesar worktrees live directly under ${container}.`);
  }
  // With a warm pool that has room, the worktree is cleaned and kept for a later task instead (worktree-pool.ts).
  if (existsSync(target) && !(await recycleWorktree({ gitRoot, path: target }))) {
    const removal = await runGit(['worktree', 'remove', '--force', target], { cwd: gitRoot, okCodes: [0, 128] });
    if (removal.code !== 0) {
      if (!/is not a working tree/i.test(removal.stderr)) throw new GitError(['worktree', 'remove', '--force', target], removal.code, removal.stderr, gitRoot);
      await rm(target, { recursive: true, force: true });
    }
  }
  // Forget registrations whose folder vanished (removed by hand), so the branch is no longer "checked out".
  await runGit(['worktree', 'prune'], { cwd: gitRoot });
  // The task's base_ref pin (repository-watch.ts) goes with its worktree: nothing diffs against that base any more.
  await runGit(['update-ref', '-d', `refs/caesar/base/${path.basename(target)}`], { cwd: gitRoot, okCodes: [0, 1] });
  if (branch) {
    const deletion = await runGit(['branch', '-D', branch], { cwd: gitRoot, okCodes: [0, 1] });
    if (deletion.code !== 0 && !/not found/i.test(deletion.stderr)) {
      throw new GitError(['branch', '-D', branch], deletion.code, deletion.stderr, gitRoot);
    }
  }
}

/**
 * Reference §2.3.9: a worktree folder that git does not ignore shows up as untracked in the user's repository.
 * Not a refusal: returns a low finding with the remedy, or undefined when the path is ignored.
 */
export async function worktreeIgnoreFinding(gitRoot: string, id: string): Promise<Finding | undefined> {
  const relative = `${CAESAR_DIR}/wt/${id}`;
  if (await caesarGitignoreHidesWorktrees(gitRoot)) return undefined;
  const check = await runGit(['check-ignore', '-q', '--no-index', relative], { cwd: gitRoot, okCodes: [0, 1] });
  if (check.code === 0) return undefined;
  return {
    severity: 'low',
    title: 'Worktrees not ignored by git',
    file: relative,
    detail: `${relative} is not ignored by git, so caesar worktrees appear as untracked files in your repository. Add "${CAESAR_DIR}/" to .gitignore (or .git/info/exclude).`,
  };
}

/**
 * The `.caesar/.gitignore` the first delegation writes holds a `wt/` line: with no negation in it, every worktree
 * folder is ignored whatever the user's own ignore files say (a deeper .gitignore wins over them, and nothing under
 * an ignored folder can be re-included), so git need not be asked at each task's start. Git reads neither a
 * .gitignore that is a symlink nor one inside a symlinked folder: both are asked of git.
 */
async function caesarGitignoreHidesWorktrees(gitRoot: string): Promise<boolean> {
  const folder = path.join(gitRoot, CAESAR_DIR);
  const file = path.join(folder, '.gitignore');
  const [folderStat, fileStat] = await Promise.all([lstat(folder).catch(() => undefined), lstat(file).catch(() => undefined)]);
  if (!folderStat?.isDirectory() || !fileStat?.isFile()) return false;
  const lines = (await readFile(file, 'utf8').catch(() => '')).split('\n');
  return lines.includes('wt/') && !lines.some((line) => line.startsWith('!'));
}

export interface ListedWorktree {
  path: string;
  head?: string;
  /** Short branch name (refs/heads/ stripped); absent when detached. */
  branch?: string;
  locked: boolean;
  prunable: boolean;
}

/** `git worktree list --porcelain -z`: the registered worktrees with their real branches (reference §2.4.3). */
export async function listWorktrees(gitRoot: string): Promise<ListedWorktree[]> {
  const result = await runGit(['worktree', 'list', '--porcelain', '-z'], { cwd: gitRoot });
  const worktrees: ListedWorktree[] = [];
  let current: ListedWorktree | undefined;
  for (const field of result.stdout.toString('utf8').split('\0')) {
    if (field === '') {
      if (current) worktrees.push(current);
      current = undefined;
      continue;
    }
    const space = field.indexOf(' ');
    const key = space === -1 ? field : field.slice(0, space);
    const value = space === -1 ? '' : field.slice(space + 1);
    if (key === 'worktree') current = { path: value, locked: false, prunable: false };
    else if (!current) continue;
    else if (key === 'HEAD') current.head = value;
    else if (key === 'branch') current.branch = value.replace(/^refs\/heads\//, '');
    else if (key === 'locked') current.locked = true;
    else if (key === 'prunable') current.prunable = true;
  }
  if (current) worktrees.push(current);
  return worktrees;
}

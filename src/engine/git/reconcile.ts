import { createHash } from 'node:crypto';
import * as path from 'node:path';
import type { Change, Finding, Mode, Report } from '../../protocol';
import { CAESAR_DIR } from '../../protocol';
import {
  NEUTRAL_CONFIG,
  excludePathspec,
  gitText,
  literalPathspec,
  recheckedWorktreeRepo,
  runGit,
  verifiedWorktreeRepo,
  withTempIndex,
  workTreePaths,
  worktreeGitArgs,
  type WorktreeRepo,
} from './git';
import { countsFromPatch, parseDiffOutput, withoutUnchanged } from './diff-parse';
import { isExcluded, normalizeExcluded, normalizeRelPath } from './rel-path';
import type { FileChangeRecord } from '../../protocol';
import { listWithMore, summarizePerFileFindings } from '../store/result-caps';
import type { IgnoredAtStart } from './ignored-writes';
import { changedSince, findTooLarge, parseListing, tooLargeChange, tooLargeInWorkTree, type TooLargeFile } from './large-files';

/** One file of a diff, paths relative to the repository root, unquoted (parsed from `-z` output). */
export type FileChange = FileChangeRecord;

export interface DiffResult {
  files: FileChange[];
  /** The full patch (`--binary`), decoded as UTF-8 for display. Apply uses patch_bytes, never this text. */
  patch: string;
  /** The exact patch bytes: text files in other encodings survive only as bytes. Non-enumerable (not in JSON). */
  patch_bytes: Buffer;
  /** sha256 hex of patch_bytes: what applied.json records and gc compares. */
  patch_digest: string;
  is_empty: boolean;
}

/** The full working-tree state of a repository at one moment, as a git tree object (reference §8.15 fixed). */
export interface Snapshot {
  gitRoot: string;
  tree: string;
  taken_at: string;
  /** The repository's index when the snapshot was taken: the comparison at the end copies it without asking git. */
  indexFile?: string;
  /** Files left out of the tree for their size (large-files.ts), with size and mtime: compared at the end. */
  too_large?: TooLargeFile[];
  /** Its ignored files at the start (ignored-writes.ts), or why they could not be recorded; absent when not asked. */
  ignored?: IgnoredAtStart | { error: string };
}

/** The work tree a snapshot is taken of, and its index (what `rev-parse --show-toplevel --git-path index` says). */
export interface SnapshotRepo {
  gitRoot: string;
  indexFile: string;
}

export interface DiffOptions {
  /** Restrict to these repository-relative paths (a rename is kept whole when either of its paths is named). */
  only?: readonly string[];
  /**
   * false: the files and their counts only, no patch (`patch` and `patch_digest` are '', `patch_bytes` empty), for
   * a caller that needs only the list. Default true.
   */
  patch?: boolean;
}

/**
 * Plumbing (`diff-index`), not `git diff`: the porcelain may refresh and rewrite the index it reads (the worktree's
 * own, on the fast path) and reads diff.* settings from the user's config. Renames are asked for explicitly.
 */
const DIFF_FLAGS = ['--no-color', '--no-ext-diff', '--no-textconv', '--find-renames', '--no-relative'];
const PATCH_FLAGS = ['-p', '--binary', '--full-index'];

/**
 * Diff of a worktree against its frozen base commit — NEVER HEAD, so an agent that commits (all, some or none of
 * its work) yields the same diff. Nothing is written in the worktree, and its index is never locked, so computing
 * a diff (caesar diff, gc --dry-run) cannot collide with an agent's own `git commit` on index.lock.
 *
 * One `git ls-files --others --modified` finds the untracked files (and the changed ones, whose sizes are checked
 * first: large-files.ts). Without any untracked file, one `git diff-index` (raw + numstat + patch
 * in a single pass) reads the worktree's index as is. With some, they are marked intent-to-add in a private copy
 * of the index first, so that git sees them as new files (with counts, binary detection and renames from deleted
 * tracked files), then the same single diff runs against that copy.
 */
export async function worktreeDiff(
  worktree: string,
  baseRef: string,
  excluded: readonly string[],
  options: DiffOptions = {},
  /** The worktree's repository as read at its creation (the supervisor knows it): checked without a git process. */
  known?: WorktreeRepo,
): Promise<DiffResult> {
  // Named explicitly, never discovered: an agent that removed the worktree's .git must not make us diff the checkout.
  const repo = known ?? (await verifiedWorktreeRepo(worktree));
  const explicit = worktreeGitArgs(repo);
  const exclusions = normalizeExcluded(excluded).map(excludePathspec);
  // Untracked files (`?`), and tracked ones whose stat data differs from the index (`C`, no content read): the
  // files whose size is checked before git reads any of them.
  const listing = runGit([...explicit, 'ls-files', '--others', '--modified', '--exclude-standard', '-t', '-z', '--', ...exclusions], {
    cwd: repo.workTree,
    env: READ_ONLY,
  });
  // A known worktree is rechecked while this read-only listing runs (it writes nothing, and names the git dir read
  // at creation); the listing is used, and its failure reported, only once the check has passed.
  listing.catch(() => undefined);
  if (known) await recheckedWorktreeRepo(worktree, known);
  const listed = parseListing((await listing).stdout);
  const tooLarge = await findTooLarge(repo.workTree, listed);
  const tooLargeExclusions = tooLarge.map((f) => excludePathspec(f.path));
  const diff = (env: Record<string, string>) =>
    diffOnce(repo.workTree, ['diff-index', baseRef], env, excluded, options, tooLargeExclusions, explicit, tooLarge);
  if (!listed.some((f) => f.action === 'created')) return diff(READ_ONLY);
  return withTempIndex(
    repo.workTree,
    async (env) => {
      await markUntrackedIntentToAdd(explicit, repo.workTree, [...exclusions, ...tooLargeExclusions], env);
      return diff({ ...env, ...READ_ONLY });
    },
    path.join(repo.gitDir, 'index'),
  );
}

/**
 * Every untracked file, as `ls-files --others --exclude-standard` listed it, marked intent-to-add in ONE pass: the
 * whole tree as one pathspec, minus the exclusions. Naming each file instead (`--pathspec-from-file`) makes git match
 * every pathspec against every path, which grows with the square of the count (5.8 s at 20,000 new files, against
 * 0.18 s for one directory pathspec). `add -N` stages no content: tracked files keep their entries (a deletion may
 * drop one, which `diff-index <base>` still reports as deleted), and no new file is read or hashed.
 */
function markUntrackedIntentToAdd(explicit: string[], workTree: string, exclusions: string[], env: Record<string, string>): Promise<unknown> {
  return runGit([...explicit, 'add', '--intent-to-add', '--', '.', ...exclusions], { cwd: workTree, env });
}

/** The diff from `baseRef` to a tree worktreeTree() made, in the worktree's repository: the same DiffResult. */
export async function treeDiff(worktree: string, baseRef: string, tree: string, excluded: readonly string[], options: DiffOptions = {}): Promise<DiffResult> {
  const repo = await verifiedWorktreeRepo(worktree);
  return diffOnce(repo.workTree, ['diff-tree', '-r', baseRef, tree], READ_ONLY, excluded, options, [], worktreeGitArgs(repo));
}

/** Git must not write anything while it only inspects (no opportunistic index refresh). */
const READ_ONLY = { GIT_OPTIONAL_LOCKS: '0' };

/**
 * Snapshot of the user's working tree: `git add -A` (untracked files included, ignored ones not, `.caesar/` folders
 * excluded at any depth) into a TEMPORARY index, then `write-tree`. Re-edits of dirty files, reverts and new
 * untracked directories all change the tree, which a `git status` comparison misses. The user's index is only read.
 */
export async function takeSnapshot(workspace: string, known?: SnapshotRepo): Promise<Snapshot> {
  // `known`: the caller has just asked git for the workspace's toplevel and index (repoState), no need to ask again.
  const repo = known ?? (await snapshotRepo(workspace));
  // git kept at the toplevel, as the end's comparison (repoOfSnapshot) keeps it: the same environment lets both
  // reuse one filter look-up (git-safety.ts) while the repository's config is unchanged.
  const stay = stayAt(repo.gitRoot);
  // Sized while the index is copied: a huge file is kept out of `git add -A`, which would hash every byte of it.
  const sizing = tooLargeInWorkTree(repo.gitRoot, caesarExcludes(), stay);
  sizing.catch(() => undefined);
  let tooLarge: TooLargeFile[] = [];
  const tree = await withTempIndex(
    repo.gitRoot,
    async (index) => {
      const env = { ...index, ...stay };
      tooLarge = await sizing;
      await addEverything(repo.gitRoot, env, tooLarge);
      return gitText(['write-tree'], repo.gitRoot, env);
    },
    repo.indexFile,
  );
  return { gitRoot: repo.gitRoot, tree, taken_at: new Date().toISOString(), indexFile: repo.indexFile, ...(tooLarge.length ? { too_large: tooLarge } : {}) };
}

/**
 * In-place diff: the working tree staged again into a temporary index exactly as for the snapshot, then that index
 * compared with the snapshot's tree in one `diff-index --cached` (the same as writing a second tree and comparing
 * the two trees, one git process less).
 */
export async function inplaceDiff(workspace: string, before: Snapshot, excluded: readonly string[], options: DiffOptions = {}): Promise<DiffResult> {
  const { repo, stay } = await repoOfSnapshot(workspace, before);
  const sizing = tooLargeInWorkTree(repo.gitRoot, caesarExcludes(), stay);
  sizing.catch(() => undefined);
  return withTempIndex(
    repo.gitRoot,
    async (index) => {
      const env = { ...index, ...stay };
      // Left out on both sides: too large now, or when the snapshot was taken (its tree lacks them).
      const now = await sizing;
      const outOfGit = [...new Set([...now, ...(before.too_large ?? [])].map((f) => f.path))].map(excludePathspec);
      await addEverything(repo.gitRoot, env, now);
      // .caesar/ is never staged, so it cannot differ: excluding it also hides an intent-to-add entry the user's
      // index may hold there, which a tree would not contain.
      return diffOnce(repo.gitRoot, ['diff-index', '--cached', before.tree], env, excluded, options, [...caesarExcludes(), ...outOfGit], [], changedSince(now, before.too_large));
    },
    repo.indexFile,
  );
}

/**
 * The repository to compare with `before`: it must still be the one the snapshot was taken of. Asked of git, unless
 * the workspace is the snapshot's toplevel and the snapshot knows its index (the checkout guard, an in-place task at
 * the root): then git is kept from looking above that toplevel (GIT_CEILING_DIRECTORIES), so a repository that
 * vanished fails the comparison as `rev-parse` would, instead of git finding an enclosing one.
 */
async function repoOfSnapshot(workspace: string, before: Snapshot): Promise<{ repo: SnapshotRepo; stay: Record<string, string> }> {
  const stay = stayAt(before.gitRoot);
  if (before.indexFile && path.resolve(workspace) === before.gitRoot && stay.GIT_CEILING_DIRECTORIES) {
    return { repo: { gitRoot: before.gitRoot, indexFile: before.indexFile }, stay };
  }
  const repo = await snapshotRepo(workspace);
  if (repo.gitRoot !== before.gitRoot) {
    throw new Error(`The snapshots belong to different repositories (${before.gitRoot} vs ${repo.gitRoot}).`);
  }
  return { repo, stay: {} };
}

/**
 * GIT_CEILING_DIRECTORIES at the toplevel's parent: git works in that toplevel or fails, it never climbs to an
 * enclosing repository. Empty when the ceiling would not hold (the root itself, or a path the variable's list would
 * split in two).
 */
function stayAt(gitRoot: string): Record<string, string> {
  const parent = path.dirname(gitRoot);
  return parent !== gitRoot && !parent.includes(path.delimiter) ? { GIT_CEILING_DIRECTORIES: parent } : {};
}

async function snapshotRepo(workspace: string): Promise<SnapshotRepo> {
  const repo = await workTreePaths(workspace);
  if (!repo) throw new Error(`Cannot snapshot ${workspace}: it is not inside a git repository.`);
  return repo;
}

function addEverything(gitRoot: string, env: Record<string, string>, tooLarge: readonly TooLargeFile[] = []): Promise<unknown> {
  return runGit(['add', '-A', '--', '.', ...caesarExcludes(), ...tooLarge.map((f) => excludePathspec(f.path))], { cwd: gitRoot, env });
}

function caesarExcludes(): string[] {
  // `.caesar` at the top and in any subdirectory (a caesar root may be a subfolder of the repository): `**/`
  // also matches zero folders. Only this glob form: `git add` exits 1 when a LITERAL exclude names an ignored
  // path (the usual case, `.caesar/` in .gitignore), while the glob is accepted whether or not it is ignored.
  return [`:(exclude,glob,top)**/${CAESAR_DIR}/**`];
}

/**
 * One diff of the task's changes: `command` is the git plumbing command and its revision (`diff-index <base>`, or
 * `diff-index --cached <tree>`), run with `env` (the index to read). Files, counts and patch come from ONE git
 * process (`--raw -p -z`, the counts read off the patch); `only` needs a first listing pass to find both sides of a
 * chosen rename.
 */
async function diffOnce(
  cwd: string,
  command: string[],
  env: Record<string, string>,
  excludedInput: readonly string[],
  options: DiffOptions,
  extraExclusions: readonly string[] = [],
  gitArgs: readonly string[] = [],
  /** Files left out of git's work for their size (excluded by extraExclusions): listed, never in the patch. */
  tooLarge: readonly TooLargeFile[] = [],
): Promise<DiffResult> {
  const excluded = normalizeExcluded(excludedInput);
  const exclusions = [...excluded.map(excludePathspec), ...extraExclusions];
  const withPatch = options.patch !== false;
  const runDiff = async (formats: string[], pathspec: string[]) =>
    parseDiffOutput(
      (
        await runGit([...gitArgs, ...NEUTRAL_CONFIG, ...command.slice(0, 1), ...DIFF_FLAGS, ...formats, '-z', ...command.slice(1), '--', ...pathspec], {
          cwd,
          env,
        })
      ).stdout,
    );
  const listing = async (pathspec: string[]) => withoutUnchanged(await runDiff(['--raw', '--numstat'], pathspec));
  const gitDiff = async (patch: boolean, pathspec: string[]) => {
    if (!patch) return listing(pathspec);
    // The counts are read off the patch: `--numstat` beside `-p` would make git run its line diff twice.
    const withPatchOnly = await runDiff(['--raw', ...PATCH_FLAGS], pathspec);
    const fromPatch = countsFromPatch(withPatchOnly.entries, withPatchOnly.unhashed, withPatchOnly.patch);
    if (fromPatch) return { ...fromPatch, patch: withPatchOnly.patch };
    // A patch we cannot line up with the listing (an unexpected status, a name that is not UTF-8): ask git.
    return { ...(await listing(pathspec)), patch: withPatchOnly.patch };
  };

  let pathspec = exclusions;
  const only = options.only?.map(normalizeRelPath).filter((p) => p !== '');
  if (only?.length) {
    const full: Array<{ path: string; old_path?: string }> = [...(await gitDiff(false, exclusions)).entries, ...tooLarge];
    const unknown = only.filter((p) => !full.some((f) => f.path === p || f.old_path === p));
    if (unknown.length) throw new Error(`Not in the task's diff: ${unknown.join(', ')}`);
    // A rename is detected only when both of its sides are inside the pathspec: a rename named by either of its
    // paths is restricted to both, so it is applied as a rename.
    const wanted = new Set(only);
    const chosen = new Set<string>();
    for (const file of full) {
      if (wanted.has(file.path) || (file.old_path && wanted.has(file.old_path))) {
        chosen.add(file.path);
        if (file.old_path) chosen.add(file.old_path);
      }
    }
    pathspec = [...[...chosen].map(literalPathspec), ...exclusions];
    tooLarge = tooLarge.filter((f) => chosen.has(f.path));
  }

  const { entries, counts, patch: patchBytes } = await gitDiff(withPatch, pathspec);
  const files = entries
    // Safety net on top of the pathspec: the same prefix semantics the workshop uses.
    .filter((file) => !isExcluded(file.path, excluded))
    .map((file) => ({ ...file, ...(counts.get(file.path) ?? { additions: 0, deletions: 0, binary: false }) }))
    .concat(tooLarge.filter((file) => !isExcluded(file.path, excluded)).map(tooLargeChange));
  const result = {
    files,
    patch: patchBytes.toString('utf8'),
    patch_digest: withPatch ? digestPatch(patchBytes, tooLarge) : '',
    is_empty: files.length === 0 && (withPatch ? patchBytes.length === 0 : entries.length === 0),
  } as DiffResult;
  // Non-enumerable: a DiffResult printed as JSON (CLI --json, MCP) must not dump the patch a second time as a
  // byte array. Code that needs the exact bytes reads the property directly.
  Object.defineProperty(result, 'patch_bytes', { value: patchBytes, enumerable: false });
  return result;
}

/**
 * sha256 of the patch; with files too large for it, of their paths and sizes too, so that a change to one of them
 * changes the digest (what gc compares with applied.json).
 */
export function digestPatch(patch: Buffer | string, tooLarge: readonly TooLargeFile[] = []): string {
  const hash = createHash('sha256').update(patch);
  for (const file of tooLarge) hash.update(`\0too-large\0${file.path}\0${file.size}`);
  return hash.digest('hex');
}

export interface ReconcileOptions {
  /**
   * Absolute repository roots (the worktree, the user's git root): absolute declared paths under them are made
   * repository-relative, like the diff's paths (codex reports absolute paths, reference §8.22).
   */
  roots?: readonly string[];
  /** Repository-relative folder of the agent's cwd, prepended to its relative declared paths ('' at the root). */
  prefix?: string;
}

export interface ReconcileOutcome {
  report: Report;
  changes_verified_by: 'git' | 'declaration';
}

/**
 * With a diff, git is the source of truth: report.changes becomes the diff's files; undeclared diff files and
 * declared files missing from the diff become medium findings; a read-only task with a non-empty diff gets a high
 * finding. Without a diff the declaration stands. Existing findings are kept, new ones appended.
 */
export function reconcileReport(
  report: Report,
  diff: Pick<DiffResult, 'files' | 'is_empty'> | undefined,
  mode: Mode,
  options: ReconcileOptions = {},
): ReconcileOutcome {
  if (!diff) return { report, changes_verified_by: 'declaration' };
  const declared = new Map<string, Change>();
  for (const change of report.changes) declared.set(toRepoPath(change.path, options), change);

  const findings: Finding[] = [...report.findings];
  const changes: Change[] = diff.files.map((file) => {
    const own = declared.get(file.path) ?? (file.old_path ? declared.get(file.old_path) : undefined);
    const summary = file.action === 'renamed' ? `renamed from ${file.old_path ?? '?'}` : (own?.summary ?? '');
    return { path: file.path, action: file.action, summary };
  });

  const undeclared: Finding[] = [];
  for (const file of diff.files) {
    const wasDeclared = declared.has(file.path) || (file.old_path !== undefined && declared.has(file.old_path));
    if (!wasDeclared) {
      undeclared.push({
        severity: 'medium',
        title: 'Undeclared change',
        file: file.path,
        detail: `git shows ${file.path} as ${file.action}${file.old_path ? ` (from ${file.old_path})` : ''}, but the agent's report does not mention it.`,
      });
    }
  }
  findings.push(...summarizePerFileFindings(undeclared, 'Undeclared change', "files git shows changed that the agent's report does not mention"));
  const absent: Finding[] = [];
  const inDiff = new Set(diff.files.flatMap((f) => (f.old_path ? [f.path, f.old_path] : [f.path])));
  for (const [repoPath, change] of declared) {
    if (!inDiff.has(repoPath)) {
      absent.push({
        severity: 'medium',
        title: 'Change declared but not found in the diff',
        file: repoPath,
        detail: `The agent reports ${change.path} as ${change.action}, but git shows no change to it.`,
      });
    }
  }
  findings.push(...summarizePerFileFindings(absent, 'Change declared but not found in the diff', 'declared changes git does not show'));
  if (mode === 'read-only' && diff.files.length > 0) {
    findings.push({
      severity: 'high',
      title: 'Write detected during a read-only task',
      detail: `The task was read-only, yet git shows changes to: ${listWithMore(diff.files.map((f) => f.path))}.`,
    });
  }
  return { report: { ...report, changes, findings }, changes_verified_by: 'git' };
}

function toRepoPath(declared: string, options: ReconcileOptions): string {
  for (const root of options.roots ?? []) {
    const base = root.endsWith('/') ? root : `${root}/`;
    if (declared.startsWith(base)) return normalizeRelPath(declared.slice(base.length));
  }
  const relative = normalizeRelPath(declared);
  return options.prefix ? normalizeRelPath(`${options.prefix}/${relative}`) : relative;
}

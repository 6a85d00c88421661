import { createHash } from 'node:crypto';
import type { Change, Finding, Mode, Report } from '../protocol';
import { CAESAR_DIR } from '../protocol';
import {
  NEUTRAL_CONFIG,
  excludePathspec,
  gitText,
  gitToplevel,
  literalPathspec,
  runGit,
  splitNul,
  withTempIndex,
} from './git';
import { isExcluded, normalizeExcluded, normalizeRelPath } from './rel-path';
import type { FileChangeRecord } from './result';

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
}

export interface DiffOptions {
  /** Restrict to these repository-relative paths (a rename is kept whole when either of its paths is named). */
  only?: readonly string[];
}

const DIFF_FLAGS = ['--no-color', '--no-ext-diff', '--no-textconv', '--find-renames', '--no-relative'];

/**
 * Diff of a worktree against its frozen base commit — NEVER HEAD, so an agent that commits (all, some or none of
 * its work) yields the same diff. `git add -A --intent-to-add` makes new files visible; it runs against a private
 * copy of the worktree's index, so computing a diff (caesar diff, gc --dry-run) writes nothing in the worktree and
 * cannot collide with an agent's own `git commit` on index.lock.
 */
export async function worktreeDiff(
  worktree: string,
  baseRef: string,
  excluded: readonly string[],
  options: DiffOptions = {},
): Promise<DiffResult> {
  return withTempIndex(worktree, async (env) => {
    await runGit(['add', '-A', '--intent-to-add'], { cwd: worktree, env });
    return diffWithPathspec(worktree, [baseRef], excluded, options, env);
  });
}

/**
 * Snapshot of the user's working tree: `git add -A` (untracked files included, ignored ones not, `.caesar/` folders
 * excluded at any depth) into a TEMPORARY index, then `write-tree`. Re-edits of dirty files, reverts and new
 * untracked directories all change the tree, which a `git status` comparison misses. The user's index is only read.
 */
export async function takeSnapshot(workspace: string): Promise<Snapshot> {
  const gitRoot = await gitToplevel(workspace);
  if (!gitRoot) throw new Error(`Cannot snapshot ${workspace}: it is not inside a git repository.`);
  const tree = await withTempIndex(gitRoot, async (env) => {
    await runGit(['add', '-A', '--', '.', ...caesarExcludes()], { cwd: gitRoot, env });
    return gitText(['write-tree'], gitRoot, env);
  });
  return { gitRoot, tree, taken_at: new Date().toISOString() };
}

/** In-place diff: a second snapshot, then the two trees compared with the same parsing as the worktree diff. */
export async function inplaceDiff(workspace: string, before: Snapshot, excluded: readonly string[], options: DiffOptions = {}): Promise<DiffResult> {
  const after = await takeSnapshot(workspace);
  if (after.gitRoot !== before.gitRoot) {
    throw new Error(`The snapshots belong to different repositories (${before.gitRoot} vs ${after.gitRoot}).`);
  }
  return diffWithPathspec(after.gitRoot, [before.tree, after.tree], excluded, options);
}

function caesarExcludes(): string[] {
  // `.caesar` at the top and in any subdirectory (a caesar root may be a subfolder of the repository): `**/`
  // also matches zero folders. Only this glob form: `git add` exits 1 when a LITERAL exclude names an ignored
  // path (the usual case, `.caesar/` in .gitignore), while the glob is accepted whether or not it is ignored.
  return [`:(exclude,glob,top)**/${CAESAR_DIR}/**`];
}

async function diffWithPathspec(
  cwd: string,
  revisions: string[],
  excludedInput: readonly string[],
  options: DiffOptions,
  env?: Record<string, string>,
): Promise<DiffResult> {
  const excluded = normalizeExcluded(excludedInput);
  const exclusions = excluded.map(excludePathspec);
  const gitDiff = (flags: string[], pathspec: string[]) =>
    runGit([...NEUTRAL_CONFIG, 'diff', ...DIFF_FLAGS, ...flags, ...revisions, '--', ...pathspec], { cwd, ...(env ? { env } : {}) });

  let pathspec = exclusions;
  const only = options.only?.map(normalizeRelPath).filter((p) => p !== '');
  if (only?.length) {
    const full = parseNameStatus((await gitDiff(['--name-status', '-z'], exclusions)).stdout);
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
  }
  const run = (flags: string[]) => gitDiff(flags, pathspec);

  const [nameStatus, numstat, patch] = await Promise.all([
    run(['--name-status', '-z']),
    run(['--numstat', '-z']),
    run(['--binary', '--full-index']),
  ]);
  const counts = parseNumstat(numstat.stdout);
  const files = parseNameStatus(nameStatus.stdout)
    // Safety net on top of the pathspec: the same prefix semantics the workshop uses.
    .filter((file) => !isExcluded(file.path, excluded))
    .map((file) => ({ ...file, ...(counts.get(file.path) ?? { additions: 0, deletions: 0, binary: false }) }));
  const patchBytes = patch.stdout;
  const result = {
    files,
    patch: patchBytes.toString('utf8'),
    patch_digest: digestPatch(patchBytes),
    is_empty: files.length === 0 && patchBytes.length === 0,
  } as DiffResult;
  // Non-enumerable: a DiffResult printed as JSON (CLI --json, MCP) must not dump the patch a second time as a
  // byte array. Code that needs the exact bytes reads the property directly.
  Object.defineProperty(result, 'patch_bytes', { value: patchBytes, enumerable: false });
  return result;
}

export function digestPatch(patch: Buffer | string): string {
  return createHash('sha256').update(patch).digest('hex');
}

type NameStatusEntry = Pick<FileChange, 'path' | 'old_path' | 'action'>;

/**
 * `--name-status -z`: `M\0path\0`, `R100\0old\0new\0`. A (added) → created, D → deleted, M/T/U → modified,
 * R → renamed (path = new, old_path = old), C (copy, only if forced by config) → created at the new path.
 */
export function parseNameStatus(output: Buffer): NameStatusEntry[] {
  const fields = splitNul(output);
  const entries: NameStatusEntry[] = [];
  for (let i = 0; i < fields.length; ) {
    const code = fields[i++] ?? '';
    const letter = code.charAt(0);
    if (letter === 'R' || letter === 'C') {
      const oldPath = fields[i++] ?? '';
      const newPath = fields[i++] ?? '';
      entries.push(letter === 'R' ? { path: newPath, old_path: oldPath, action: 'renamed' } : { path: newPath, action: 'created' });
      continue;
    }
    const file = fields[i++] ?? '';
    if (letter === 'A') entries.push({ path: file, action: 'created' });
    else if (letter === 'D') entries.push({ path: file, action: 'deleted' });
    else if (letter === 'M' || letter === 'T' || letter === 'U') entries.push({ path: file, action: 'modified' });
  }
  return entries;
}

/**
 * `--numstat -z`: `added\tdeleted\tpath\0`, or for a rename `added\tdeleted\t\0old\0new\0`. Binary files show
 * `-\t-`: reported as binary with zero counts. Keyed by the (new) path.
 */
export function parseNumstat(output: Buffer): Map<string, { additions: number; deletions: number; binary: boolean }> {
  const fields = splitNul(output);
  const counts = new Map<string, { additions: number; deletions: number; binary: boolean }>();
  for (let i = 0; i < fields.length; ) {
    const record = fields[i++] ?? '';
    const [added = '', deleted = '', ...rest] = record.split('\t');
    let file = rest.join('\t');
    if (file === '') {
      i++; // old path of a rename
      file = fields[i++] ?? '';
    }
    const binary = added === '-' && deleted === '-';
    counts.set(file, {
      additions: binary ? 0 : Number.parseInt(added, 10) || 0,
      deletions: binary ? 0 : Number.parseInt(deleted, 10) || 0,
      binary,
    });
  }
  return counts;
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

  for (const file of diff.files) {
    const wasDeclared = declared.has(file.path) || (file.old_path !== undefined && declared.has(file.old_path));
    if (!wasDeclared) {
      findings.push({
        severity: 'medium',
        title: 'Undeclared change',
        file: file.path,
        detail: `git shows ${file.path} as ${file.action}${file.old_path ? ` (from ${file.old_path})` : ''}, but the agent's report does not mention it.`,
      });
    }
  }
  const inDiff = new Set(diff.files.flatMap((f) => (f.old_path ? [f.path, f.old_path] : [f.path])));
  for (const [repoPath, change] of declared) {
    if (!inDiff.has(repoPath)) {
      findings.push({
        severity: 'medium',
        title: 'Change declared but not found in the diff',
        file: repoPath,
        detail: `The agent reports ${change.path} as ${change.action}, but git shows no change to it.`,
      });
    }
  }
  if (mode === 'read-only' && diff.files.length > 0) {
    findings.push({
      severity: 'high',
      title: 'Write detected during a read-only task',
      detail: `The task was read-only, yet git shows changes to: ${diff.files.map((f) => f.path).join(', ')}.`,
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

import { lstatSync } from 'node:fs';
import { plural } from '../../common/format';
import * as path from 'node:path';
import { formatBytes, type FileChangeRecord } from '../../protocol';
import { runGit, splitNul } from './git';

/**
 * Files too large to read into a patch (issue 23: a 300 MB file made diff, stat and apply fail with "output exceeded
 * 268435456 bytes"; a 50 GB sparse file cost 7 minutes of git). Their sizes are read with lstat BEFORE git is asked
 * about their content, and the too large ones are left out of git's work: listed as too large, never hashed, never
 * in the patch. One file over FILE_LIMIT is too large; so are the largest ones while the sizes still to be read add up
 * to more than TOTAL_LIMIT (the patch is held in memory and git's output is capped at 256 MiB).
 */
export const LARGE_FILE_LIMIT_BYTES = 100 * 1024 * 1024;
export const LARGE_TOTAL_LIMIT_BYTES = 192 * 1024 * 1024;

export interface TooLargeFile {
  path: string;
  size: number;
  action: 'created' | 'modified';
  /** The file's mtime when sized: an in-place snapshot's too large file unchanged since is no change. */
  mtimeMs?: number;
}

export interface SizeLimits {
  file: number;
  total: number;
}

/**
 * Limits from the environment (CAESAR_LARGE_FILE_BYTES, CAESAR_LARGE_TOTAL_BYTES: a test or a user with much memory
 * may move them), else the defaults. A value that is not a positive integer is ignored.
 */
export function sizeLimits(env: NodeJS.ProcessEnv = process.env): SizeLimits {
  const read = (name: string, fallback: number) => {
    const n = Number(env[name]);
    return Number.isSafeInteger(n) && n > 0 ? n : fallback;
  };
  return { file: read('CAESAR_LARGE_FILE_BYTES', LARGE_FILE_LIMIT_BYTES), total: read('CAESAR_LARGE_TOTAL_BYTES', LARGE_TOTAL_LIMIT_BYTES) };
}

/** lstat in slices, yielding between them: 50,000 files are ~100 ms of synchronous calls, never one long block. */
const SLICE = 2000;

/**
 * The too large among `candidates` (repository-relative paths under `workTree`, new or changed): regular files only
 * (a symlink is its target's name, a few bytes; a folder is an embedded repository, which git does not read).
 */
export async function findTooLarge(workTree: string, candidates: ReadonlyArray<{ path: string; action: TooLargeFile['action'] }>, limits = sizeLimits()): Promise<TooLargeFile[]> {
  const sized: TooLargeFile[] = [];
  let total = 0;
  for (let start = 0; start < candidates.length; start += SLICE) {
    if (start > 0) await new Promise((resolve) => setImmediate(resolve));
    for (const candidate of candidates.slice(start, start + SLICE)) {
      const stat = regularFileStat(path.join(workTree, candidate.path));
      if (!stat) continue;
      total += stat.size;
      if (stat.size > limits.file || stat.size > limits.total / 64) sized.push({ ...candidate, size: stat.size, mtimeMs: stat.mtimeMs });
    }
  }
  sized.sort((a, b) => b.size - a.size);
  const tooLarge: TooLargeFile[] = [];
  for (const file of sized) {
    if (file.size <= limits.file && total <= limits.total) break;
    tooLarge.push(file);
    total -= file.size;
  }
  return tooLarge;
}

function regularFileStat(file: string): { size: number; mtimeMs: number } | undefined {
  try {
    const stat = lstatSync(file);
    return stat.isFile() ? { size: stat.size, mtimeMs: stat.mtimeMs } : undefined;
  } catch {
    return undefined; // gone since git listed it: git will not read it either
  }
}

/**
 * `git ls-files --others --modified -t -z` output: untracked files (`?`) are created, the others (`C`, stat-changed
 * tracked files; a deleted one is skipped by the sizing) modified.
 */
export function parseListing(output: Buffer): Array<{ path: string; action: TooLargeFile['action'] }> {
  return splitNul(output).map((field) => ({ path: field.slice(2), action: field.startsWith('? ') ? 'created' : 'modified' }));
}

/**
 * The too large files of the work tree at `gitRoot` (new or changed, outside `exclusions`), for an in-place snapshot
 * or diff, whose `git add -A` would otherwise hash every byte of them.
 */
export async function tooLargeInWorkTree(gitRoot: string, exclusions: readonly string[], env: Record<string, string> = {}): Promise<TooLargeFile[]> {
  const listing = await runGit(['ls-files', '--others', '--modified', '--exclude-standard', '-t', '-z', '--', '.', ...exclusions], {
    cwd: gitRoot,
    env: { ...env, GIT_OPTIONAL_LOCKS: '0' },
  });
  return findTooLarge(gitRoot, parseListing(listing.stdout));
}

/** The too large files of `now` that are new or changed since `before` (size or mtime), as a diff lists them. */
export function changedSince(now: readonly TooLargeFile[], before: readonly TooLargeFile[] = []): TooLargeFile[] {
  const earlier = new Map(before.map((f) => [f.path, f]));
  return now
    .filter((f) => {
      const then = earlier.get(f.path);
      return !then || then.size !== f.size || then.mtimeMs !== f.mtimeMs;
    })
    .map((f) => (earlier.has(f.path) ? { ...f, action: 'modified' as const } : f));
}

/** How a too large file appears in the diff's list: no counts (git did not read it), its size, marked. */
export function tooLargeChange(file: TooLargeFile): FileChangeRecord {
  return { path: file.path, action: file.action, additions: 0, deletions: 0, binary: true, too_large: true, size: file.size };
}

/** What apply says of the files it left in the worktree for their size (the user copies them by hand). */
export function tooLargeNote(files: ReadonlyArray<Pick<FileChangeRecord, 'path' | 'size'>>, worktree: string): string {
  const shown = files.slice(0, 20).map((f) => `${f.path} (${formatBytes(f.size ?? 0)})`);
  const more = files.length > shown.length ? ` and ${files.length - shown.length} more` : '';
  const one = files.length === 1;
  return `${plural(files.length, 'file')} too large for a patch ${one ? 'was' : 'were'} NOT applied; ${one ? 'it stays' : 'they stay'} in the worktree ${worktree}: ${shown.join(', ')}${more}. Copy them by hand.`;
}

/**
 * The digest applied.json records when files too large for the patch were left out: never equal to a diff's, so gc
 * keeps the worktree that still holds them.
 */
export function partialDigest(digest: string): string {
  return `partial-too-large:${digest}`;
}

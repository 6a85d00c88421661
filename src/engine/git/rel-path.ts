/**
 * Repository-relative paths as the git layer uses them: `/`-separated, no `.` segments, no trailing slash.
 * Exclusion uses PREFIX SEMANTICS BY SEGMENT: `node_modules` covers `node_modules` and `node_modules/x`, never
 * `node_modules-old` (reference §2.5.7; a trailing slash must not defeat the test, §2.5.9).
 */

/** Normalizes separators, `./` and `.` segments, duplicate and trailing slashes. Does not resolve `..`. */
export function normalizeRelPath(input: string): string {
  const unified = process.platform === 'win32' ? input.replaceAll('\\', '/') : input;
  return unified
    .split('/')
    .filter((segment) => segment !== '' && segment !== '.')
    .join('/');
}

/** True when `file` equals `prefix` or lies below it, segment-wise. Both are normalized first. */
export function isUnderPrefix(file: string, prefix: string): boolean {
  const f = normalizeRelPath(file);
  const p = normalizeRelPath(prefix);
  if (!p) return false;
  return f === p || f.startsWith(`${p}/`);
}

export function isExcluded(file: string, excluded: readonly string[]): boolean {
  return excluded.some((prefix) => isUnderPrefix(file, prefix));
}

/** Normalized, non-empty, de-duplicated exclusion prefixes. */
export function normalizeExcluded(excluded: readonly string[]): string[] {
  return [...new Set(excluded.map(normalizeRelPath).filter((p) => p !== ''))];
}

const WINDOWS_ABSOLUTE = /^[A-Za-z]:[\\/]|^[\\/]{2}/;

/**
 * Why a configured workshop path (`[worktree] copy/link`) is refused, or undefined when it is acceptable.
 * Refused: empty, absolute (POSIX or Windows), any `..` segment, or a first segment `.git` / `.caesar`.
 */
export function workshopPathProblem(input: string): string | undefined {
  if (input.trim() === '') return 'the path is empty';
  if (input.startsWith('/') || WINDOWS_ABSOLUTE.test(input)) return 'the path must be relative to the workspace, not absolute';
  const segments = input.split(/[\\/]/);
  if (segments.includes('..')) return 'the path must not contain a ".." segment';
  const normalized = normalizeRelPath(input.replaceAll('\\', '/'));
  if (normalized === '') return 'the path names the workspace itself';
  const first = normalized.split('/')[0];
  if (first === '.git' || first === '.caesar') return `the path must not be inside ${first}/`;
  return undefined;
}

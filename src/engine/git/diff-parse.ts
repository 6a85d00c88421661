import type { FileChangeRecord } from '../../protocol';
import { splitNul } from './git';

/*
 * Pure parsers of git's `-z` diff output (raw, numstat, name-status, patch sections). No process is run here:
 * reconcile.ts runs git and hands the bytes over.
 */

const COLON = 0x3a;

/**
 * Output of `git diff-* --raw [--numstat] -z [-p]`: raw records (`:modes shas STATUS\0path\0`, two paths for R/C),
 * then numstat records, then — only with a patch — one empty field and the patch bytes, kept as bytes. Paths can
 * hold any byte but NUL, so the fields are cut on NUL bytes before decoding.
 */
export function parseDiffOutput(output: Buffer): RawDiff {
  let pos = 0;
  const field = (): string => {
    let end = output.indexOf(0, pos);
    if (end < 0) end = output.length;
    const text = output.toString('utf8', pos, end);
    pos = end + 1;
    return text;
  };
  const entries: NameStatusEntry[] = [];
  const unhashed = new Set<NameStatusEntry>();
  while (pos < output.length && output[pos] === COLON) {
    const meta = field(); // `:oldmode newmode oldsha newsha STATUS`
    const [, , , newSha = '', status = ''] = meta.split(' ');
    const entry = nameStatusEntry(status, field);
    if (!entry) continue;
    entries.push(entry);
    if (status === 'M' && /^0+$/.test(newSha)) unhashed.add(entry);
  }
  const numstatStart = pos;
  // An empty field (two NULs in a row) can only be the separator before the patch: paths are never empty.
  while (pos < output.length && output[pos] !== 0) {
    if (isRenameNumstat(field())) {
      field();
      field();
    }
  }
  return {
    entries,
    unhashed,
    counts: parseNumstat(output.subarray(numstatStart, Math.min(pos, output.length))),
    patch: pos < output.length ? output.subarray(pos + 1) : Buffer.alloc(0),
  };
}

export interface RawDiff {
  entries: NameStatusEntry[];
  /** Worktree files listed as modified without hashing their new content: touched, maybe unchanged. */
  unhashed: Set<NameStatusEntry>;
  counts: Map<string, LineCounts>;
  patch: Buffer;
}

/**
 * A worktree file whose stat data changed but whose content did not (touched, rewritten identically) is listed as
 * modified with an unhashed new side, and numstat leaves it out: not a change. (`git diff` drops these itself;
 * plumbing does not.) Any real change has a numstat record, a mode-only change `0 0`.
 */
export function withoutUnchanged(raw: RawDiff): { entries: NameStatusEntry[]; counts: Map<string, LineCounts>; patch: Buffer } {
  return { entries: raw.entries.filter((e) => !raw.unhashed.has(e) || raw.counts.has(e.path)), counts: raw.counts, patch: raw.patch };
}

/**
 * +/- counts per file from the patch itself, matched to the raw entries in order by each section's
 * `diff --git a/<old> b/<new>` line; an unhashed entry without a section was only touched and is dropped. Counts are
 * the `+`/`-` lines after the first hunk header, as numstat counts them; a `GIT binary patch` section is binary with
 * zero counts. Undefined when anything does not line up, so that the caller asks git for numstat instead.
 */
export function countsFromPatch(
  entries: readonly NameStatusEntry[],
  unhashed: ReadonlySet<NameStatusEntry>,
  patch: Buffer,
): { entries: NameStatusEntry[]; counts: Map<string, LineCounts> } | undefined {
  const sections = patchSections(patch);
  if (!sections) return undefined;
  const kept: NameStatusEntry[] = [];
  const counts = new Map<string, LineCounts>();
  let next = 0;
  for (const entry of entries) {
    const section = sections[next];
    if (section && section.header === diffGitHeader(entry)) {
      kept.push(entry);
      counts.set(entry.path, countSection(patch, section.start, section.end));
      next++;
    } else if (!unhashed.has(entry)) {
      return undefined;
    }
  }
  return next === sections.length ? { entries: kept, counts } : undefined;
}

const SECTION_START = Buffer.from('diff --git ');

/** Byte ranges of the patch's per-file sections, each with its first line decoded; undefined if it is not a patch. */
function patchSections(patch: Buffer): Array<{ header: string; start: number; end: number }> | undefined {
  if (patch.length === 0) return [];
  if (!patch.subarray(0, SECTION_START.length).equals(SECTION_START)) return undefined;
  const starts: number[] = [0];
  for (let at = patch.indexOf('\ndiff --git ', 0); at >= 0; at = patch.indexOf('\ndiff --git ', at + 1)) starts.push(at + 1);
  return starts.map((start, i) => {
    const end = starts[i + 1] ?? patch.length;
    const eol = patch.indexOf(0x0a, start);
    return { header: patch.toString('utf8', start, eol < 0 || eol > end ? end : eol), start, end };
  });
}

function countSection(patch: Buffer, start: number, end: number): LineCounts {
  let additions = 0;
  let deletions = 0;
  let inHunks = false;
  let binary = false;
  for (let line = start; line < end; ) {
    let eol = patch.indexOf(0x0a, line);
    if (eol < 0 || eol > end) eol = end;
    const first = patch[line];
    if (inHunks) {
      if (first === 0x2b) additions++; // '+'
      else if (first === 0x2d) deletions++; // '-'
    } else if (first === 0x40 && patch[line + 1] === 0x40) {
      inHunks = true; // '@@'
    } else if (patch.toString('latin1', line, Math.min(eol, line + 16)) === 'GIT binary patch') {
      binary = true;
    }
    line = eol + 1;
  }
  return binary ? { additions: 0, deletions: 0, binary } : { additions, deletions, binary };
}

/** The first line git writes for a file pair, names C-quoted as git quotes them with core.quotePath=false. */
function diffGitHeader(entry: NameStatusEntry): string {
  return `diff --git ${quoteName(`a/${entry.old_path ?? entry.path}`)} ${quoteName(`b/${entry.path}`)}`;
}

const C_ESCAPES: Record<string, string> = { '\x07': '\\a', '\b': '\\b', '\t': '\\t', '\n': '\\n', '\v': '\\v', '\f': '\\f', '\r': '\\r', '"': '\\"', '\\': '\\\\' };

function quoteName(name: string): string {
  // eslint-disable-next-line no-control-regex
  if (!/["\\\x00-\x1f\x7f]/.test(name)) return name;
  // eslint-disable-next-line no-control-regex
  const escaped = name.replace(/["\\\x00-\x1f\x7f]/g, (c) => C_ESCAPES[c] ?? `\\${c.charCodeAt(0).toString(8).padStart(3, '0')}`);
  return `"${escaped}"`;
}

/** A numstat record whose path part is empty: the rename form, `added\tdeleted\t\0old\0new\0`. */
function isRenameNumstat(record: string): boolean {
  const parts = record.split('\t');
  return parts.length === 3 && parts[2] === '';
}

/**
 * One entry from a status (`M`, `R086`...) and its path field(s), read with `next`. A (added) → created,
 * D → deleted, M/T/U → modified, R → renamed (path = new, old_path = old), C (copy, only if forced by config) →
 * created at the new path; any other letter is skipped.
 */
function nameStatusEntry(status: string, next: () => string): NameStatusEntry | undefined {
  const letter = status.charAt(0);
  if (letter === 'R' || letter === 'C') {
    const oldPath = next();
    const newPath = next();
    return letter === 'R' ? { path: newPath, old_path: oldPath, action: 'renamed' } : { path: newPath, action: 'created' };
  }
  const file = next();
  if (letter === 'A') return { path: file, action: 'created' };
  if (letter === 'D') return { path: file, action: 'deleted' };
  if (letter === 'M' || letter === 'T' || letter === 'U') return { path: file, action: 'modified' };
  return undefined;
}

export type NameStatusEntry = Pick<FileChangeRecord, 'path' | 'old_path' | 'action'>;
export type LineCounts = { additions: number; deletions: number; binary: boolean };

/** `--name-status -z`: `M\0path\0`, `R100\0old\0new\0` (see nameStatusEntry for the mapping). */
export function parseNameStatus(output: Buffer): NameStatusEntry[] {
  const fields = splitNul(output);
  const entries: NameStatusEntry[] = [];
  let i = 0;
  const next = () => fields[i++] ?? '';
  while (i < fields.length) {
    const entry = nameStatusEntry(next(), next);
    if (entry) entries.push(entry);
  }
  return entries;
}

/**
 * `--numstat -z`: `added\tdeleted\tpath\0`, or for a rename `added\tdeleted\t\0old\0new\0`. Binary files show
 * `-\t-`: reported as binary with zero counts. Keyed by the (new) path.
 */
export function parseNumstat(output: Buffer): Map<string, LineCounts> {
  const fields = splitNul(output);
  const counts = new Map<string, LineCounts>();
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

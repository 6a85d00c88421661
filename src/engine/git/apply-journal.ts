import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, promises as fs } from 'node:fs';
import { hostname } from 'node:os';
import * as path from 'node:path';
import { taskPaths, type AppliedDoc } from '../../protocol';
import { applyStateDir } from './apply-lock';
import { testCrashPoint } from './apply-crash-hook';
import { sealedJsonText } from '../store/record-seal';

/**
 * Apply as a transaction (issue 23). `git apply` writes file after file; killed (or out of disk space) half-way it
 * leaves a checkout that is neither the user's nor the task's. So before it touches anything, the apply writes a
 * journal under `<checkout>/.caesar/state/apply/journal/`:
 *
 *   1. into `journal.tmp-<token>/`: the patch, a copy of every file the patch touches as it is now (bytes, mode,
 *      mtime; a symlink's target; or "did not exist", with the folders git will have to create), then journal.json;
 *      everything flushed to disk. A crash or ENOSPC here has touched nothing: the temp folder is garbage.
 *   2. rename to `journal/` (atomic, then the folder is flushed): from here on the checkout may change.
 *   3. `git apply <journal>/patch` (git reads the patch from the journal, so a git that outlives its parent applies
 *      the same whole patch, never a truncated stdin).
 *   4. flush the checkout, create `journal/written`: the change is completely written.
 *   5. write applied.json durably, then rename the journal to `journal.done-<token>/` and remove it.
 *
 * Recovery (apply-recovery.ts; at the next caesar command, under the apply lock): `journal/` with `written` → finish
 * recording (step 5); without it → roll back from the copies, which were complete before anything changed; temp and
 * done folders are simply removed. Every crash point therefore ends as before or as applied.
 */

export const JOURNAL = 'journal';
export const WRITTEN = 'written';
const PATCH = 'patch';
export const DOC = 'journal.json';

export interface JournalEntry {
  /** Repository-relative, '/'-separated. */
  path: string;
  kind: 'file' | 'symlink' | 'absent';
  mode?: number;
  mtime_ms?: number;
  size?: number;
  link?: string;
  /** The copy's name under backup/. */
  backup?: string;
}

export interface JournalDoc {
  version: 1;
  token: string;
  task_id: string;
  task_root: string;
  checkout: string;
  created_at: string;
  pid: number;
  host: string;
  entries: JournalEntry[];
  /** Folders that did not exist (or were not folders) before: git creates them for new files. Shallow first. */
  created_dirs: string[];
  /** What applied.json will hold once the apply is recorded. */
  record: AppliedDoc;
}

/**
 * A change the journal will not take on as the checkout is now (a path outside it, a symlinked folder on the way, a
 * folder or a special file the task replaces): refused before anything is copied or written, and said as such, not
 * as a failed write.
 */
export class ApplyRefusedError extends Error {
  override readonly name = 'ApplyRefusedError';
}

/** Names the files a patch touches must be: relative, inside the checkout, never git's or caesar's own folders. */
export function assertSafeRelPath(rel: string): void {
  const parts = rel.split('/');
  const bad =
    rel === '' ||
    rel.includes('\0') ||
    path.posix.isAbsolute(rel) ||
    parts.some((p) => p === '' || p === '.' || p === '..') ||
    parts.some((p) => p.toLowerCase() === '.git') ||
    parts[0] === '.caesar';
  if (bad) throw new ApplyRefusedError(`Refusing to apply a change to ${JSON.stringify(rel)}: not a plain path inside the checkout.`);
}

/** The parent folders of `rel` inside `checkout` must be real folders (or absent), never symlinks leading elsewhere. */
async function assertNoSymlinkedParent(checkout: string, rel: string): Promise<void> {
  const parts = rel.split('/');
  let at = checkout;
  for (const part of parts.slice(0, -1)) {
    at = path.join(at, part);
    const stat = await fs.lstat(at).catch(() => undefined);
    if (!stat) return;
    if (stat.isSymbolicLink()) throw new ApplyRefusedError(`Refusing to write ${rel}: ${path.relative(checkout, at)} is a symbolic link.`);
    if (!stat.isDirectory()) return;
  }
}

// ---------------------------------------------------------------------------------------------------------------

export class ApplyJournal {
  constructor(
    readonly checkout: string,
    readonly dir: string,
    readonly doc: JournalDoc,
  ) {}

  get patchFile(): string {
    return path.join(this.dir, PATCH);
  }

  /** Step 4: the checkout holds the whole change, flushed. */
  async markWritten(): Promise<void> {
    await flushFilesystem(this.checkout);
    await writeDurable(path.join(this.dir, WRITTEN), `${new Date().toISOString()}\n`);
  }

  /** Step 5: applied.json, then the journal goes. */
  async commit(): Promise<void> {
    await writeAppliedRecord(this.doc.task_root, this.doc.task_id, this.doc.record);
    testCrashPoint('recorded');
    await this.remove();
  }

  /** Puts every touched path back as it was before step 2, then removes the journal. */
  async rollback(): Promise<void> {
    await fs.rm(path.join(this.dir, WRITTEN), { force: true });
    await restoreEntries(this.checkout, this.dir, this.doc);
    await this.remove();
  }

  async remove(): Promise<void> {
    const done = path.join(path.dirname(this.dir), `${JOURNAL}.done-${this.doc.token}`);
    await fs.rename(this.dir, done);
    await fs.rm(done, { recursive: true, force: true });
  }
}

export function recordFile(doc: Pick<JournalDoc, 'task_root' | 'task_id'>): string {
  return path.join(taskPaths(doc.task_root, doc.task_id).dir, 'applied.json');
}

/** applied.json, sealed and flushed: the one place it is written (an apply's commit, or land finding it contained). */
export async function writeAppliedRecord(taskRoot: string, taskId: string, record: AppliedDoc): Promise<void> {
  const file = recordFile({ task_root: taskRoot, task_id: taskId });
  await writeDurable(file, sealedJsonText(file, 'applied', record));
}

/**
 * Steps 1 and 2. On failure (ENOSPC included) the temp folder is removed and the error thrown: the checkout was not
 * touched, so "nothing was applied" is then the truth.
 */
export async function prepareApplyJournal(options: {
  checkout: string;
  taskRoot: string;
  taskId: string;
  paths: string[];
  patch: Buffer;
  record: AppliedDoc;
}): Promise<ApplyJournal> {
  const { checkout } = options;
  const base = applyStateDir(checkout);
  const token = randomUUID();
  const temp = path.join(base, `${JOURNAL}.tmp-${token}`);
  try {
    await fs.mkdir(path.join(temp, 'backup'), { recursive: true });
    await fs.writeFile(path.join(temp, PATCH), options.patch);
    const { entries, createdDirs } = await backUp(checkout, temp, [...new Set(options.paths)].sort());
    const doc: JournalDoc = {
      version: 1,
      token,
      task_id: options.taskId,
      task_root: options.taskRoot,
      checkout: await fs.realpath(checkout),
      created_at: new Date().toISOString(),
      pid: process.pid,
      host: hostname(),
      entries,
      created_dirs: createdDirs,
      record: options.record,
    };
    await flushFilesystem(temp, entries.filter((e) => e.backup).map((e) => path.join(temp, 'backup', e.backup as string)));
    await writeDurable(path.join(temp, DOC), `${JSON.stringify(doc)}\n`);
    testCrashPoint('journal-written');
    const dir = path.join(base, JOURNAL);
    await fs.rename(temp, dir);
    await fsyncDir(base);
    return new ApplyJournal(checkout, dir, doc);
  } catch (error) {
    await fs.rm(temp, { recursive: true, force: true }).catch(() => undefined);
    throw error;
  }
}

async function backUp(checkout: string, temp: string, paths: string[]): Promise<{ entries: JournalEntry[]; createdDirs: string[] }> {
  const dirs = new DirKinds(checkout);
  const entries: JournalEntry[] = new Array(paths.length);
  const createdDirs = new Set<string>();
  let done = 0;
  // Thousands of small files: a few dozen at a time, so the copy takes the disk's time, not one round trip per file.
  await inBatches(paths, BACKUP_CONCURRENCY, async (rel, index) => {
    assertSafeRelPath(rel);
    const parents = await dirs.parentsOf(rel);
    if (parents.symlinked) throw new ApplyRefusedError(`Refusing to write ${rel}: ${parents.symlinked} is a symbolic link.`);
    const file = path.join(checkout, ...rel.split('/'));
    const stat = parents.missing.length ? undefined : await fs.lstat(file).catch((err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT' || err.code === 'ENOTDIR') return undefined;
      throw err;
    });
    if (!stat) {
      entries[index] = { path: rel, kind: 'absent' };
      for (const dir of parents.missing) createdDirs.add(dir);
    } else if (stat.isSymbolicLink()) {
      entries[index] = { path: rel, kind: 'symlink', link: await fs.readlink(file) };
    } else if (stat.isFile()) {
      const backup = String(index);
      await fs.copyFile(file, path.join(temp, 'backup', backup));
      entries[index] = { path: rel, kind: 'file', mode: stat.mode & 0o7777, mtime_ms: stat.mtimeMs, size: stat.size, backup };
    } else if (stat.isDirectory()) {
      // The journal keeps files and links; a folder turned into a file or a link could not be put back on a failure.
      throw new ApplyRefusedError(`Cannot apply to ${rel}: it is a folder in your checkout, and the task replaces it with a file or a symbolic link, which Caesar does not apply. Make that change yourself, or apply the other files with --files.`);
    } else {
      throw new ApplyRefusedError(`Cannot apply to ${rel}: it is neither a file nor a symbolic link in your checkout (a FIFO, a socket or a device).`);
    }
    testCrashPoint('backup', ++done);
  });
  // Shallow first, so a rollback removes them deepest first.
  const sorted = [...createdDirs].sort((a, b) => a.split('/').length - b.split('/').length || a.localeCompare(b));
  return { entries, createdDirs: sorted };
}

const BACKUP_CONCURRENCY = 32;

async function inBatches<T>(items: T[], width: number, work: (item: T, index: number) => Promise<void>): Promise<void> {
  let next = 0;
  const lane = async () => {
    while (next < items.length) {
      const index = next++;
      await work(items[index] as T, index);
    }
  };
  await Promise.all(Array.from({ length: Math.min(width, items.length) }, lane));
}

/** What each parent folder of the touched paths is now, looked up once per folder (lstat, never following links). */
class DirKinds {
  private readonly kinds = new Map<string, Promise<'dir' | 'symlink' | 'other'>>();
  constructor(private readonly checkout: string) {}

  private kind(dir: string): Promise<'dir' | 'symlink' | 'other'> {
    let known = this.kinds.get(dir);
    if (!known) {
      known = fs.lstat(path.join(this.checkout, ...dir.split('/'))).then(
        (s) => (s.isSymbolicLink() ? 'symlink' : s.isDirectory() ? 'dir' : 'other'),
        () => 'other' as const,
      );
      this.kinds.set(dir, known);
    }
    return known;
  }

  /** The parents that are not folders now (git will create them), and the first one that is a symlink, if any. */
  async parentsOf(rel: string): Promise<{ missing: string[]; symlinked?: string }> {
    const parts = rel.split('/').slice(0, -1);
    const missing: string[] = [];
    for (let i = 1; i <= parts.length; i++) {
      const dir = parts.slice(0, i).join('/');
      const kind = await this.kind(dir);
      if (kind === 'symlink' && missing.length === 0) return { missing, symlinked: dir };
      if (kind !== 'dir') missing.push(dir);
    }
    return { missing };
  }
}

async function restoreEntries(checkout: string, journalDir: string, doc: JournalDoc): Promise<void> {
  // Files the apply created go first, then the folders it created (deepest first, only when empty), then what
  // existed is put back: a file the patch replaced by a folder can only come back once that folder is gone.
  await inBatches(doc.entries.filter((e) => e.kind === 'absent'), BACKUP_CONCURRENCY, async (entry) => {
    assertSafeRelPath(entry.path);
    await assertNoSymlinkedParent(checkout, entry.path);
    const file = path.join(checkout, ...entry.path.split('/'));
    const stat = await fs.lstat(file).catch(() => undefined);
    if (stat && !stat.isDirectory()) await fs.rm(file, { force: true });
  });
  for (const dir of [...doc.created_dirs].reverse()) {
    assertSafeRelPath(dir);
    const full = path.join(checkout, ...dir.split('/'));
    const stat = await fs.lstat(full).catch(() => undefined);
    if (stat?.isDirectory()) await fs.rmdir(full).catch(() => undefined);
  }
  await inBatches(doc.entries.filter((e) => e.kind !== 'absent'), BACKUP_CONCURRENCY, (entry) => restoreEntry(checkout, journalDir, entry));
  await flushFilesystem(checkout);
}

async function restoreEntry(checkout: string, journalDir: string, entry: JournalEntry): Promise<void> {
  assertSafeRelPath(entry.path);
  await assertNoSymlinkedParent(checkout, entry.path);
  const file = path.join(checkout, ...entry.path.split('/'));
  await fs.mkdir(path.dirname(file), { recursive: true });
  const current = await fs.lstat(file).catch(() => undefined);
  if (current?.isDirectory()) await fs.rmdir(file); // a folder the apply made in its place; not empty → throws, journal stays
  if (entry.kind === 'symlink') {
    if (current?.isSymbolicLink() && (await fs.readlink(file)) === entry.link) return;
    await fs.rm(file, { force: true });
    await fs.symlink(entry.link as string, file);
    return;
  }
  const backup = path.join(journalDir, 'backup', entry.backup as string);
  // No copy left: an earlier, interrupted rollback already renamed it into place.
  if (!existsSync(backup)) return;
  if (current?.isFile() && (await sameFile(file, backup, entry))) return;
  // The copy is renamed into place: atomic, and it needs no free space (a full disk is a reason we roll back).
  await fs.chmod(backup, entry.mode as number);
  await fs.utimes(backup, new Date(), new Date((entry.mtime_ms as number)));
  try {
    await fs.rename(backup, file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EXDEV') throw err;
    await fs.copyFile(backup, file);
    await fs.chmod(file, entry.mode as number);
  }
}

async function sameFile(file: string, backup: string, entry: JournalEntry): Promise<boolean> {
  const stat = await fs.stat(file);
  if (stat.size !== entry.size || (stat.mode & 0o7777) !== entry.mode) return false;
  const [a, b] = await Promise.all([fs.readFile(file), fs.readFile(backup)]);
  return a.equals(b);
}

// ---------------------------------------------------------------------------------------------------------------
// Durability

async function writeDurable(file: string, text: string): Promise<void> {
  const temp = path.join(path.dirname(file), `.${path.basename(file)}.${randomUUID()}.tmp`);
  await fs.mkdir(path.dirname(file), { recursive: true });
  try {
    const handle = await fs.open(temp, 'w');
    try {
      await handle.writeFile(text);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await fs.rename(temp, file);
  } catch (error) {
    await fs.rm(temp, { force: true });
    throw error;
  }
  await fsyncDir(path.dirname(file));
}

async function fsyncDir(dir: string): Promise<void> {
  const handle = await fs.open(dir, 'r');
  try {
    await handle.sync();
  } catch {
    /* some file systems cannot fsync a folder; the rename is still atomic */
  } finally {
    await handle.close();
  }
}

/**
 * Flushes what was written under `dir` to disk: `sync -f` (syncfs: one call for the whole file system, instead of
 * thousands of fsyncs), else each of `files`.
 */
async function flushFilesystem(dir: string, files: string[] = []): Promise<void> {
  const synced = await new Promise<boolean>((resolve) => execFile('sync', ['-f', dir], (error) => resolve(!error)));
  if (synced) return;
  for (const file of files) {
    const handle = await fs.open(file, 'r');
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  }
}

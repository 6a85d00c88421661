import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, promises as fs, readdirSync } from 'node:fs';
import { hostname } from 'node:os';
import * as path from 'node:path';
import { isSafeId, taskPaths, type AppliedDoc } from '../../protocol';
import { applyStateDir, tryAcquireApplyLock } from './apply-lock';
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
 * Recovery (at the next caesar command, under the apply lock): `journal/` with `written` → finish recording (step
 * 5); without it → roll back from the copies, which were complete before anything changed; temp and done folders are
 * simply removed. Every crash point therefore ends as before or as applied.
 */

const JOURNAL = 'journal';
const WRITTEN = 'written';
const PATCH = 'patch';
const DOC = 'journal.json';

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

export type RecoveryAction = 'rolled_back' | 'finished' | 'busy' | 'failed';

export interface RecoveryReport {
  action: RecoveryAction;
  task_id?: string;
  files: number;
  message: string;
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
  if (bad) throw new Error(`Refusing to apply a change to ${JSON.stringify(rel)}: not a plain path inside the checkout.`);
}

/** The parent folders of `rel` inside `checkout` must be real folders (or absent), never symlinks leading elsewhere. */
async function assertNoSymlinkedParent(checkout: string, rel: string): Promise<void> {
  const parts = rel.split('/');
  let at = checkout;
  for (const part of parts.slice(0, -1)) {
    at = path.join(at, part);
    const stat = await fs.lstat(at).catch(() => undefined);
    if (!stat) return;
    if (stat.isSymbolicLink()) throw new Error(`Refusing to write ${rel}: ${path.relative(checkout, at)} is a symbolic link.`);
    if (!stat.isDirectory()) return;
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Test hook: CAESAR_TEST_APPLY_CRASH=<step>[:<n>] SIGKILLs this process's group (or, with the prefix `self:`, only
// this process) at that step. Used by test/reliability/apply-crash.test.ts to crash at chosen moments.

function crashSpec(): { step: string; n: number; self: boolean } | undefined {
  const raw = process.env.CAESAR_TEST_APPLY_CRASH;
  if (!raw) return undefined;
  const self = raw.startsWith('self:');
  const [step = '', n = '0'] = (self ? raw.slice(5) : raw).split(':');
  return { step, n: Number(n), self };
}

export function crashNow(self: boolean): void {
  if (!self) {
    try {
      process.kill(-process.pid, 'SIGKILL');
    } catch {
      /* not a group leader: the process alone */
    }
  }
  process.kill(process.pid, 'SIGKILL');
}

/** Crashes at `step` (after the n-th occurrence for counted steps) when the test hook asks for it. */
export function testCrashPoint(step: string, count = 0): void {
  const spec = crashSpec();
  if (spec && spec.step === step && spec.n === count) crashNow(spec.self);
}

/** `git:<ms>`: the delay after git apply's start at which to crash, if asked. */
export function testCrashDelay(step: string): { ms: number; self: boolean } | undefined {
  const spec = crashSpec();
  return spec && spec.step === step ? { ms: spec.n, self: spec.self } : undefined;
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
    await writeDurable(recordFile(this.doc), sealedJsonText(recordFile(this.doc), 'applied', this.doc.record));
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

function recordFile(doc: JournalDoc): string {
  return path.join(taskPaths(doc.task_root, doc.task_id).dir, 'applied.json');
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
    if (parents.symlinked) throw new Error(`Refusing to write ${rel}: ${parents.symlinked} is a symbolic link.`);
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
    } else {
      throw new Error(`Cannot apply to ${rel}: it is neither a file nor a symbolic link in the checkout.`);
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
// Recovery

/** True when a journal (or its leftovers) may be waiting in this checkout: a few stats, no git. */
export function hasApplyLeftovers(checkout: string): boolean {
  try {
    // lock.json too: a lock whose holder died before its journal existed is reclaimed (and removed) by the recovery.
    return readdirSync(applyStateDir(checkout)).some((n) => n === JOURNAL || n.startsWith(`${JOURNAL}.`) || n === 'lock.json');
  } catch {
    return false;
  }
}

/**
 * Finishes or rolls back an apply that was interrupted in `checkout`, under the apply lock; returns undefined when
 * there was nothing to do. A lock held by a live apply means the journal is that apply's own: left alone ('busy').
 */
export async function recoverInterruptedApply(checkout: string): Promise<RecoveryReport | undefined> {
  const base = applyStateDir(checkout);
  const names = await fs.readdir(base).catch(() => [] as string[]);
  if (!names.some((n) => n === JOURNAL || n.startsWith(`${JOURNAL}.`) || n === 'lock.json')) return undefined;
  const lock = await tryAcquireApplyLock(checkout, 'recovery');
  if (typeof lock === 'string') return { action: 'busy', files: 0, message: `An apply is in progress: ${lock}` };
  try {
    return await recoverLocked(checkout);
  } finally {
    await lock.release();
  }
}

/** The same, for a caller that holds the apply lock already. */
export async function recoverLocked(checkout: string): Promise<RecoveryReport | undefined> {
  const base = applyStateDir(checkout);
  const names = await fs.readdir(base).catch(() => [] as string[]);
  // A temp journal was never complete (nothing was touched); a done one was committed. Both are only garbage.
  for (const name of names.filter((n) => n.startsWith(`${JOURNAL}.tmp-`) || n.startsWith(`${JOURNAL}.done-`))) {
    await fs.rm(path.join(base, name), { recursive: true, force: true });
  }
  const dir = path.join(base, JOURNAL);
  if (!existsSync(dir)) return undefined;
  let doc: JournalDoc;
  try {
    doc = await readJournal(checkout, dir);
  } catch (error) {
    return { action: 'failed', files: 0, message: `An interrupted apply's journal (${dir}) cannot be used: ${(error as Error).message}. Nothing was changed; inspect it, then remove it.` };
  }
  const journal = new ApplyJournal(checkout, dir, doc);
  const files = doc.entries.length;
  try {
    await stopLeftoverGit(journal.patchFile);
    if (await isRecorded(doc)) {
      await journal.remove();
      return { action: 'finished', task_id: doc.task_id, files, message: `The interrupted apply of task ${doc.task_id} had completed (${files} file(s)); its journal is cleared.` };
    }
    if (existsSync(path.join(dir, WRITTEN))) {
      await journal.commit();
      return { action: 'finished', task_id: doc.task_id, files, message: `Finished the interrupted apply of task ${doc.task_id}: all ${files} file(s) had been written; it is now recorded as applied.` };
    }
    await journal.rollback();
    return {
      action: 'rolled_back',
      task_id: doc.task_id,
      files,
      message: `Rolled back the interrupted apply of task ${doc.task_id}: its ${files} file(s) are as they were before it (nothing of it is applied). Apply it again with \`caesar apply ${doc.task_id}\`.`,
    };
  } catch (error) {
    return { action: 'failed', task_id: doc.task_id, files, message: `The interrupted apply of task ${doc.task_id} could not be completed yet (${(error as Error).message}); its journal stays in ${dir} and the next caesar command tries again.` };
  }
}

async function readJournal(checkout: string, dir: string): Promise<JournalDoc> {
  const doc = JSON.parse(await fs.readFile(path.join(dir, DOC), 'utf8')) as JournalDoc;
  if (doc?.version !== 1 || typeof doc.token !== 'string' || !Array.isArray(doc.entries) || !Array.isArray(doc.created_dirs)) throw new Error('not a journal this version wrote');
  if (!isSafeId(doc.task_id) || typeof doc.task_root !== 'string' || !path.isAbsolute(doc.task_root)) throw new Error('it names no valid task');
  // A journal copied from (or planted by) another checkout must never write here.
  if (doc.checkout !== (await fs.realpath(checkout))) throw new Error(`it belongs to ${doc.checkout}`);
  for (const entry of doc.entries) assertSafeRelPath(entry.path);
  for (const rel of doc.created_dirs) assertSafeRelPath(rel);
  for (const entry of doc.entries.filter((e) => e.kind === 'file')) {
    if (!/^\d+$/.test(entry.backup ?? '') || typeof entry.mode !== 'number' || typeof entry.size !== 'number') throw new Error(`its entry for ${entry.path} is malformed`);
  }
  return doc;
}

async function isRecorded(doc: JournalDoc): Promise<boolean> {
  try {
    const current = JSON.parse(await fs.readFile(recordFile(doc), 'utf8')) as AppliedDoc;
    return current.applied_at === doc.record.applied_at && current.patch_digest === doc.record.patch_digest;
  } catch {
    return false;
  }
}

/**
 * A git apply whose parent was killed alone keeps writing: it must be gone before anything is rolled back. It is
 * found by its command line, which names this journal's patch file (Linux /proc; elsewhere the process group kill
 * of the parent is the boundary).
 */
async function stopLeftoverGit(patchFile: string): Promise<void> {
  for (let round = 0; round < 100; round++) {
    const pids = await processesNaming(patchFile);
    if (pids.length === 0) return;
    for (const pid of pids) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        /* gone already */
      }
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`a git apply of ${patchFile} is still running`);
}

async function processesNaming(file: string): Promise<number[]> {
  const needle = Buffer.from(file);
  const names = await fs.readdir('/proc').catch(() => [] as string[]);
  const found: number[] = [];
  for (const name of names) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    const cmdline = await fs.readFile(`/proc/${name}/cmdline`).catch(() => undefined);
    if (cmdline?.includes(needle)) found.push(Number(name));
  }
  return found;
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

/**
 * The checkout holding an interrupted apply's journal for a command run in caesar root `root`: the root itself or
 * the ancestor that is its git toplevel (where worktree tasks are applied). Stats only, so every command can ask.
 */
export function findApplyLeftovers(root: string): string | undefined {
  for (let dir = path.resolve(root), hops = 0; hops < 64; hops++) {
    if (hasApplyLeftovers(dir)) return dir;
    if (existsSync(path.join(dir, '.git'))) return undefined;
    const parent = path.dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
  return undefined;
}

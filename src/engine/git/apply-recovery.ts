import { existsSync, promises as fs, readdirSync } from 'node:fs';
import * as path from 'node:path';
import { isSafeId, type AppliedDoc } from '../../protocol';
import { applyStateDir, tryAcquireApplyLock } from './apply-lock';
import { ApplyJournal, assertSafeRelPath, DOC, JOURNAL, recordFile, WRITTEN, type JournalDoc } from './apply-journal';

/*
 * Recovery of an interrupted apply (the journal's write is apply-journal.ts): at the next caesar command, under the
 * apply lock, a journal with `written` is finished, one without it rolled back, temp and done folders removed. A
 * journal is read as hostile (a clone or an agent may have planted it): it must name this checkout, a valid task
 * and plain paths inside the checkout, or it is left alone for the user to inspect.
 */

export type RecoveryAction = 'rolled_back' | 'finished' | 'busy' | 'failed';

export interface RecoveryReport {
  action: RecoveryAction;
  task_id?: string;
  files: number;
  message: string;
}

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

import { randomBytes } from 'node:crypto';
import { closeSync, lstatSync, openSync, readdirSync, rmSync, constants } from 'node:fs';
import * as path from 'node:path';
import type { Finding } from '../../protocol';
import { CAESAR_DIR } from '../../protocol';
import { runGit } from './git';

/*
 * The snapshot of a checkout (reconcile.ts) is git's view: ignored files are not in it. An agent that writes
 * `node_modules/x/index.js` or `.env` in the user's checkout — in place, in either mode, or from a worktree with the
 * sandbox off — changed nothing git sees. Those writes are found by the kernel's change time instead: every write,
 * creation, rename or chmod sets an inode's ctime to now, and nobody but root can set it back (utimes sets mtime, and
 * ctime to now). So, at the start, the time is taken from the file system itself (a marker file's ctime: the clock of
 * the disk that holds the checkout, a network one's included) and the ignored top-level entries are listed (one cheap
 * `git ls-files --directory`, which stops at each ignored folder); at the end every ignored entry is walked and each
 * one changed since is named, and an entry gone since the start is named as removed.
 *
 * Nothing is kept per file at the start, so a node_modules of any size costs the start nothing. The walk at the end
 * is bounded: past WALK_LIMIT entries it stops, and the task gets a high finding saying its ignored files were not all
 * checked (never a silent pass).
 */

/** What the end is compared with. */
export interface IgnoredAtStart {
  /** The ctime (ms) of a file created at the start, on the checkout's own file system. */
  since: number;
  /** The ignored entries `git ls-files --others --ignored --directory` listed (folders end with '/'). */
  entries: string[];
}

/** Entries walked at most at the end (measured: docs/performance.md). */
export const WALK_LIMIT = 200_000;
/** The walk yields to the event loop every this many entries (the supervisor's other work goes on). */
const SLICE = 2_000;

/** The start's record: the file system's time now and the ignored entries. Fails (the caller reports it) on error. */
export async function recordIgnoredAtStart(gitRoot: string, markerDir: string): Promise<IgnoredAtStart> {
  const since = fileSystemNow(markerDir);
  return { since, entries: await listIgnored(gitRoot) };
}

/** The ctime of a file created now in `dir` (then removed): the time the file system stamps writes with. */
function fileSystemNow(dir: string): number {
  const marker = path.join(dir, `.ignored-since-${randomBytes(6).toString('hex')}`);
  closeSync(openSync(marker, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600));
  try {
    return lstatSync(marker).ctimeMs;
  } finally {
    rmSync(marker, { force: true });
  }
}

async function listIgnored(gitRoot: string): Promise<string[]> {
  const listed = await runGit(['ls-files', '--others', '--ignored', '--exclude-standard', '--directory', '-z'], { cwd: gitRoot, env: { GIT_OPTIONAL_LOCKS: '0' } });
  // Caesar's own folders (task records, worktrees) change during every task: never the agent's write to report.
  return listed.stdout.toString('utf8').split('\0').filter((entry) => entry && !entry.split('/').includes(CAESAR_DIR));
}

export interface IgnoredChanges {
  /** Entries written, created, renamed or changed since the start (a folder: an entry added to or removed from it). */
  changed: string[];
  /** Ignored entries listed at the start that are gone (without their trailing '/'). */
  removed: string[];
  /** The walk stopped at its limit: the first entry it did not look into. */
  unchecked?: string;
}

/** The ignored entries changed since `start`, walked without following links (lstat), at most `limit` of them. */
export async function ignoredChangesSince(gitRoot: string, start: IgnoredAtStart, limit = WALK_LIMIT): Promise<IgnoredChanges> {
  const now = new Set((await listIgnored(gitRoot)).map(withoutSlash));
  // An entry of the start git no longer lists may still be there (a folder emptied): walked too, not called removed.
  const gone = start.entries.map(withoutSlash).filter((entry) => !now.has(entry));
  const out: IgnoredChanges = { changed: [], removed: gone.filter((entry) => !lstatSync(path.join(gitRoot, entry), { throwIfNoEntry: false })) };
  for (const entry of gone) if (!out.removed.includes(entry)) now.add(entry);
  const pending = [...now].reverse();
  let walked = 0;
  while (pending.length) {
    const rel = pending.pop() as string;
    if (walked >= limit) {
      out.unchecked = rel;
      break;
    }
    if (++walked % SLICE === 0) await new Promise((resolve) => setImmediate(resolve));
    const stats = lstatSync(path.join(gitRoot, rel), { throwIfNoEntry: false });
    if (!stats) continue; // removed while walked: its folder's change names it
    if (stats.ctimeMs > start.since) out.changed.push(rel);
    if (!stats.isDirectory()) continue;
    let names: string[];
    try {
      names = readdirSync(path.join(gitRoot, rel));
    } catch {
      continue; // unreadable folder: its own change time was checked
    }
    for (let i = names.length - 1; i >= 0; i--) if (names[i] !== CAESAR_DIR) pending.push(`${rel}/${names[i]}`);
  }
  return out;
}

function withoutSlash(entry: string): string {
  return entry.endsWith('/') ? entry.slice(0, -1) : entry;
}

/** The finding for ignored files changed in the checkout during the task; undefined when none changed. */
export async function ignoredWritesFinding(gitRoot: string, start: IgnoredAtStart, who: 'worktree' | 'inplace', limit = WALK_LIMIT): Promise<Finding[]> {
  let changes: IgnoredChanges;
  try {
    changes = await ignoredChangesSince(gitRoot, start, limit);
  } catch (err) {
    return [{ severity: 'high', title: 'Ignored files not checked', detail: `Whether the task wrote ignored files of your checkout (${gitRoot}) could not be checked: ${err instanceof Error ? err.message : String(err)}. Review them before you trust the result.` }];
  }
  const findings: Finding[] = [];
  const named = [...changes.changed, ...changes.removed.map((entry) => `${entry} (removed)`)];
  if (named.length) {
    const shown = named.length > 20 ? `${named.slice(0, 20).join(', ')} and ${named.length - 20} more` : named.join(', ');
    findings.push({
      severity: 'high',
      title: 'Ignored files of your checkout changed during the task',
      detail:
        `These files of your checkout (${gitRoot}) that git ignores, so no diff shows, were written, created or removed while the task ran: ${shown}. ` +
        (who === 'worktree'
          ? 'The agent worked in its worktree: it may have written outside it. If you (or your tools) changed them, ignore this.'
          : 'The agent worked in your checkout: look at them (a build\'s output is expected; a secret file or an installed package is not).'),
    });
  }
  if (changes.unchecked !== undefined) {
    findings.push({
      severity: 'high',
      title: 'Ignored files not fully checked',
      detail: `Your checkout (${gitRoot}) holds more than ${limit.toLocaleString('en-US')} ignored files and folders: the check for the task's writes into them stopped at ${changes.unchecked}. Review the ignored files the task could have written before you trust the result.`,
    });
  }
  return findings;
}

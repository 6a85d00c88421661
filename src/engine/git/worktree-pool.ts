import { randomBytes } from 'node:crypto';
import { existsSync, promises as fs } from 'node:fs';
import * as path from 'node:path';
import { isPidAlive } from '../../base/process';
import { worktreesDir } from '../../protocol';
import { gitText, runGit } from './git';

/**
 * A warm worktree pool (`[worktree] pool = N`, off by default): per repository, up to N idle worktrees already checked
 * out under `.caesar/wt/pool-<hex>`, so a task's worktree is a rename, a checkout of only the files that differ from
 * its base and a clean, instead of a full checkout (seconds on a real disk at 10k files, issue 14).
 *
 * Layout: `.caesar/wt/pool-<hex>/` is an idle worktree (detached HEAD, clean); `.caesar/wt/.pool/<name>` marks it
 * claimable (an atomic rename of that marker is the claim, so two supervisors never get the same one);
 * `.caesar/wt/.pool/size` is the size the last task asked for, so a discarded task's worktree can come back.
 *
 * Isolation: every hand-out runs `checkout --force` onto the task's base (tracked files and the index), `clean -ffdx`
 * (untracked and ignored files, nested repositories: what an agent or `[worktree] copy/link/setup` left) and drops
 * the worktree's own git state (config.worktree, an interrupted merge or rebase). Repositories with submodules are
 * never pooled: git cannot move a worktree that has them, and their state lives outside the worktree.
 */

const PREFIX = 'pool-';
const MARKERS = '.pool';
const SIZE_FILE = 'size';
/** Past this, the pool stops growing: a full disk hurts more than a slow start. */
const DEFAULT_MIN_FREE_BYTES = 1024 * 1024 * 1024;
/** Per-worktree git state an agent may leave behind (git-worktree(1): these live in the worktree's admin dir). */
const ADMIN_LEFTOVERS = ['config.worktree', 'MERGE_HEAD', 'MERGE_MSG', 'MERGE_MODE', 'CHERRY_PICK_HEAD', 'REVERT_HEAD', 'BISECT_LOG', 'rebase-merge', 'rebase-apply', 'sequencer', 'AUTO_MERGE'];

export interface WarmWorktree {
  path: string;
  branch: string;
  base_ref: string;
}

function markersDir(gitRoot: string): string {
  return path.join(worktreesDir(gitRoot), MARKERS);
}

/** The idle worktrees' names (those with a claimable marker). */
export async function idleWorktrees(gitRoot: string): Promise<string[]> {
  const names = await fs.readdir(markersDir(gitRoot)).catch(() => [] as string[]);
  return names.filter((n) => n.startsWith(PREFIX) && existsSync(path.join(worktreesDir(gitRoot), n)));
}

async function hasSubmodules(dir: string): Promise<boolean> {
  return existsSync(path.join(dir, '.gitmodules'));
}

/**
 * Hands out an idle worktree as the task's: claimed, moved to `.caesar/wt/<id>`, switched to a new branch at
 * `startPoint` (HEAD by default) touching only the files that differ, cleaned. undefined when none is idle (or the
 * repository has submodules): the caller creates one the usual way.
 */
export async function takeWarmWorktree(options: { gitRoot: string; id: string; branch: string; startPoint?: string; baseRef?: string }): Promise<WarmWorktree | undefined> {
  const { gitRoot, branch } = options;
  const target = path.join(worktreesDir(gitRoot), options.id);
  if ((await hasSubmodules(gitRoot)) || existsSync(target)) return undefined;
  // Resolved first: an unknown start point fails before any idle worktree is claimed.
  const commit = await gitText(['rev-parse', '--verify', `${options.startPoint ?? 'HEAD'}^{commit}`], gitRoot);
  for (const name of await idleWorktrees(gitRoot)) {
    const claimed = path.join(markersDir(gitRoot), `.claimed-${name}-${process.pid}`);
    try {
      await fs.rename(path.join(markersDir(gitRoot), name), claimed);
    } catch {
      continue; // another task claimed it first
    }
    try {
      const moved = await runGit(['worktree', 'move', path.join(worktreesDir(gitRoot), name), target], { cwd: gitRoot, okCodes: [0, 128] });
      if (moved.code !== 0) {
        await discardBroken(gitRoot, path.join(worktreesDir(gitRoot), name));
        continue;
      }
      await resetForTask(target, branch, commit);
      const base_ref = options.baseRef ? await gitText(['rev-parse', '--verify', `${options.baseRef}^{commit}`], target) : commit;
      return { path: target, branch, base_ref };
    } catch (err) {
      // Never hand out a worktree in an unknown state: remove it and let the caller create a fresh one.
      await discardBroken(gitRoot, existsSync(target) ? target : path.join(worktreesDir(gitRoot), name));
      if (/already exists/i.test(String((err as Error)?.message))) throw err;
    } finally {
      await fs.rm(claimed, { force: true });
    }
  }
  return undefined;
}

/** The task's branch at `commit`, the index and tracked files forced to it, everything else removed. */
async function resetForTask(worktree: string, branch: string, commit: string): Promise<void> {
  await dropAdminLeftovers(worktree);
  await runGit(['checkout', '-q', '--force', '--no-recurse-submodules', '-B', branch, commit], { cwd: worktree });
  await runGit(['clean', '-q', '-ffdx'], { cwd: worktree });
}

async function dropAdminLeftovers(worktree: string): Promise<void> {
  const admin = await adminDir(worktree);
  await Promise.all(ADMIN_LEFTOVERS.map((name) => fs.rm(path.join(admin, name), { recursive: true, force: true })));
}

/** The worktree's admin dir, read from its `.git` file (`gitdir: <path>`) rather than asking git. */
async function adminDir(worktree: string): Promise<string> {
  const text = await fs.readFile(path.join(worktree, '.git'), 'utf8').catch(() => '');
  const gitdir = /^gitdir: (.+)$/m.exec(text)?.[1]?.trim();
  return gitdir ? path.resolve(worktree, gitdir) : gitText(['rev-parse', '--absolute-git-dir'], worktree);
}

async function discardBroken(gitRoot: string, dir: string): Promise<void> {
  await runGit(['worktree', 'remove', '--force', dir], { cwd: gitRoot, okCodes: [0, 128] }).catch(() => undefined);
  await fs.rm(dir, { recursive: true, force: true }).catch(() => undefined);
  await runGit(['worktree', 'prune'], { cwd: gitRoot, okCodes: [0, 128] }).catch(() => undefined);
}

/**
 * Tops the pool up to `size` idle worktrees at HEAD (`git worktree add --detach`), one refill at a time per
 * repository, and never below `minFreeBytes` of free disk. Records `size` for recycleWorktree. Returns how many it added.
 */
export async function refillPool(options: { gitRoot: string; size: number; minFreeBytes?: number }): Promise<number> {
  const { gitRoot } = options;
  const size = Math.max(0, Math.min(16, Math.floor(options.size)));
  await fs.mkdir(markersDir(gitRoot), { recursive: true });
  await fs.writeFile(path.join(markersDir(gitRoot), SIZE_FILE), `${size}\n`);
  if (!size || (await hasSubmodules(gitRoot))) return 0;
  const lock = path.join(markersDir(gitRoot), '.refill.lock');
  if (!(await takeLock(lock))) return 0;
  let added = 0;
  try {
    while ((await idleWorktrees(gitRoot)).length < size && (await enoughDisk(gitRoot, options.minFreeBytes ?? DEFAULT_MIN_FREE_BYTES))) {
      const name = `${PREFIX}${randomBytes(6).toString('hex')}`;
      const dir = path.join(worktreesDir(gitRoot), name);
      await runGit(['worktree', 'add', '-q', '--detach', dir, 'HEAD'], { cwd: gitRoot });
      // Best effort: an unsettled worktree is still a good one, only slower to hand out.
      await settleIndex(dir).catch(() => undefined);
      await fs.writeFile(path.join(markersDir(gitRoot), name), '');
      added++;
    }
  } finally {
    await fs.rm(lock, { force: true });
  }
  return added;
}

/** An exclusive lock file holding our pid; a lock whose process is gone is taken over. */
async function takeLock(lock: string): Promise<boolean> {
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      await fs.writeFile(lock, `${process.pid}\n`, { flag: 'wx' });
      return true;
    } catch {
      const holder = Number((await fs.readFile(lock, 'utf8').catch(() => '')).trim());
      if (holder && isPidAlive(holder)) return false;
      await fs.rm(lock, { force: true });
    }
  }
  return false;
}

async function enoughDisk(dir: string, minFreeBytes: number): Promise<boolean> {
  try {
    const stats = await fs.statfs(dir);
    return stats.bavail * stats.bsize >= minFreeBytes;
  } catch {
    return false;
  }
}

/** The pool size recorded by the last refill (0 when the pool was never used). */
async function recordedSize(gitRoot: string): Promise<number> {
  const text = await fs.readFile(path.join(markersDir(gitRoot), SIZE_FILE), 'utf8').catch(() => '0');
  return Number(text.trim()) || 0;
}

/**
 * A worktree git has just checked out has a "racily clean" index: its files were written in the same second as the
 * index, so at every later look git re-reads the content of each of them (issue 14: the hand-out's checkout took 300 ms
 * of the 1 s to the agent's start at 10k files on a real disk) until the index is written again in a later
 * second. An idle worktree has time: once the second has passed, one refresh rewrites its index with stat data git
 * can trust, and the hand-out compares stats only. Nothing in the worktree changes (only its index's cached stats).
 */
async function settleIndex(worktree: string): Promise<void> {
  const index = path.join(await adminDir(worktree), 'index');
  const written = (await fs.stat(index)).mtimeMs;
  const wait = Math.floor(written / 1000) * 1000 + 1000 + SETTLE_MARGIN_MS - Date.now();
  if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
  // Exit 1 means some file differs from the index: not in a fresh checkout, and the hand-out forces every file anyway.
  await runGit(['update-index', '-q', '--refresh'], { cwd: worktree, okCodes: [0, 1] });
}

/** Past the second boundary by this much, so that the rewritten index's time is surely in a later second. */
const SETTLE_MARGIN_MS = 20;

/**
 * A finished task's worktree back into the pool instead of deleting it (discard, apply, gc), when the pool has room:
 * detached, cleaned now (so an idle worktree holds nothing of its task) and cleaned again at hand-out. false when it
 * was not taken (no pool, pool full, submodules, any git error): the caller removes it as usual.
 */
export async function recycleWorktree(options: { gitRoot: string; path: string }): Promise<boolean> {
  const { gitRoot } = options;
  const size = await recordedSize(gitRoot);
  if (!size || (await idleWorktrees(gitRoot)).length >= size || (await hasSubmodules(options.path))) return false;
  const name = `${PREFIX}${randomBytes(6).toString('hex')}`;
  const dir = path.join(worktreesDir(gitRoot), name);
  try {
    await dropAdminLeftovers(options.path);
    await runGit(['checkout', '-q', '--force', '--no-recurse-submodules', '--detach'], { cwd: options.path });
    await runGit(['clean', '-q', '-ffdx'], { cwd: options.path });
    await runGit(['worktree', 'move', options.path, dir], { cwd: gitRoot });
    await fs.mkdir(markersDir(gitRoot), { recursive: true });
    await fs.writeFile(path.join(markersDir(gitRoot), name), '');
    return true;
  } catch {
    return false;
  }
}

/** Removes every idle worktree of the pool (gc, or the pool turned off). */
export async function drainPool(gitRoot: string): Promise<number> {
  let removed = 0;
  for (const name of await idleWorktrees(gitRoot)) {
    const claimed = path.join(markersDir(gitRoot), `.claimed-${name}-${process.pid}`);
    if (!(await fs.rename(path.join(markersDir(gitRoot), name), claimed).then(() => true, () => false))) continue;
    await discardBroken(gitRoot, path.join(worktreesDir(gitRoot), name));
    await fs.rm(claimed, { force: true });
    removed++;
  }
  return removed;
}

/** True for the pool's own entries under `.caesar/wt` (idle worktrees and the markers folder), which no task records. */
export function isPoolEntry(name: string): boolean {
  return name === MARKERS || name.startsWith(PREFIX);
}

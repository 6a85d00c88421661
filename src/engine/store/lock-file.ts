import { randomUUID } from 'node:crypto';
import { promises as fs } from 'node:fs';
import { hostname } from 'node:os';
import { createExclusive } from '../../base/atomic';
import { isPidAlive } from '../../base/process';

/*
 * A lock that survives a crash: a file created exclusively, holding who took it (task, pid, host, a token, when). A
 * holder that died on this host is reclaimed by whoever looks next (moved aside: a rename is atomic, so one reclaimer
 * wins); only the owner's token removes it, so a lock reclaimed from a holder presumed dead stays its new owner's.
 * The in-place writer lease (writer-lock.ts) and the apply lock (git/apply-lock.ts) are this, with their own words.
 */

export interface LockHolder {
  task_id: string;
  pid: number;
  host: string;
  token: string;
  acquired_at: string;
}

export interface HeldLock {
  release(): Promise<void>;
}

/** Why the lock is not free: a live holder (named), one still writing its file, or a file that kept changing hands. */
export type LockRefusal = { holder: LockHolder } | { starting: true } | { churning: true };

/** A lock file that cannot be read this long after it appeared is garbage (it is created complete, by a link). */
const UNREADABLE_GRACE_MS = 2000;

export async function tryLockFile(file: string, taskId: string): Promise<HeldLock | LockRefusal> {
  const me: LockHolder = { task_id: taskId, pid: process.pid, host: hostname(), token: randomUUID(), acquired_at: new Date().toISOString() };
  for (let attempt = 0; attempt < 3; attempt++) {
    if (await createExclusive(file, `${JSON.stringify(me)}\n`)) return heldLock(file, me.token);
    const current = await readHolder(file);
    if (current === 'gone') continue;
    if (current === 'unreadable') {
      const age = Date.now() - (await fs.stat(file).then((s) => s.mtimeMs, () => 0));
      if (age < UNREADABLE_GRACE_MS) return { starting: true };
    } else if (current.host !== hostname() || isPidAlive(current.pid)) {
      return { holder: current };
    }
    // Its holder died (kill -9, power loss): move it aside and try again.
    const aside = `${file}.stale-${me.token}`;
    await fs.rename(file, aside).then(() => fs.rm(aside, { force: true }), () => undefined);
  }
  return { churning: true };
}

export function isHeld(outcome: HeldLock | LockRefusal): outcome is HeldLock {
  return 'release' in outcome;
}

/** "pid 42" or "pid 42 on other-host": where a holder runs, as the refusals say it. */
export function holderPlace(holder: LockHolder): string {
  return `pid ${holder.pid}${holder.host !== hostname() ? ` on ${holder.host}` : ''}`;
}

function heldLock(file: string, token: string): HeldLock {
  let released = false;
  return {
    async release() {
      if (released) return;
      released = true;
      const current = await readHolder(file);
      if (typeof current === 'object' && current.token === token) await fs.rm(file, { force: true });
    },
  };
}

async function readHolder(file: string): Promise<LockHolder | 'gone' | 'unreadable'> {
  try {
    const value = JSON.parse(await fs.readFile(file, 'utf8')) as Partial<LockHolder>;
    if (typeof value.pid === 'number' && typeof value.token === 'string' && typeof value.task_id === 'string' && typeof value.host === 'string') {
      return value as LockHolder;
    }
    return 'unreadable';
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ENOENT' ? 'gone' : 'unreadable';
  }
}

import { randomUUID } from 'node:crypto';
import { promises as fs } from 'node:fs';
import { hostname } from 'node:os';
import * as path from 'node:path';
import { createExclusive } from '../../base/atomic';
import { isPidAlive } from '../../base/process';
import { stateDir } from '../../protocol';

/**
 * One apply at a time per checkout (issue 23): two `git apply` writing one file at once each read it, patch it and
 * write it back, so the last one silently drops the other's change while both say "Applied". The lock is a file
 * created exclusively under `<checkout>/.caesar/state/apply/` holding pid, host and start time, as the in-place
 * writer lease (writer-lock.ts) and the slots (slots.ts) do: it survives a crash, and a holder that died on this host
 * is reclaimed by whoever looks next. A second apply waits for the first (bounded), then goes on with the checkout as
 * the first one left it; the journal's recovery takes it too, so nothing rolls back under a live apply.
 */
export interface ApplyLock {
  release(): Promise<void>;
}

export class ApplyBusyError extends Error {
  override readonly name = 'ApplyBusyError';
}

interface Holder {
  task_id: string;
  pid: number;
  host: string;
  token: string;
  acquired_at: string;
}

/** A lock file that cannot be read this long after it appeared is garbage (it is created complete, by a link). */
const UNREADABLE_GRACE_MS = 2000;
const POLL_MS = 40;

export function applyStateDir(checkout: string): string {
  return path.join(stateDir(checkout), 'apply');
}

export function applyLockPath(checkout: string): string {
  return path.join(applyStateDir(checkout), 'lock.json');
}

/** Takes the checkout's apply lock, waiting up to `waitMs` for a live holder; throws ApplyBusyError after that. */
export async function acquireApplyLock(checkout: string, taskId: string, waitMs: number): Promise<ApplyLock> {
  const deadline = Date.now() + waitMs;
  for (;;) {
    const taken = await tryAcquireApplyLock(checkout, taskId);
    if (typeof taken !== 'string') return taken;
    if (Date.now() >= deadline) throw new ApplyBusyError(taken);
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

/** The lock, or why it is not free right now (a live holder, named). */
export async function tryAcquireApplyLock(checkout: string, taskId: string): Promise<ApplyLock | string> {
  const file = applyLockPath(checkout);
  const me: Holder = { task_id: taskId, pid: process.pid, host: hostname(), token: randomUUID(), acquired_at: new Date().toISOString() };
  for (let attempt = 0; attempt < 3; attempt++) {
    if (await createExclusive(file, `${JSON.stringify(me)}\n`)) return lockFor(file, me.token);
    const current = await readHolder(file);
    if (current === 'gone') continue;
    if (current === 'unreadable') {
      const age = Date.now() - (await fs.stat(file).then((s) => s.mtimeMs, () => 0));
      if (age < UNREADABLE_GRACE_MS) return `Another apply is starting in ${checkout}.`;
    } else if (current.host !== hostname() || isPidAlive(current.pid)) {
      return `Task ${current.task_id} is being applied to ${checkout} (pid ${current.pid}${current.host !== hostname() ? ` on ${current.host}` : ''}, since ${current.acquired_at}).`;
    }
    // Its holder died (kill -9, power loss): move it aside (rename is atomic, one reclaimer wins) and try again.
    const aside = `${file}.stale-${me.token}`;
    await fs.rename(file, aside).then(() => fs.rm(aside, { force: true }), () => undefined);
  }
  return `The apply lock of ${checkout} keeps changing hands.`;
}

function lockFor(file: string, token: string): ApplyLock {
  let released = false;
  return {
    async release() {
      if (released) return;
      released = true;
      const current = await readHolder(file);
      // Only the owner removes it: a lock reclaimed by someone else after we were presumed dead is theirs now.
      if (typeof current === 'object' && current.token === token) await fs.rm(file, { force: true });
    },
  };
}

async function readHolder(file: string): Promise<Holder | 'gone' | 'unreadable'> {
  try {
    const value = JSON.parse(await fs.readFile(file, 'utf8')) as Partial<Holder>;
    if (typeof value.pid === 'number' && typeof value.token === 'string' && typeof value.task_id === 'string' && typeof value.host === 'string') {
      return value as Holder;
    }
    return 'unreadable';
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ENOENT' ? 'gone' : 'unreadable';
  }
}

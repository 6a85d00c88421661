import * as path from 'node:path';
import { stateDir } from '../../protocol';
import { holderPlace, isHeld, tryLockFile } from '../store/lock-file';

/**
 * One apply at a time per checkout (issue 23): two `git apply` writing one file at once each read it, patch it and
 * write it back, so the last one silently drops the other's change while both say "Applied". The lock is a file
 * created exclusively under `<checkout>/.caesar/state/apply/` holding pid, host and start time (store/lock-file.ts,
 * as the in-place writer lease): it survives a crash, and a holder that died on this host is reclaimed by whoever
 * looks next. A second apply waits for the first (bounded), then goes on with the checkout as
 * the first one left it; the journal's recovery takes it too, so nothing rolls back under a live apply.
 */
export interface ApplyLock {
  release(): Promise<void>;
}

export class ApplyBusyError extends Error {
  override readonly name = 'ApplyBusyError';
}

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
  const taken = await tryLockFile(applyLockPath(checkout), taskId);
  if (isHeld(taken)) return taken;
  if ('starting' in taken) return `Another apply is starting in ${checkout}.`;
  if ('churning' in taken) return `The apply lock of ${checkout} keeps changing hands.`;
  return `Task ${taken.holder.task_id} is being applied to ${checkout} (${holderPlace(taken.holder)}, since ${taken.holder.acquired_at}).`;
}

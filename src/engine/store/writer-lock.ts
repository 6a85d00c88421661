import { createHash } from 'node:crypto';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { stateDir } from '../../protocol';
import { holderPlace, isHeld, tryLockFile } from './lock-file';

/**
 * In-place writers are exclusive per workspace (reference §2.3.5, §2.13): two agents editing the same files at once
 * would make both diffs meaningless. The lease is a file created exclusively under `.caesar/state/workspace-writers/`;
 * a second writer fails at once, naming the holder — no queueing, since waiting silently on another task's edits is
 * never what the user meant. A lease whose holder died on this host is reclaimed (lock-file.ts).
 */
export interface WriterLease {
  release(): Promise<void>;
}

export class WorkspaceBusyError extends Error {
  override readonly name = 'WorkspaceBusyError';
}

export async function acquireWorkspaceWriter(root: string, workspace: string, taskId: string): Promise<WriterLease> {
  const real = await fs.realpath(workspace).catch(() => path.resolve(workspace));
  const file = path.join(stateDir(root), 'workspace-writers', `${createHash('sha256').update(real).digest('hex')}.json`);
  const taken = await tryLockFile(file, taskId);
  if (isHeld(taken)) return taken;
  if ('starting' in taken) throw new WorkspaceBusyError(`Another task is starting to write in place in ${real}; try again in a moment.`);
  if ('churning' in taken) throw new WorkspaceBusyError(`Could not take the in-place writer lease for ${real}: it keeps changing hands.`);
  const { holder } = taken;
  throw new WorkspaceBusyError(
    `Task ${holder.task_id} (${holderPlace(holder)}) is already writing in place in ${real}. ` +
      `In-place writers are exclusive: wait for it, cancel it (caesar cancel ${holder.task_id}), or use worktree isolation.`,
  );
}

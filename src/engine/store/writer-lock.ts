import { createHash, randomUUID } from 'node:crypto';
import { promises as fs } from 'node:fs';
import { hostname } from 'node:os';
import * as path from 'node:path';
import { createExclusive } from '../../base/atomic';
import { isPidAlive } from '../../base/process';
import { stateDir } from '../../protocol';

/**
 * In-place writers are exclusive per workspace (reference §2.3.5, §2.13): two agents editing the same files at once
 * would make both diffs meaningless. The lease is a file created exclusively under `.caesar/state/workspace-writers/`;
 * a second writer fails at once, naming the holder — no queueing, since waiting silently on another task's edits is
 * never what the user meant. A lease whose holder died on this host is reclaimed.
 */
export interface WriterLease {
  release(): Promise<void>;
}

export class WorkspaceBusyError extends Error {
  override readonly name = 'WorkspaceBusyError';
}

interface Holder {
  task_id: string;
  pid: number;
  host: string;
  token: string;
  acquired_at: string;
}

/** An unreadable lease younger than this may be a holder still writing it (it is created complete, but be safe). */
const UNREADABLE_GRACE_MS = 2000;

export async function acquireWorkspaceWriter(root: string, workspace: string, taskId: string): Promise<WriterLease> {
  const real = await fs.realpath(workspace).catch(() => path.resolve(workspace));
  const file = path.join(stateDir(root), 'workspace-writers', `${createHash('sha256').update(real).digest('hex')}.json`);
  const holder: Holder = { task_id: taskId, pid: process.pid, host: hostname(), token: randomUUID(), acquired_at: new Date().toISOString() };
  for (let attempt = 0; attempt < 3; attempt++) {
    if (await createExclusive(file, `${JSON.stringify(holder)}\n`)) return leaseFor(file, holder.token);
    const current = await readHolder(file);
    if (current === 'gone') continue;
    if (current === 'unreadable') {
      const age = Date.now() - (await fs.stat(file).then((s) => s.mtimeMs, () => Date.now()));
      if (age < UNREADABLE_GRACE_MS) throw new WorkspaceBusyError(`Another task is starting to write in place in ${real}; try again in a moment.`);
    } else if (current.host !== hostname() || isPidAlive(current.pid)) {
      throw new WorkspaceBusyError(
        `Task ${current.task_id} (pid ${current.pid}${current.host !== hostname() ? ` on ${current.host}` : ''}) is already writing in place in ${real}. ` +
          `In-place writers are exclusive: wait for it, cancel it (caesar cancel ${current.task_id}), or use worktree isolation.`,
      );
    }
    // The holder died without releasing: move its lease aside (rename is atomic, so one reclaimer wins) and retry.
    await fs.rename(file, `${file}.stale-${holder.token}`).then(
      () => fs.rm(`${file}.stale-${holder.token}`, { force: true }),
      () => undefined,
    );
  }
  throw new WorkspaceBusyError(`Could not take the in-place writer lease for ${real}: it keeps changing hands.`);
}

function leaseFor(file: string, token: string): WriterLease {
  let released = false;
  return {
    async release() {
      if (released) return;
      released = true;
      const current = await readHolder(file);
      // Only the owner removes it: a lease reclaimed by someone else after we were presumed dead is theirs now.
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

import { randomUUID } from 'node:crypto';
import { promises as fs, watch, type FSWatcher } from 'node:fs';
import { hostname } from 'node:os';
import { isPidAlive } from '../../base/process';
import * as path from 'node:path';
import { stateDir } from '../../protocol';
import { createExclusive } from '../../base/atomic';

/**
 * max_parallel across processes (reference §2.12, with §8.9/§8.12 fixed): `limit` slot files claimed by exclusive
 * create, and a queue of ticket files so waiters are served in arrival order (FIFO) instead of whoever polls first.
 * Waiters sleep on fs.watch of the slot and queue folders; a slow re-check timer is only a safety net for file systems
 * whose watchers miss events. Holders and waiters whose process died on this host are cleaned up by whoever looks.
 */
export interface SlotHolder {
  pid: number;
  host: string;
  token: string;
  started_at: string;
  label?: string;
}

export interface Slot {
  index: number;
  token: string;
  release(): Promise<void>;
}

export interface AcquireSlotOptions {
  root: string;
  limit: number;
  label?: string;
  signal?: AbortSignal;
  /** Called when the number of waiters ahead of us changes (first call included), while we wait. */
  onWait?(ahead: number, holders: SlotHolder[]): void;
  /** Safety re-check period (default 5 s). Wake-ups normally come from fs.watch. */
  safetyIntervalMs?: number;
  /** The pid recorded as holder (default: this process). Tests use it to plant dead holders. */
  pid?: number;
}

/** A slot or ticket file that cannot be read this long after its creation is garbage (a crash mid-write elsewhere). */
const UNREADABLE_GRACE_MS = 2000;

export function slotsDir(root: string): string {
  return path.join(stateDir(root), 'slots');
}

function queueDir(root: string): string {
  return path.join(slotsDir(root), 'queue');
}

export class SlotWaitAborted extends Error {
  override readonly name = 'SlotWaitAborted';
  constructor() {
    super('Cancelled while waiting for a slot');
  }
}

export async function acquireSlot(options: AcquireSlotOptions): Promise<Slot> {
  const { root, limit } = options;
  if (!Number.isInteger(limit) || limit < 1) throw new Error(`max_parallel must be an integer of at least 1 (got ${limit})`);
  const slots = slotsDir(root);
  const queue = queueDir(root);
  await fs.mkdir(queue, { recursive: true });
  const me: SlotHolder = {
    pid: options.pid ?? process.pid,
    host: hostname(),
    token: randomUUID(),
    started_at: new Date().toISOString(),
    ...(options.label ? { label: options.label } : {}),
  };
  // Zero-padded milliseconds then a high-resolution counter: file names sort in creation order.
  const ticket = `${Date.now().toString().padStart(15, '0')}-${process.hrtime.bigint().toString().padStart(20, '0')}-${me.token}.json`;
  const ticketPath = path.join(queue, ticket);
  await createExclusive(ticketPath, JSON.stringify(me));

  const wake = new Wakeup([slots, queue], options.safetyIntervalMs ?? 5000);
  const onAbort = () => wake.kick();
  options.signal?.addEventListener('abort', onAbort);
  let lastAhead = -1;
  try {
    for (;;) {
      if (options.signal?.aborted) throw new SlotWaitAborted();
      const version = wake.version;
      await reclaimDeadSlots(slots, limit);
      const tickets = await liveTickets(queue);
      const position = Math.max(0, tickets.indexOf(ticket) === -1 ? tickets.length : tickets.indexOf(ticket));
      const holders = await readHolders(slots, limit);
      const free = limit - holders.length;
      if (position < free) {
        for (let index = 0; index < limit; index++) {
          const started = { ...me, started_at: new Date().toISOString() };
          if (await createExclusive(slotFile(slots, index), JSON.stringify(started))) {
            return { index, token: me.token, release: () => releaseSlot(slots, index, me.token) };
          }
        }
        continue; // lost a race for the free slot: look again at once
      }
      if (position !== lastAhead) {
        lastAhead = position;
        options.onWait?.(position, holders);
      }
      await wake.next(version);
    }
  } finally {
    options.signal?.removeEventListener('abort', onAbort);
    wake.close();
    await fs.rm(ticketPath, { force: true });
  }
}

function slotFile(slots: string, index: number): string {
  return path.join(slots, `${index}.json`);
}

async function releaseSlot(slots: string, index: number, token: string): Promise<void> {
  const file = slotFile(slots, index);
  const holder = await readHolder(file);
  // Only the owner frees a slot: after a reclaim the file may belong to someone else now.
  if (holder && holder !== 'unreadable' && holder.token === token) await fs.rm(file, { force: true });
}

async function readHolder(file: string): Promise<SlotHolder | undefined | 'unreadable'> {
  try {
    const value = JSON.parse(await fs.readFile(file, 'utf8')) as SlotHolder;
    if (typeof value?.pid !== 'number' || typeof value.token !== 'string') return 'unreadable';
    return value;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    return 'unreadable';
  }
}

async function readHolders(slots: string, limit: number): Promise<SlotHolder[]> {
  const holders: SlotHolder[] = [];
  for (let index = 0; index < limit; index++) {
    const holder = await readHolder(slotFile(slots, index));
    if (holder && holder !== 'unreadable') holders.push(holder);
    else if (holder === 'unreadable') holders.push({ pid: -1, host: '', token: '', started_at: '' });
  }
  return holders;
}

/** Frees slots whose holder died on this host (kill -9 of a supervisor) or whose file stayed unreadable. */
async function reclaimDeadSlots(slots: string, limit: number): Promise<void> {
  for (let index = 0; index < limit; index++) {
    const file = slotFile(slots, index);
    if (await isGarbage(file)) await removeIfUnchanged(file);
  }
}

async function isGarbage(file: string): Promise<boolean> {
  const holder = await readHolder(file);
  if (holder === undefined) return false;
  if (holder === 'unreadable') return olderThan(file, UNREADABLE_GRACE_MS);
  return holder.host === hostname() && !isPidAlive(holder.pid);
}

/** Re-reads before unlinking, so a slot re-claimed by a live process between our two looks is not freed by mistake. */
async function removeIfUnchanged(file: string): Promise<void> {
  if (await isGarbage(file)) await fs.rm(file, { force: true });
}

async function olderThan(file: string, ms: number): Promise<boolean> {
  try {
    const stat = await fs.stat(file);
    return Date.now() - stat.mtimeMs > ms;
  } catch {
    return false;
  }
}

/** Tickets in arrival order, after removing those of dead waiters on this host. */
async function liveTickets(queue: string): Promise<string[]> {
  const names = (await fs.readdir(queue)).filter((n) => n.endsWith('.json') && !n.startsWith('.')).sort();
  const live: string[] = [];
  for (const name of names) {
    const file = path.join(queue, name);
    if (await isGarbage(file)) await fs.rm(file, { force: true });
    else live.push(name);
  }
  return live;
}

/** Resolves waiters when anything changes in the watched folders, or after the safety period. */
class Wakeup {
  version = 0;
  private waiters: Array<() => void> = [];
  private readonly watchers: FSWatcher[] = [];
  private readonly timer: NodeJS.Timeout;

  constructor(dirs: string[], safetyMs: number) {
    for (const dir of dirs) {
      try {
        const watcher = watch(dir, () => this.kick());
        watcher.on('error', () => this.kick());
        this.watchers.push(watcher);
      } catch {
        /* the safety timer still wakes us */
      }
    }
    this.timer = setInterval(() => this.kick(), safetyMs);
  }

  kick(): void {
    this.version++;
    for (const resolve of this.waiters.splice(0)) resolve();
  }

  /** Waits for a change after `seen` (returns at once if one already happened). */
  next(seen: number): Promise<void> {
    if (this.version !== seen) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  close(): void {
    clearInterval(this.timer);
    for (const watcher of this.watchers) watcher.close();
    this.kick();
  }
}

export { isPidAlive };

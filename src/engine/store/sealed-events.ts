import type { promises as fs } from 'node:fs';
import { ProtocolError, readEventLine, type ProtocolEvent } from '../../protocol';
import { UnsafeFileError, openRegularFileWithStats, type SafeReadOptions } from '../../base/safe-read';
import { verifyEventLine, type RecordBinding, type SealVerdict } from './record-seal';
import { isRelayedTask } from './delegation-socket';
import { SeqGaps } from './record-order';

/*
 * events.jsonl as its readers see it: only lines that carry Caesar's seal for this task under this root are events.
 * A line anyone else appended — a forged `finished` above all — is refused here, with its reason, and never reaches
 * a follower: `caesar run`, `watch`, `logs --follow` and the editor end only on a `finished` Caesar wrote.
 */

/** Raised for a line that parses but is not Caesar's (its message says why); a line that does not parse throws as before. */
export class UnsealedEventError extends ProtocolError {}

/** The event of one line of events.jsonl, if the line is Caesar's; throws UnsealedEventError or ProtocolError otherwise. */
export function readSealedEventLine(binding: RecordBinding, line: string): ProtocolEvent {
  const trimmed = line.trim();
  // Inside the sandbox the record key is hidden: a sub-task its supervisor started is taken as Caesar's (delegation-socket.ts).
  const verdict: SealVerdict = isRelayedTask(binding.root, binding.taskId) ? { ok: true } : verifyEventLine(binding, trimmed);
  if (!verdict.ok) {
    // A line that is no event at all says so first (a torn or garbled line), then one that is not Caesar's.
    if (verdict.reason === 'unsigned') readEventLine(trimmed);
    throw new UnsealedEventError(verdict.message);
  }
  const event = readEventLine(trimmed);
  if (event.task_id !== binding.taskId) throw new UnsealedEventError(`an event of task ${event.task_id} in the log of ${binding.taskId}`);
  return event;
}

export interface SealedEventsRead {
  events: ProtocolEvent[];
  /** Lines that are no event at all (torn, not JSON, invalid) plus unverified ones. */
  badLines: number;
  /** Of badLines, those refused because Caesar did not write them (forged, copied, or from before records were sealed). */
  unverifiedLines: number;
  /** The first refusal's reason, for a warning. */
  firstUnverified?: string;
  /** The seq of the last event (undefined when there is none). */
  lastSeq?: number;
  /** The first break in the numbering: events cut out of the middle, or put back out of order (record-order.ts). */
  gap?: string;
}

/** Every event of a whole events.jsonl text; unreadable and unverified lines are counted, never shown. */
export function readSealedEventsText(binding: RecordBinding, text: string): SealedEventsRead {
  const out: SealedEventsRead = { events: [], badLines: 0, unverifiedLines: 0 };
  const numbering = new SeqGaps();
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    try {
      const event = readSealedEventLine(binding, line);
      numbering.see(event.seq);
      out.events.push(event);
    } catch (err) {
      out.badLines++;
      if (err instanceof UnsealedEventError) {
        out.unverifiedLines++;
        out.firstUnverified ??= err.message;
      }
    }
  }
  if (numbering.last !== undefined) out.lastSeq = numbering.last;
  if (numbering.first) out.gap = numbering.first;
  return out;
}

export interface LastEvent {
  event?: ProtocolEvent;
  /** Where a follower that has seen every complete line would resume. */
  size: number;
}
export const NO_EVENTS: LastEvent = { size: 0 };
/** How much of the end of events.jsonl is read to find the last event (cheap; never the whole file). */
const LAST_EVENT_WINDOW = 64 * 1024;

/** The last event Caesar wrote, from the end of the file (one bounded read). */
export async function readLastSealedEvent(binding: RecordBinding, file: string, options: SafeReadOptions): Promise<LastEvent> {
  let handle: fs.FileHandle | undefined;
  try {
    const opened = await openRegularFileWithStats(file, options);
    handle = opened.handle;
    const { size } = opened.stats;
    const length = Math.min(size, LAST_EVENT_WINDOW);
    const buffer = Buffer.allocUnsafe(length);
    const { bytesRead } = await handle.read(buffer, 0, length, size - length);
    // Resume point for followers: just after the last complete line, never in the middle of one.
    const window = buffer.subarray(0, bytesRead);
    const complete = size - length + window.lastIndexOf(0x0a) + 1;
    // Lines are decoded from the end one at a time: the last complete one is nearly always the answer.
    let end = window.length;
    while (end > 0) {
      const start = window.lastIndexOf(0x0a, end - 1) + 1;
      const line = window.toString('utf8', start, end).trim();
      end = start - 1;
      if (!line) continue;
      try {
        return { event: readSealedEventLine(binding, line), size: complete };
      } catch {
        /* a partial, bad or unverified line: look further back */
      }
    }
    return { size: complete };
  } catch (err) {
    // A planted FIFO, device or symlink is no event stream: the task is still listed, with no last event.
    if ((err as NodeJS.ErrnoException).code === 'ENOENT' || err instanceof UnsafeFileError) return { size: 0 };
    throw err;
  } finally {
    await handle?.close();
  }
}

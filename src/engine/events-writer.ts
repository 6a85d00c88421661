import { closeSync, fstatSync, ftruncateSync, writeSync } from 'node:fs';
import * as path from 'node:path';
import { DOCUMENT_IDS, EventSchema, formatIssues, type EventDraft, type ProtocolEvent } from '../protocol';
import { openRegularFileForWriting } from '../base/safe-write';
import type { WriteFault } from './write-fault';

type FinishedDraft = Extract<EventDraft, { type: 'finished' }>;

/**
 * The one writer of a task's events.jsonl (DESIGN.md principle 2). It stamps protocol, seq (unique, from 0), at and
 * task_id, validates every event, and guarantees the log ends with exactly one `finished` event: drafts of type
 * `finished` coming from a translator (the CLI's own "turn completed") are held back and handed to the supervisor,
 * which writes the single closing event itself with finish().
 *
 * Writes are synchronous appends on one descriptor: a batch of events reaches the file in one write call, in order,
 * and nothing is buffered in memory when the process dies. A write that fails (disk full, file-size limit, I/O
 * error) never throws: the torn tail is cut off so every earlier line stays whole, the failure is latched in `fault`,
 * and later appends are dropped (only finish() tries once more: the space may have come back).
 */
export class EventsWriter {
  private fd: number | undefined;
  private seq = 0;
  private finished = false;
  private heldFinished: FinishedDraft | undefined;
  private rejected = 0;
  /** Size of the file after the last complete write: a failed write is cut back to it. */
  private goodSize = 0;
  private failed = false;
  /** Where a failed write is reported; set by the supervisor. */
  fault: WriteFault | undefined;

  constructor(
    private readonly file: string,
    private readonly taskId: string,
    private readonly onRejected: (reason: string) => void = () => {},
    /** Where numbering resumes when a new writer takes over a log whose writer died (see conclude.ts). */
    firstSeq = 0,
  ) {
    this.seq = firstSeq;
  }

  /** Number of events written so far (also the next seq). */
  get count(): number {
    return this.seq;
  }

  get isFinished(): boolean {
    return this.finished;
  }

  /** Invalid drafts dropped so far (a translator bug or hostile agent output); each one was reported to onRejected. */
  get rejectedCount(): number {
    return this.rejected;
  }

  /** The last `finished` draft a translator produced, if any (its status is a native verdict on the run). */
  get translatorFinished(): FinishedDraft | undefined {
    return this.heldFinished;
  }

  append(draft: EventDraft): ProtocolEvent | undefined {
    return this.appendAll([draft])[0];
  }

  /** Stamps, validates and appends drafts in one write. `finished` drafts are held (see class comment). */
  appendAll(drafts: EventDraft[]): ProtocolEvent[] {
    if (this.finished || this.failed) return [];
    const events: ProtocolEvent[] = [];
    for (const draft of drafts) {
      if (draft.type === 'finished') {
        this.heldFinished = draft;
        continue;
      }
      const event = this.stamp(draft);
      if (event) events.push(event);
    }
    return this.write(events) ? events : [];
  }

  /** Writes the single closing event. Later calls and later appends are ignored. */
  finish(draft: FinishedDraft): ProtocolEvent | undefined {
    if (this.finished) return undefined;
    const event = this.stamp(draft);
    if (!event) return undefined;
    this.failed = false;
    const written = this.write([event]);
    this.finished = true;
    this.close();
    return written ? event : undefined;
  }

  close(): void {
    if (this.fd !== undefined) {
      const fd = this.fd;
      this.fd = undefined;
      try {
        closeSync(fd);
      } catch (error) {
        this.fault?.report(path.basename(this.file), error); // EIO on close: writes may not have reached the disk
      }
    }
  }

  private stamp(draft: EventDraft): ProtocolEvent | undefined {
    const candidate = { ...clampText(draft), protocol: DOCUMENT_IDS.event, seq: this.seq, at: new Date().toISOString(), task_id: this.taskId };
    const result = EventSchema.safeParse(candidate);
    if (!result.success) {
      this.rejected++;
      this.onRejected(`event dropped (${draft.type}): ${formatIssues(result.error).join('; ')}`);
      return undefined;
    }
    this.seq++;
    return result.data;
  }

  /** True when every byte reached the file. */
  private write(events: ProtocolEvent[]): boolean {
    if (!events.length) return true;
    const text = events.map((e) => JSON.stringify(e)).join('\n') + '\n';
    const buffer = Buffer.from(text, 'utf8');
    try {
      if (this.fd === undefined) {
        // Never through a symlink, never blocked by a FIFO planted at the name: anything but a regular file is
        // refused, and that refusal fails the task like a full disk does.
        this.fd = openRegularFileForWriting(this.file, 'append');
        this.goodSize = fstatSync(this.fd).size;
      }
      let offset = 0;
      while (offset < buffer.length) offset += writeSync(this.fd, buffer, offset);
      this.goodSize += buffer.length;
      return true;
    } catch (error) {
      this.failed = true;
      this.cutTornTail();
      this.seq -= events.length; // stamped just before: the lost batch leaves no gap in the numbering
      this.fault?.report(path.basename(this.file), error);
      return false;
    }
  }

  private cutTornTail(): void {
    try {
      if (this.fd !== undefined) ftruncateSync(this.fd, this.goodSize);
    } catch {
      /* the file is as the failed write left it; readers skip a torn last line */
    }
  }
}

/** Longest text kept in one event field: readers refuse lines over MAX_BYTES.eventLine (1 MiB); raw.log keeps it all. */
export const MAX_EVENT_TEXT = 64 * 1024;
const TEXT_FIELDS = ['text', 'message', 'summary', 'input_summary', 'command', 'question', 'answer'] as const;

function clampText(draft: EventDraft): EventDraft {
  let out: Record<string, unknown> | undefined;
  for (const field of TEXT_FIELDS) {
    const value = (draft as Record<string, unknown>)[field];
    if (typeof value === 'string' && value.length > MAX_EVENT_TEXT) {
      out ??= { ...draft };
      out[field] = `${value.slice(0, MAX_EVENT_TEXT)}… (truncated, ${value.length} characters in all; see raw.log)`;
    }
  }
  return (out as EventDraft | undefined) ?? draft;
}

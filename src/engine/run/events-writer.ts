import { closeSync, fstatSync, ftruncateSync, lstatSync, readSync, renameSync, writeSync } from 'node:fs';
import * as path from 'node:path';
import { DOCUMENT_IDS, EventSchema, formatIssues, type EventDraft, type ProtocolEvent } from '../../protocol';
import { tempNameBeside } from '../../base/atomic';
import { openRegularFileForWriting } from '../../base/safe-write';
import type { WriteFault } from '../process/write-fault';
import { bindingOfTaskFile, sealEventLine, type RecordBinding } from '../store/record-seal';

type FinishedDraft = Extract<EventDraft, { type: 'finished' }>;

/**
 * The one writer of a task's events.jsonl (DESIGN.md principle 2). It stamps protocol, seq (unique, from 0), at and
 * task_id, validates every event, seals every line (record-seal.ts: readers ignore a line Caesar did not write), and
 * guarantees the log ends with exactly one `finished` event: drafts of type
 * `finished` coming from a translator (the CLI's own "turn completed") are held back and handed to the supervisor,
 * which writes the single closing event itself with finish().
 *
 * Writes are synchronous appends on one descriptor: a batch of events reaches the file in one write call, in order,
 * and nothing is buffered in memory when the process dies. A write that fails (disk full, file-size limit, I/O
 * error) never throws: the torn tail is cut off so every earlier line stays whole, the failure is latched in `fault`,
 * and later appends are dropped (only finish() tries once more: the space may have come back).
 *
 * The file lives where an agent can reach it. One that removes or renames events.jsonl, or puts another file at its
 * name, would leave this writer appending to a file nobody reads: before a write the name is checked to still be
 * this descriptor's file, and if not, the whole log so far (still readable through the descriptor) is put back at the
 * name, atomically, and writing goes on there (checked at most every 100 ms, and before the closing event: what was
 * written in between is in the copy too). Nothing written is lost; readers see the file replaced and re-read it.
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
  /** Times the log was found removed, renamed or replaced at its name and put back. */
  private restoredCount = 0;
  /** The identity of the file behind the descriptor, to tell whether the name still leads to it. */
  private identity: { dev: number; ino: number } | undefined;
  /** When the name was last checked (an lstat): at most every NAME_CHECK_MS, and always before the closing event. */
  private nameCheckedAt = 0;
  /** What every line's seal is bound to: this task under its root (record-seal.ts). */
  private readonly binding: RecordBinding;

  constructor(
    private readonly file: string,
    private readonly taskId: string,
    private readonly onRejected: (reason: string) => void = () => {},
    /** Where numbering resumes when a new writer takes over a log whose writer died (see conclude.ts). */
    firstSeq = 0,
    /** How often, at most, the name is checked (see NAME_CHECK_MS). */
    private readonly nameCheckMs = NAME_CHECK_MS,
  ) {
    this.seq = firstSeq;
    this.binding = { ...bindingOfTaskFile(file), taskId };
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

  /** Times the log was found removed, renamed or replaced (by the agent) and put back whole at its name. */
  get restored(): number {
    return this.restoredCount;
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
    const written = this.write([event], true);
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
  private write(events: ProtocolEvent[], checkName = false): boolean {
    if (!events.length) return true;
    const text = events.map((e) => sealEventLine(this.binding, JSON.stringify(e))).join('\n') + '\n';
    const buffer = Buffer.from(text, 'utf8');
    try {
      if (this.fd === undefined) {
        // Never through a symlink, never blocked by a FIFO planted at the name: anything but a regular file is
        // refused, and that refusal fails the task like a full disk does.
        this.fd = this.open();
        this.goodSize = fstatSync(this.fd).size;
      } else if ((checkName || Date.now() - this.nameCheckedAt >= this.nameCheckMs) && this.detached()) {
        this.fd = this.restore(this.fd);
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

  private open(): number {
    const fd = openRegularFileForWriting(this.file, 'append');
    const { dev, ino } = fstatSync(fd);
    this.identity = { dev, ino };
    return fd;
  }

  /** The name no longer leads to this descriptor's file (removed, renamed away, or another file put there). */
  private detached(): boolean {
    this.nameCheckedAt = Date.now();
    const named = lstatSync(this.file, { throwIfNoEntry: false });
    return !named || named.ino !== this.identity?.ino || named.dev !== this.identity.dev;
  }

  /**
   * Puts the log written so far back at its name: copied from the old descriptor into a temp file beside it (created
   * exclusively), renamed over the name (replacing whatever is there, never writing through it), then reopened.
   * Returns the new descriptor; the old one is closed.
   */
  private restore(old: number): number {
    const temp = tempNameBeside(this.file);
    const copy = openRegularFileForWriting(temp, 'truncate');
    try {
      const chunk = Buffer.alloc(1 << 16);
      for (let position = 0; position < this.goodSize; ) {
        const read = readSync(old, chunk, 0, Math.min(chunk.length, this.goodSize - position), position);
        if (read === 0) break;
        let offset = 0;
        while (offset < read) offset += writeSync(copy, chunk, offset, read - offset);
        position += read;
      }
    } finally {
      closeSync(copy);
    }
    renameSync(temp, this.file);
    closeSync(old);
    this.restoredCount++;
    this.onRejected(`${path.basename(this.file)} was removed or replaced during the run: put back whole (${this.goodSize} bytes)`);
    return this.open();
  }

  private cutTornTail(): void {
    try {
      if (this.fd !== undefined) ftruncateSync(this.fd, this.goodSize);
    } catch {
      /* the file is as the failed write left it; readers skip a torn last line */
    }
  }
}

/**
 * How often, at most, the writer checks that its name still leads to its file. Whatever is written meanwhile to a
 * removed or renamed file is not lost: the restore copies the whole log from the descriptor.
 */
const NAME_CHECK_MS = 100;

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

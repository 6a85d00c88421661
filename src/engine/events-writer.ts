import { closeSync, openSync, writeSync } from 'node:fs';
import { DOCUMENT_IDS, EventSchema, formatIssues, type EventDraft, type ProtocolEvent } from '../protocol';

type FinishedDraft = Extract<EventDraft, { type: 'finished' }>;

/**
 * The one writer of a task's events.jsonl (DESIGN.md principle 2). It stamps protocol, seq (unique, from 0), at and
 * task_id, validates every event, and guarantees the log ends with exactly one `finished` event: drafts of type
 * `finished` coming from a translator (the CLI's own "turn completed") are held back and handed to the supervisor,
 * which writes the single closing event itself with finish().
 *
 * Writes are synchronous appends on one descriptor: a batch of events reaches the file in one write call, in order,
 * and nothing is buffered in memory when the process dies.
 */
export class EventsWriter {
  private fd: number | undefined;
  private seq = 0;
  private finished = false;
  private heldFinished: FinishedDraft | undefined;
  private rejected = 0;

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
    if (this.finished) return [];
    const events: ProtocolEvent[] = [];
    for (const draft of drafts) {
      if (draft.type === 'finished') {
        this.heldFinished = draft;
        continue;
      }
      const event = this.stamp(draft);
      if (event) events.push(event);
    }
    this.write(events);
    return events;
  }

  /** Writes the single closing event. Later calls and later appends are ignored. */
  finish(draft: FinishedDraft): ProtocolEvent | undefined {
    if (this.finished) return undefined;
    const event = this.stamp(draft);
    if (!event) return undefined;
    this.write([event]);
    this.finished = true;
    this.close();
    return event;
  }

  close(): void {
    if (this.fd !== undefined) {
      closeSync(this.fd);
      this.fd = undefined;
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

  private write(events: ProtocolEvent[]): void {
    if (!events.length) return;
    this.fd ??= openSync(this.file, 'a');
    const text = events.map((e) => JSON.stringify(e)).join('\n') + '\n';
    const buffer = Buffer.from(text, 'utf8');
    let offset = 0;
    while (offset < buffer.length) offset += writeSync(this.fd, buffer, offset);
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

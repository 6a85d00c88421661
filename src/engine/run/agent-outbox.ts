import { promises as fs, type FSWatcher } from 'node:fs';
import { openRegularFile } from '../../base/safe-read';
import { DOCUMENT_IDS, EventSchema, MAX_BYTES, formatIssues, type EventDraft } from '../../protocol';
import { watchFileInDir } from '../store/tail';

/** Event types an agent may put in its outbox; started, question, answer and finished are the supervisor's own. */
const AGENT_EVENT_TYPES = new Set(['thinking', 'message', 'tool_use', 'file_changed', 'progress', 'error']);
/** Rejected lines logged one by one; past this, only the count (a flood of garbage must not flood the log). */
const LOGGED_REJECTIONS = 20;
const CHUNK = 256 * 1024;

export type OutboxLine = { ok: true; draft: EventDraft } | { ok: false; reason: string };

/**
 * One outbox line as an event draft, or why it is refused: not JSON, another protocol, a type the agent may not
 * emit, or fields the event schema refuses. protocol/seq/at/task_id are the agent's and are dropped: the supervisor's
 * events writer stamps its own (DESIGN.md principle 2).
 */
export function outboxLineDraft(line: string): OutboxLine {
  if (Buffer.byteLength(line, 'utf8') > MAX_BYTES.eventLine) return { ok: false, reason: `line over ${MAX_BYTES.eventLine} bytes` };
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return { ok: false, reason: 'not JSON' };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return { ok: false, reason: 'not a JSON object' };
  const { protocol, seq: _seq, at: _at, task_id: _taskId, ...draft } = value as Record<string, unknown>;
  if (protocol !== DOCUMENT_IDS.event) return { ok: false, reason: `protocol ${JSON.stringify(protocol)} is not ${DOCUMENT_IDS.event}` };
  if (typeof draft.type !== 'string' || !AGENT_EVENT_TYPES.has(draft.type)) {
    return { ok: false, reason: `type ${JSON.stringify(draft.type)} is not one an agent may emit` };
  }
  const checked = EventSchema.safeParse({ ...draft, protocol, seq: 0, at: new Date(0).toISOString(), task_id: 'outbox' });
  if (!checked.success) return { ok: false, reason: formatIssues(checked.error).join('; ') };
  return { ok: true, draft: draft as unknown as EventDraft };
}

/**
 * Follows an OACP agent's outbox (its CAESAR_EVENTS_PATH) by byte offset, driven by fs.watch with a slow stat safety
 * net, reading through the bounded safe reader, and hands every valid line to `relay` as a draft. Invalid lines are
 * counted and logged, never relayed. drain() reads to the end, including a last line without its newline, and stops.
 */
export class AgentOutbox {
  private offset = 0;
  private partial = Buffer.alloc(0);
  /** True while the rest of an over-long line is skipped up to its newline. */
  private skippingLongLine = false;
  private reading: Promise<void> = Promise.resolve();
  private watcher?: FSWatcher;
  private timer?: NodeJS.Timeout;
  private stopped = false;
  /** Set when the after-run watchdog gave up on the drain: nothing more is read or relayed. */
  private abandoned = false;
  private relayedCount = 0;
  private rejectedCount = 0;

  constructor(
    private readonly file: string,
    private readonly relay: (drafts: EventDraft[]) => void,
    private readonly log: (message: string) => void,
    private readonly safetyIntervalMs = 1000,
  ) {}

  get relayed(): number {
    return this.relayedCount;
  }

  get rejected(): number {
    return this.rejectedCount;
  }

  /** Creates the outbox empty (whatever was planted there is replaced) and starts following it. */
  async start(): Promise<void> {
    await fs.rm(this.file, { force: true });
    await fs.writeFile(this.file, '', { flag: 'wx', mode: 0o600 });
    this.watcher = watchFileInDir(this.file, () => void this.readNew(), (err) => this.log(`watching the agent outbox: ${err.message}`));
    // Safety net for file systems whose watchers miss events: one stat per period, a read only when the size moved.
    this.timer = setInterval(() => void this.readIfGrown(), this.safetyIntervalMs);
    this.timer.unref();
  }

  /** Reads everything written so far (a last line without newline included), relays it, and stops following. */
  async drain(): Promise<void> {
    this.dispose();
    await this.readNew(true);
    if (this.rejectedCount > LOGGED_REJECTIONS) this.log(`agent outbox: ${this.rejectedCount} line(s) refused in all`);
  }

  /** Stops a drain under way (the watchdog spent its budget): the rest of the outbox is left unread. */
  abandon(): void {
    this.abandoned = true;
    this.dispose();
  }

  dispose(): void {
    this.stopped = true;
    this.watcher?.close();
    this.watcher = undefined;
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  private async readIfGrown(): Promise<void> {
    const size = await fs.stat(this.file).then((stats) => stats.size, () => this.offset);
    if (size !== this.offset) await this.readNew();
  }

  private readNew(final = false): Promise<void> {
    if (this.stopped && !final) return this.reading;
    this.reading = this.reading.then(() => this.readOnce(final)).catch((err: unknown) => {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') this.log(`reading the agent outbox: ${(err as Error).message}`);
    });
    return this.reading;
  }

  private async readOnce(final: boolean): Promise<void> {
    const handle = await openRegularFile(this.file);
    try {
      if ((await handle.stat()).size < this.offset) {
        // The agent truncated its outbox: follow what it writes from now on.
        this.log('agent outbox: truncated by the agent, following it from its new start');
        this.offset = 0;
        this.partial = Buffer.alloc(0);
        this.skippingLongLine = false;
      }
      const buffer = Buffer.alloc(CHUNK);
      while (!this.abandoned) {
        const { bytesRead } = await handle.read(buffer, 0, CHUNK, this.offset);
        if (bytesRead === 0) break;
        this.offset += bytesRead;
        this.take(buffer.subarray(0, bytesRead));
      }
    } finally {
      await handle.close();
    }
    if (this.abandoned) return;
    if (final && this.partial.length && !this.skippingLongLine) this.handleLines([this.partial.toString('utf8')]);
    if (final) this.partial = Buffer.alloc(0);
  }

  private take(chunk: Buffer): void {
    let data = this.partial.length ? Buffer.concat([this.partial, chunk]) : Buffer.from(chunk);
    if (this.skippingLongLine) {
      const newline = data.indexOf(0x0a);
      if (newline < 0) {
        this.partial = Buffer.alloc(0);
        return;
      }
      this.skippingLongLine = false;
      data = data.subarray(newline + 1);
    }
    const lastNewline = data.lastIndexOf(0x0a);
    this.partial = Buffer.from(lastNewline < 0 ? data : data.subarray(lastNewline + 1));
    if (this.partial.length > MAX_BYTES.eventLine) {
      // A line that can never be valid: refuse it now rather than hold megabytes until its newline comes.
      this.refuse(`line over ${MAX_BYTES.eventLine} bytes`);
      this.partial = Buffer.alloc(0);
      this.skippingLongLine = true;
    }
    if (lastNewline >= 0) this.handleLines(data.subarray(0, lastNewline).toString('utf8').split('\n'));
  }

  private handleLines(lines: string[]): void {
    const drafts: EventDraft[] = [];
    for (const raw of lines) {
      const line = raw.trim();
      if (!line) continue;
      const parsed = outboxLineDraft(line);
      if (parsed.ok) drafts.push(parsed.draft);
      else this.refuse(parsed.reason);
    }
    if (!drafts.length) return;
    this.relayedCount += drafts.length;
    this.relay(drafts);
  }

  private refuse(reason: string): void {
    this.rejectedCount++;
    if (this.rejectedCount <= LOGGED_REJECTIONS) this.log(`agent outbox: line refused (${reason})`);
  }
}

// One task's events.jsonl as the timeline reads it: followed once from a byte offset (never re-read on an append),
// indexed into rows (timeline-index.ts), and read back a window at a time. A query (search, type filter) is answered
// here too, so the webview only ever holds the rows it shows.
import { lstatSync } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import type { ViewEvent } from '../../common/task-view';
import { openRegularFile } from '../../base/safe-read';
import { SeqGaps, bindingOfTaskFile, readSealedEventLine, tailLines, type RecordBinding } from '../../engine/tasks';
import type { TimelineQuery, TimelineRow, TimelineStatus } from './messages';
import { asciiLower, eventMatches, rowDetail, rowFromEvent } from './rows';
import { TimelineIndex, type LocatedEvent } from './timeline-index';

/** Lines closer than this in the file are read with one read call. */
const COALESCE_GAP = 64 * 1024;
/** Bytes read at once when a search goes through the file. */
const SEARCH_CHUNK_BYTES = 4 * 1024 * 1024;
const DETAIL_MAX_CHARS = 200_000;

export interface SourceListener {
  /** Rows were added (or tool rows closed): `firstNewRow` is the first row added (rowCount when only closes). */
  onRows(firstNewRow: number): void;
  onBadLine(error: string): void;
  onReset(): void;
}

/** The rows a query kept (positions in the task's rows), or every row. */
interface ActiveQuery {
  query: TimelineQuery;
  needle: string;
  matches: number[] | undefined;
}

export class TimelineSource {
  private index = new TimelineIndex();
  private indexedBytes = 0;
  private badLines = 0;
  /** The log's numbering as read so far: a gap in it is reported once. */
  private numbering = new SeqGaps();
  private gapReported = false;
  private caughtUp = false;
  private follower: { dispose(): void } | undefined;
  private active: ActiveQuery = { query: { text: '', types: [] }, needle: '', matches: undefined };
  /** Rows made while a search scan runs (they are matched as they come, and appended once the scan is done). */
  private scanning: { fromRow: number; live: number[] } | undefined;
  private queryToken = 0;
  /** One handle for every window, detail and search read: a read then waits behind one indexing step, not five. */
  private handle: Promise<FileHandle> | undefined;

  /** The file's size when following started: indexed that far, the backlog is caught up with. */
  private backlogBytes = 0;

  /** Only lines Caesar sealed for this task are shown (record-seal.ts); others are bad lines, with their reason. */
  private readonly binding: RecordBinding;

  constructor(
    readonly file: string,
    private readonly listener: SourceListener,
  ) {
    this.binding = bindingOfTaskFile(file);
  }

  /** Starts following the file from the start (once: a re-shown webview reuses the index). */
  start(): void {
    if (this.follower) return;
    try {
      this.backlogBytes = lstatSync(this.file).size; // one stat: cheap, and it orders before the follower's first read
    } catch {
      this.backlogBytes = 0; // not written yet
    }
    this.caughtUp = this.backlogBytes === 0;
    void this.readHandle().catch(() => undefined); // opened beside the follower: the first window is one read
    this.follower = tailLines(this.file, {
      fromOffset: 0,
      onLines: (lines, nextOffset) => this.onLines(lines, nextOffset),
      onError: (err) => this.listener.onBadLine(err.message),
    });
  }

  get rowCount(): number {
    return this.index.rowCount;
  }

  get status(): TimelineStatus {
    const view = this.index.taskView;
    return {
      events: this.index.events,
      rows: this.index.rowCount,
      lastSeq: this.index.lastSeq,
      caughtUp: this.caughtUp,
      indexedBytes: this.indexedBytes,
      backlogBytes: this.backlogBytes,
      badLines: this.badLines,
      progress: view.lastProgress === undefined ? undefined : { message: view.lastProgress, pct: view.lastProgressPct },
    };
  }

  /** How many rows the current query has. */
  get total(): number {
    return this.active.matches ? this.active.matches.length : this.index.rowCount;
  }

  private onLines(lines: string[], nextOffset: number): void {
    let start = nextOffset;
    for (const line of lines) start -= Buffer.byteLength(line) + 1;
    // The follower starts over at 0 when the file was truncated (rewritten): rebuild rather than mix two files.
    if (start === 0 && this.indexedBytes > 0) this.reset();
    let offset = this.indexedBytes;
    const batch: LocatedEvent[] = [];
    for (const line of lines) {
      const length = Buffer.byteLength(line);
      if (line.trim()) {
        try {
          const event = readSealedEventLine(this.binding, line);
          this.numbering.see(event.seq);
          batch.push({ event, offset, length });
        } catch (err) {
          this.badLines++;
          this.listener.onBadLine((err as Error).message);
        }
      }
      offset += length + 1;
    }
    // Events cut out of the log are said once, where an unreadable line is (record-order.ts).
    if (this.numbering.first && !this.gapReported) {
      this.gapReported = true;
      this.listener.onBadLine(this.numbering.first);
    }
    this.indexedBytes = nextOffset;
    if (nextOffset >= this.backlogBytes) this.caughtUp = true;
    const firstNew = this.index.add(batch, (row, event) => this.matchLive(row, event));
    this.listener.onRows(firstNew);
  }

  private reset(): void {
    this.closeHandle();
    this.index = new TimelineIndex();
    this.indexedBytes = 0;
    this.badLines = 0;
    this.numbering = new SeqGaps();
    this.gapReported = false;
    this.active = { ...this.active, matches: this.active.matches ? [] : undefined };
    this.scanning = undefined;
    this.queryToken++;
    this.listener.onReset();
  }

  private matchLive(row: number, event: ViewEvent): void {
    if (!this.active.matches) return;
    if (!eventMatches(event, this.active.query.types, this.active.needle)) return;
    if (this.scanning) this.scanning.live.push(row);
    else this.active.matches.push(row);
  }

  /**
   * Makes `query` the current one. Type filters use the index alone; a text search reads the indexed part of the file
   * once, pre-filtering the raw bytes for the query before parsing a line. Resolves false when a newer query won.
   */
  async setQuery(query: TimelineQuery): Promise<boolean> {
    const token = ++this.queryToken;
    const needle = asciiLower(query.text);
    if (!needle && !query.types.length) {
      this.active = { query, needle, matches: undefined };
      this.scanning = undefined;
      return true;
    }
    const fromRow = this.index.rowCount;
    this.active = { query, needle, matches: [] };
    this.scanning = { fromRow, live: [] };
    const found = needle ? await this.searchFile(fromRow, query.types, needle, () => token !== this.queryToken) : this.index.rowsOfTypes(query.types).slice(0);
    if (token !== this.queryToken) return false;
    this.active.matches = [...found.filter((r) => r < fromRow), ...this.scanning.live];
    this.scanning = undefined;
    return true;
  }

  /** Rows [start, start + count) of the current query (clamped). */
  async window(start: number, count: number): Promise<{ start: number; total: number; rows: TimelineRow[] }> {
    const total = this.total;
    const from = Math.max(0, Math.min(start, total - count));
    const to = Math.min(total, from + Math.max(0, count));
    const rows: number[] = [];
    for (let i = from; i < to; i++) rows.push(this.active.matches ? this.active.matches[i]! : i);
    const events = await this.readRows(rows);
    return {
      start: from,
      total,
      rows: rows.map((row, i) => {
        const event = events[i];
        return event ? rowFromEvent(event, row, this.index.row(row).tool) : unreadableRow(row);
      }),
    };
  }

  /** The full text of a row (its index among all rows). */
  async detail(row: number): Promise<string> {
    if (row < 0 || row >= this.index.rowCount) return '';
    const [event] = await this.readRows([row]);
    if (!event) return '(this line of events.jsonl could not be read)';
    const text = `#${event.seq} ${event.at}  ${rowDetail(event, this.index.row(row).tool)}`;
    return text.length > DETAIL_MAX_CHARS ? `${text.slice(0, DETAIL_MAX_CHARS)}\n… (${text.length - DETAIL_MAX_CHARS} more characters)` : text;
  }

  /** The events of some rows (in file order), read with as few read calls as nearby lines allow. */
  private async readRows(rows: readonly number[]): Promise<(ViewEvent | undefined)[]> {
    if (!rows.length) return [];
    const out: (ViewEvent | undefined)[] = new Array(rows.length);
    const handle = await this.readHandle();
    let i = 0;
    while (i < rows.length) {
      const first = this.index.row(rows[i]!);
      let j = i + 1;
      let end = first.offset + first.length;
      while (j < rows.length) {
        const next = this.index.row(rows[j]!);
        if (next.offset < end || next.offset - end > COALESCE_GAP) break;
        end = next.offset + next.length;
        j++;
      }
      const buffer = Buffer.alloc(end - first.offset);
      await handle.read(buffer, 0, buffer.length, first.offset);
      for (let k = i; k < j; k++) {
        const { offset, length } = this.index.row(rows[k]!);
        out[k] = parseLine(this.binding, buffer.toString('utf8', offset - first.offset, offset - first.offset + length));
      }
      i = j;
    }
    return out;
  }

  /**
   * Rows below `toRow` whose agent texts contain `needle`. The raw bytes are decoded as latin1 and lower-cased (A-Z and
   * the latin1 capitals alike on both sides, so an ASCII case-insensitive match in the text is a match in the bytes),
   * the needle written as JSON writes a string; only the lines that contain it are parsed and checked.
   */
  private async searchFile(toRow: number, types: readonly string[], needle: string, cancelled: () => boolean): Promise<number[]> {
    const pattern = Buffer.from(JSON.stringify(needle).slice(1, -1), 'utf8').toString('latin1').toLowerCase();
    const found: number[] = [];
    const handle = await this.readHandle();
    for (let first = 0, last = 0; first < toRow && !cancelled(); first = last + 1) {
      const start = this.index.offsetOf(first);
      last = Math.max(first, Math.min(toRow - 1, this.index.rowAtOrBefore(start + SEARCH_CHUNK_BYTES) - 1));
      const { offset, length } = this.index.row(last);
      const buffer = Buffer.alloc(offset + length - start);
      await handle.read(buffer, 0, buffer.length, start);
      const hay = buffer.toString('latin1').toLowerCase();
      let lastRow = -1;
      for (let at = hay.indexOf(pattern); at >= 0; at = hay.indexOf(pattern, at + 1)) {
        const row = this.index.rowAtOrBefore(start + at);
        if (row === lastRow || row < first) continue;
        const ref = this.index.row(row);
        if (start + at + pattern.length > ref.offset + ref.length) continue; // in a line that makes no row
        lastRow = row;
        const event = parseLine(this.binding, buffer.toString('utf8', ref.offset - start, ref.offset - start + ref.length));
        if (event && eventMatches(event, types, needle)) found.push(row);
      }
    }
    return found;
  }

  private readHandle(): Promise<FileHandle> {
    this.handle ??= openRegularFile(this.file);
    // A failed open is not cached: the next read tries again.
    this.handle.catch(() => (this.handle = undefined));
    return this.handle;
  }

  private closeHandle(): void {
    const handle = this.handle;
    this.handle = undefined;
    void handle?.then((h) => h.close()).catch(() => undefined);
  }

  dispose(): void {
    this.follower?.dispose();
    this.closeHandle();
    this.queryToken++;
  }
}

function parseLine(binding: RecordBinding, line: string): ViewEvent | undefined {
  try {
    return readSealedEventLine(binding, line);
  } catch {
    return undefined;
  }
}

function unreadableRow(index: number): TimelineRow {
  return { index, seq: -1, at: '', type: 'error', icon: 'warning', tone: 'warn', label: '(this line of events.jsonl could not be read)' };
}

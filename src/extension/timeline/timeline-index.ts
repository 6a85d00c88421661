// The timeline's rows, kept in the extension host as columns of numbers: where each row's event line is in
// events.jsonl, its type, and for tool calls whether they still run and how long they took. No event object and no
// text is kept, so a million-event task costs ~22 MB here; a window of rows is rebuilt from the file on demand
// (timeline-source.ts). Pure (no vscode, no node:): tested without an editor.
//
// The task's view comes from the same fold `caesar watch` and the Tasks tree use (src/common/task-view.ts); a tool
// call's end closes its start row by id, as the supervisor paired them before writing events.jsonl.
import { EMPTY_TASK_VIEW, findToolCall, foldTaskView, toolCallDuration, type TaskView, type ViewEvent } from '../../common/task-view';
import { ToolState, type RowToolInfo } from './rows';

/** One valid event line of the file: the event and where its line is (byte offset and length, newline excluded). */
export interface LocatedEvent {
  event: ViewEvent;
  offset: number;
  length: number;
}

export const EVENT_TYPES: readonly ViewEvent['type'][] = [
  'started', 'thinking', 'message', 'tool_use', 'file_changed', 'progress', 'question', 'answer', 'error', 'finished',
];
const TYPE_CODE = new Map(EVENT_TYPES.map((t, i) => [t, i]));

/** A typed array that grows by doubling (the index's columns). */
class Column<A extends Float64Array | Uint32Array | Uint8Array> {
  constructor(
    public data: A,
    private readonly make: (n: number) => A,
  ) {}

  ensure(length: number): void {
    if (length <= this.data.length) return;
    const next = this.make(Math.max(length, this.data.length * 2));
    next.set(this.data);
    this.data = next;
  }
}

const INITIAL = 1024;

export class TimelineIndex {
  private count = 0;
  private readonly offsets = new Column(new Float64Array(INITIAL), (n) => new Float64Array(n));
  private readonly lengths = new Column(new Uint32Array(INITIAL), (n) => new Uint32Array(n));
  private readonly types = new Column(new Uint8Array(INITIAL), (n) => new Uint8Array(n));
  private readonly toolStates = new Column(new Uint8Array(INITIAL), (n) => new Uint8Array(n));
  private readonly durations = new Column(new Float64Array(INITIAL), (n) => new Float64Array(n));
  /** Start rows of calls still running, by call id, with their start time (for a call the fold no longer keeps). */
  private readonly running = new Map<string, { row: number; startedAt: number }>();
  private readonly columns = [this.offsets, this.lengths, this.types, this.toolStates, this.durations];
  private view: TaskView = EMPTY_TASK_VIEW;
  /** Events indexed (re-deliveries not counted). */
  events = 0;

  get rowCount(): number {
    return this.count;
  }

  get taskView(): TaskView {
    return this.view;
  }

  get lastSeq(): number {
    return this.view.lastSeq;
  }

  /**
   * Indexes a batch of events in file order; `onRow` hears of each row it adds with the event that made it. Returns
   * the index of the first row added (rowCount if none).
   */
  add(batch: readonly LocatedEvent[], onRow?: (row: number, event: ViewEvent) => void): number {
    const firstNew = this.count;
    let last = this.view.lastSeq;
    const fresh: LocatedEvent[] = [];
    for (const located of batch) {
      if (located.event.seq <= last) continue; // a follower that restarted: already indexed
      last = located.event.seq;
      fresh.push(located);
    }
    if (!fresh.length) return firstNew;
    this.view = foldTaskView(this.view, fresh.map((l) => l.event));
    this.events += fresh.length;
    for (const column of this.columns) column.ensure(this.count + fresh.length);
    for (const located of fresh) {
      const row = this.indexOne(located);
      if (row >= 0) onRow?.(row, located.event);
    }
    return firstNew;
  }

  /** Where row `i`'s event line is, and its tool state. */
  row(i: number): { offset: number; length: number; type: ViewEvent['type']; tool: RowToolInfo } {
    return {
      offset: this.offsets.data[i]!,
      length: this.lengths.data[i]!,
      type: EVENT_TYPES[this.types.data[i]!]!,
      tool: { state: this.toolStates.data[i]! as ToolState, durationMs: this.durations.data[i]! },
    };
  }

  offsetOf(i: number): number {
    return this.offsets.data[i]!;
  }

  /** Rows whose event type is one of `types`, in order. */
  rowsOfTypes(types: readonly ViewEvent['type'][], from = 0): number[] {
    const codes = new Set(types.map((t) => TYPE_CODE.get(t)));
    const out: number[] = [];
    const data = this.types.data;
    for (let i = from; i < this.count; i++) if (codes.has(data[i]!)) out.push(i);
    return out;
  }

  /** The last row whose line starts at or before `offset` (binary search: rows are in file order). */
  rowAtOrBefore(offset: number): number {
    let lo = 0;
    let hi = this.count - 1;
    let found = -1;
    const data = this.offsets.data;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      if (data[mid]! <= offset) {
        found = mid;
        lo = mid + 1;
      } else hi = mid - 1;
    }
    return found;
  }

  /** Returns the row the event made, or -1 when it closed an earlier row instead. */
  private indexOne({ event: e, offset, length }: LocatedEvent): number {
    if (e.type === 'tool_use' && e.status !== 'started') {
      const open = e.id ? this.running.get(e.id) : undefined;
      if (open) {
        this.running.delete(e.id);
        this.closeTool(open.row, e.id, e.status === 'failed' ? ToolState.Failed : ToolState.Succeeded, Date.parse(e.at), open.startedAt);
        return -1;
      }
      // An end nobody started (a log written before the supervisor paired calls): an instant call of its own row.
      return this.push(e.type, offset, length, e.status === 'failed' ? ToolState.Failed : ToolState.Succeeded);
    }
    if (e.type === 'finished') {
      // The fold marked calls still open as failed: their rows follow.
      for (const [id, open] of this.running) this.closeTool(open.row, id, ToolState.Failed, Date.parse(e.at), open.startedAt);
      this.running.clear();
    }
    const row = this.push(e.type, offset, length, e.type === 'tool_use' ? ToolState.Running : ToolState.None);
    if (e.type === 'tool_use' && e.id) this.running.set(e.id, { row, startedAt: Date.parse(e.started_at ?? e.at) });
    return row;
  }

  private push(type: ViewEvent['type'], offset: number, length: number, tool: ToolState): number {
    const i = this.count++;
    this.offsets.data[i] = offset;
    this.lengths.data[i] = length;
    this.types.data[i] = TYPE_CODE.get(type) ?? 0;
    this.toolStates.data[i] = tool;
    this.durations.data[i] = NaN;
    return i;
  }

  private closeTool(row: number, id: string, state: ToolState, endedAt: number, rowStartedAt: number): void {
    if (this.toolStates.data[row] !== ToolState.Running) return;
    this.toolStates.data[row] = state;
    const call = findToolCall(this.view, id);
    this.durations.data[row] = call && call.endedAt !== undefined ? toolCallDuration(call, endedAt) : endedAt - rowStartedAt;
  }
}

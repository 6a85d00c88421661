import type { ViewEvent } from '../../../src/common/task-view';
import type { TimelineRow } from '../../../src/extension/timeline/messages';
import { rowDetail, rowFromEvent } from '../../../src/extension/timeline/rows';
import { TimelineIndex } from '../../../src/extension/timeline/timeline-index';

/**
 * The timeline's rows of an in-memory event list: the host's index (timeline-index.ts) and row builder (rows.ts), with
 * an array standing in for events.jsonl (a row's "offset" is its event's position in the array).
 */
export class MemoryTimeline {
  readonly index = new TimelineIndex();
  private readonly lines: ViewEvent[] = [];
  /** Events given, re-deliveries included. */
  received = 0;

  add(events: readonly ViewEvent[]): void {
    this.received += events.length;
    const located = events.map((event) => {
      this.lines.push(event);
      return { event, offset: this.lines.length - 1, length: 1 };
    });
    this.index.add(located);
  }

  get taskView() {
    return this.index.taskView;
  }

  get rows(): TimelineRow[] {
    const out: TimelineRow[] = [];
    for (let i = 0; i < this.index.rowCount; i++) {
      const { offset, tool } = this.index.row(i);
      out.push(rowFromEvent(this.lines[offset]!, i, tool));
    }
    return out;
  }

  detail(row: number): string {
    const { offset, tool } = this.index.row(row);
    return rowDetail(this.lines[offset]!, tool);
  }
}

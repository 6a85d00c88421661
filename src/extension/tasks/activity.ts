import type { ProtocolEvent } from '../../protocol';
import { EMPTY_TASK_VIEW, KEEP_TOOL_CALLS, foldTaskView, type ErrorEntry, type FileTouch, type TaskView } from '../../common/task-view';

export type { ErrorEntry, FileTouch };

/** One tool call as the tree shows it: a start paired with its end (paired by the supervisor, looked up by id here). */
export interface ToolCall {
  /** Position among the task's tool calls, stable across refreshes (tree item ids use it). */
  index: number;
  tool: string;
  input: string;
  status: 'running' | 'succeeded' | 'failed';
  startedAt: number;
  endedAt?: number;
  callId: string;
}

/**
 * What the tree needs from a task's event stream: the shared task view (src/common/task-view.ts, the same fold
 * `caesar watch` and the timeline use), folded incrementally as batches arrive. Only the most recent tool calls are
 * kept: a 100k-event task must not make a 50k-item tree.
 */
export class TaskActivity {
  static readonly KEEP_TOOL_CALLS = KEEP_TOOL_CALLS;
  private view: TaskView = EMPTY_TASK_VIEW;

  apply(events: readonly ProtocolEvent[]): void {
    this.view = foldTaskView(this.view, events);
  }

  get taskView(): TaskView {
    return this.view;
  }

  get toolCalls(): ToolCall[] {
    return this.view.toolCalls.map((call) => ({
      index: call.index,
      tool: call.name,
      input: call.summary,
      status: call.status,
      startedAt: call.startedAt,
      ...(call.endedAt !== undefined ? { endedAt: call.endedAt } : {}),
      callId: call.id,
    }));
  }

  get toolCallCount(): number {
    return this.view.toolCallCount;
  }

  get files(): ReadonlyMap<string, FileTouch> {
    return new Map(this.view.fileTouches.map((touch) => [touch.path, touch]));
  }

  get errors(): readonly ErrorEntry[] {
    return this.view.errors;
  }

  get eventCount(): number {
    return this.view.eventCount;
  }

  get lastSeq(): number {
    return this.view.lastSeq;
  }

  get finished(): boolean {
    return this.view.finished !== undefined;
  }
}

import type { ProtocolEvent } from '../../protocol';

/** One tool call as the tree and the timeline show it: a start paired with its end. */
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

export interface FileTouch {
  path: string;
  action: string;
}

export interface ErrorEntry {
  message: string;
  fatal: boolean;
  at: string;
}

/**
 * What the tree needs from a task's event stream, folded incrementally (events arrive in batches while the task
 * runs). Only the most recent tool calls are kept: a 100k-event task must not make a 50k-item tree.
 */
export class TaskActivity {
  static readonly KEEP_TOOL_CALLS = 200;
  readonly toolCalls: ToolCall[] = [];
  toolCallCount = 0;
  readonly files = new Map<string, FileTouch>();
  readonly errors: ErrorEntry[] = [];
  eventCount = 0;
  lastSeq = -1;
  finished = false;
  private readonly open = new Map<string, ToolCall>();

  apply(events: readonly ProtocolEvent[]): void {
    for (const event of events) this.applyOne(event);
  }

  private applyOne(event: ProtocolEvent): void {
    if (event.seq <= this.lastSeq) return; // a re-delivered line (follower restarted): already folded
    this.lastSeq = event.seq;
    this.eventCount++;
    const at = Date.parse(event.at);
    switch (event.type) {
      case 'tool_use': {
        // A tool reported only at its end (opencode) carries its real start time: count the duration from there.
        const startedAt = event.started_at ? Date.parse(event.started_at) : NaN;
        this.applyTool(event.tool, event.input_summary, event.status, event.id, Number.isFinite(startedAt) && event.status === 'started' ? startedAt : at);
        break;
      }
      case 'file_changed':
        this.files.set(event.path, { path: event.path, action: event.action });
        break;
      case 'error':
        this.errors.push({ message: event.message, fatal: event.fatal, at: event.at });
        if (this.errors.length > 50) this.errors.shift();
        break;
      case 'finished':
        this.finished = true;
        // Whatever was still open when the agent finished did not complete: mark it so no spinner spins forever.
        for (const call of this.open.values()) {
          call.status = 'failed';
          call.endedAt = at;
        }
        this.open.clear();
        break;
      default:
        break;
    }
  }

  private applyTool(tool: string, input: string, status: 'started' | 'succeeded' | 'failed', callId: string, at: number): void {
    if (status === 'started') {
      const call: ToolCall = { index: this.toolCallCount++, tool, input, status: 'running', startedAt: at, callId };
      this.toolCalls.push(call);
      if (this.toolCalls.length > TaskActivity.KEEP_TOOL_CALLS) {
        const dropped = this.toolCalls.shift()!;
        this.open.delete(openKey(dropped));
      }
      this.open.set(openKey(call), call);
      return;
    }
    const started = this.findOpen(tool, callId);
    if (started) {
      this.open.delete(openKey(started));
      started.status = status;
      started.endedAt = at;
      if (!started.tool && tool) started.tool = tool;
      return;
    }
    // An end without a start (the agent reports only completions): an instant call.
    const call: ToolCall = { index: this.toolCallCount++, tool, input, status, startedAt: at, endedAt: at, callId };
    this.toolCalls.push(call);
    if (this.toolCalls.length > TaskActivity.KEEP_TOOL_CALLS) this.toolCalls.shift();
  }

  /** The start an end belongs to: same call id, else (no id) the latest open call of the same tool, else the latest. */
  private findOpen(tool: string, callId: string): ToolCall | undefined {
    if (callId) return this.open.get(`id:${callId}`);
    let fallback: ToolCall | undefined;
    for (const call of this.open.values()) {
      if (call.callId) continue;
      if (!tool || call.tool === tool) fallback = call;
    }
    return fallback;
  }
}

function openKey(call: ToolCall): string {
  return call.callId ? `id:${call.callId}` : `n:${call.index}`;
}

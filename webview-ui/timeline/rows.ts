// The timeline's rows, one per event, built without any DOM so they can be tested without an editor. The task's view
// comes from the same fold the CLI's `caesar watch` and the Tasks tree use (src/common/task-view.ts): a tool call's
// start row is closed by looking its id up, as the supervisor paired them before writing events.jsonl.
import { fileActionIcon, formatDuration } from '../../src/common/format';
import { EMPTY_TASK_VIEW, findToolCall, foldTaskView, toolCallDuration, type TaskView } from '../../src/common/task-view';
import type { WireEvent } from '../../src/extension/timeline/messages';

type ProtocolEvent = WireEvent;

export interface Row {
  seq: number;
  at: string;
  type: ProtocolEvent['type'];
  icon: string;
  tone: '' | 'ok' | 'bad' | 'warn' | 'dim' | 'info';
  label: string;
  /** The full text shown in the detail pane when the row is selected. */
  detail: string;
  duration?: string;
  running?: boolean;
  /** The tool call's id, for tool rows. */
  callId?: string;
  filePath?: string;
}

export function firstLine(text: string): string {
  const line = text.split(/\r?\n/, 1)[0] ?? '';
  return line.length > 400 ? `${line.slice(0, 399)}…` : line;
}

export class TimelineRows {
  readonly rows: Row[] = [];
  /** Events received, re-deliveries included. */
  received = 0;
  private view: TaskView = EMPTY_TASK_VIEW;
  /** Row index of each running call's start row, by call id. */
  private readonly runningRows = new Map<string, number>();

  get taskView(): TaskView {
    return this.view;
  }

  get lastSeq(): number {
    return this.view.lastSeq;
  }

  add(events: readonly ProtocolEvent[]): void {
    this.received += events.length;
    const fresh: ProtocolEvent[] = [];
    let last = this.view.lastSeq;
    for (const event of events) {
      if (event.seq <= last) continue; // the host restarted the stream: already shown
      last = event.seq;
      fresh.push(event);
    }
    this.view = foldTaskView(this.view, fresh);
    for (const event of fresh) this.addRow(event);
  }

  private addRow(e: ProtocolEvent): void {
    const base = { seq: e.seq, at: e.at, type: e.type };
    switch (e.type) {
      case 'started':
        this.rows.push({ ...base, icon: 'play', tone: 'info', label: `Started ${e.agent}`, detail: e.command ? `${e.agent}: ${e.command}` : e.agent });
        break;
      case 'thinking':
        this.rows.push({ ...base, icon: 'lightbulb', tone: 'dim', label: firstLine(e.text), detail: e.text });
        break;
      case 'message':
        this.rows.push({ ...base, icon: 'comment', tone: '', label: firstLine(e.text), detail: e.text });
        break;
      case 'tool_use':
        this.addTool(e, base);
        break;
      case 'file_changed':
        this.rows.push({ ...base, icon: fileActionIcon(e.action), tone: 'info', label: `${e.action} ${e.path}`, detail: `${e.action}: ${e.path}`, filePath: e.path });
        break;
      case 'progress':
        this.rows.push({ ...base, icon: 'pulse', tone: 'dim', label: e.pct !== undefined ? `${e.message} (${Math.round(e.pct)}%)` : e.message, detail: e.message });
        break;
      case 'question':
        this.rows.push({
          ...base, icon: 'question', tone: 'warn', label: e.question,
          detail: e.options.length ? `${e.question}\n\nOptions: ${e.options.join(' | ')}` : e.question,
        });
        break;
      case 'answer':
        this.rows.push({ ...base, icon: 'reply', tone: 'ok', label: `Answer: ${firstLine(e.answer)}`, detail: `Answer to ${e.id}: ${e.answer}` });
        break;
      case 'error':
        this.rows.push({ ...base, icon: e.fatal ? 'error' : 'warning', tone: e.fatal ? 'bad' : 'warn', label: firstLine(e.message), detail: e.message });
        break;
      case 'finished': {
        // The fold marked calls still open as failed: their rows follow.
        for (const [id, index] of this.runningRows) this.closeRow(index, id, 'failed', e.at);
        this.runningRows.clear();
        const ok = e.status === 'success';
        this.rows.push({
          ...base, icon: ok ? 'pass' : e.status === 'partial' ? 'warning' : 'error', tone: ok ? 'ok' : e.status === 'partial' ? 'warn' : 'bad',
          label: `Finished: ${e.status}${e.summary ? ` — ${firstLine(e.summary)}` : ''}`, detail: e.summary || e.status,
        });
        break;
      }
    }
  }

  private addTool(e: Extract<ProtocolEvent, { type: 'tool_use' }>, base: Pick<Row, 'seq' | 'at' | 'type'>): void {
    const label = [e.tool || 'tool', e.input_summary].filter(Boolean).join('  ');
    if (e.status === 'started') {
      this.rows.push({ ...base, icon: 'loading', tone: '', label, detail: `${e.tool}\n${e.input_summary}`, running: true, callId: e.id });
      if (e.id) this.runningRows.set(e.id, this.rows.length - 1);
      return;
    }
    const index = e.id ? this.runningRows.get(e.id) : undefined;
    if (index !== undefined) {
      this.runningRows.delete(e.id);
      this.closeRow(index, e.id, e.status, e.at);
      return;
    }
    // An end nobody started (a log written before the supervisor paired calls): an instant call.
    this.rows.push({
      ...base, icon: e.status === 'failed' ? 'error' : 'tools', tone: e.status === 'failed' ? 'bad' : '', label,
      detail: `${e.tool}\n${e.input_summary}`, callId: e.id,
    });
  }

  private closeRow(index: number, id: string, status: 'succeeded' | 'failed', endAt: string): void {
    const row = this.rows[index];
    if (!row || !row.running) return;
    row.running = false;
    row.icon = status === 'failed' ? 'error' : 'tools';
    row.tone = status === 'failed' ? 'bad' : '';
    const call = findToolCall(this.view, id);
    const endedAt = Date.parse(endAt);
    row.duration = formatDuration(call && call.endedAt !== undefined ? toolCallDuration(call, endedAt) : endedAt - Date.parse(row.at));
    if (status === 'failed') row.detail += '\n(failed)';
  }
}

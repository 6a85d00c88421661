type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;
/** One event on the wire: `protocol` and `task_id` are dropped (identical on every line of a task's file). */
export type WireEvent = DistributiveOmit<ProtocolEvent, 'protocol' | 'task_id'>;
/** What `events.data` decodes to. */
export type TimelineEvents = WireEvent[];

/**
 * The typed message contract between the timeline panel (extension host) and its webview (webview-ui/timeline).
 * The webview imports this file for TYPES only; it must stay free of runtime imports beyond type-only ones.
 */
import type { ProtocolEvent, Report, Usage } from '../../protocol';

/** What the header of the timeline shows about the task (state.json + result.json, flattened). */
export interface TimelineTaskInfo {
  id: string;
  agent: string;
  objective: string;
  /** The observed status: pending | running | succeeded | failed | cancelled | timed_out | lost. */
  status: string;
  phase?: string;
  createdAt: string;
  startedAt?: string;
  endedAt?: string;
  error?: string;
  usage?: Usage;
  /** The final report (normalized and reconciled), once the task is over. */
  report?: Report;
  reportSource?: string;
  files?: { path: string; action: string; additions: number; deletions: number; binary: boolean }[];
}

export type HostToWebview =
  /** Sent first and again whenever the task's state or result changes. */
  | { type: 'task'; task: TimelineTaskInfo }
  /**
   * A batch of events in seq order, as the UTF-8 JSON text of a WireEvent[] (decode, then JSON.parse): typed
   * arrays cross into the webview as binary. `backlog` is true while the panel is still catching up with the file.
   */
  | { type: 'events'; data: Uint8Array; count: number; backlog: boolean }
  /** The backlog has been sent completely (the file's size when the panel opened has been read). */
  | { type: 'caughtUp'; total: number }
  /** Lines of events.jsonl that could not be read (counted, shown, not hidden). */
  | { type: 'badLines'; count: number };

export interface TimelineStats {
  /** Events the webview has received so far. */
  received: number;
  /** Rows of the timeline (tool starts and ends merge into one row). */
  rows: number;
  /** DOM rows currently rendered (virtualization: a screenful, not `rows`). */
  rendered: number;
  lastSeq: number;
  caughtUp: boolean;
  /** Every event's text as shown, for the tests (only the last 200 rows' labels to keep the message small). */
  recentLabels: string[];
}

export type WebviewToHost =
  /** The script has loaded and wants its data (also sent after the webview is restored). */
  | { type: 'ready' }
  /** A report of what the webview received and rendered: the tests and the timing figures read it. */
  | { type: 'stats'; stats: TimelineStats }
  /** The user activated a file row: open that file (or its diff) in the editor. */
  | { type: 'openFile'; path: string }
  /** A button of the header: review, apply or discard the task's changes (the same commands as the tree's). */
  | { type: 'action'; action: TimelineAction };

/** The header's actions on the task's changes; each runs the extension command `caesar.<action>`. */
export type TimelineAction = 'reviewAll' | 'apply' | 'applySelected' | 'discard';

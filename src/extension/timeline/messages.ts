/**
 * The typed message contract between the timeline panel (extension host) and its webview (webview-ui/timeline).
 * The webview imports this file for TYPES only; it must stay free of runtime imports beyond type-only ones.
 *
 * The rows stay in the extension host: the webview asks for the window it shows (`window`) and receives those rows
 * and the total, never the whole event stream, so what crosses the channel and what the webview holds does not grow
 * with the task's event count.
 */
import type { ProtocolEvent, Report, Usage } from '../../protocol';
import type { LifecyclePhase } from '../../common/lifecycle';
import type { TaskAction, TaskActionId } from '../../common/next-actions';

/** What the header of the timeline shows about the task (state.json + result.json, flattened). */
export interface TimelineTaskInfo {
  id: string;
  agent: string;
  objective: string;
  /** The observed status: pending | queued | running | succeeded | failed | cancelled | timed_out | lost. */
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
  /** Where the task is in its life (src/common/lifecycle.ts), as every surface says it. */
  lifecycle: { phase: LifecyclePhase; label: string };
  /** The actions open to it, in order (src/common/next-actions.ts). */
  actions: TaskAction[];
  /** The header's buttons: those of `actions` the header has, with their labels ("Apply the Rest", "Remove Worktree"). */
  buttons: { action: TimelineAction; label: string }[];
  /** What the user did with the work (engine/store/store reviewOutcome, as `caesar ps` says it). */
  review?: 'applied' | 'discarded';
  /** The task's worktree was removed: its files cannot be opened, nothing is left to apply or discard. */
  worktreeGone?: boolean;
}

export type RowTone = '' | 'ok' | 'bad' | 'warn' | 'dim' | 'info';

/** One row of the timeline as the list shows it (a tool call's start and end are one row). */
export interface TimelineRow {
  /** Position among all the task's rows (not the filtered ones): detail and open requests name a row by it. */
  index: number;
  seq: number;
  at: string;
  type: ProtocolEvent['type'];
  /** A codicon name without the `codicon-` prefix. */
  icon: string;
  tone: RowTone;
  /** One line, clamped. Agent text: the webview puts it in the page as text only. */
  label: string;
  duration?: string;
  running?: boolean;
  filePath?: string;
}

/** Which rows the list shows: all of them, those of some event types, those whose text contains a string. */
export interface TimelineQuery {
  /** Case-insensitive (ASCII letters) substring of the row's texts; empty: no text condition. */
  text: string;
  /** Event types to keep; empty: all. */
  types: ProtocolEvent['type'][];
}

/** Where the host is with the task's events (sent on every change, throttled). */
export interface TimelineStatus {
  /** Events indexed so far. */
  events: number;
  /** Rows of the whole task (unfiltered). */
  rows: number;
  lastSeq: number;
  /** The file's backlog (its size when the panel opened) has been indexed: from here on, only live appends. */
  caughtUp: boolean;
  /** Bytes indexed and the file's size when indexing started, for the "loading" note. */
  indexedBytes: number;
  backlogBytes: number;
  /** Lines of events.jsonl that could not be read (counted, shown, not hidden). */
  badLines: number;
  /** The last progress event the agent sent (from the shared fold). */
  progress?: { message: string; pct?: number };
}

export type HostToWebview =
  /** Sent first and again whenever the task's state or result changes. */
  | { type: 'task'; task: TimelineTaskInfo }
  | { type: 'status'; status: TimelineStatus }
  /**
   * Rows [start, start + rows.length) of the current query (`generation` names it: rows of an older query are
   * dropped), and how many rows that query has in all. Also pushed unasked on live appends while the webview follows.
   */
  | { type: 'rows'; generation: number; start: number; total: number; rows: TimelineRow[]; follow: boolean; status: TimelineStatus }
  /** The full text of one row, asked for by `detail`. */
  | { type: 'detail'; index: number; text: string }
  /**
   * The panel now shows another task (an untouched panel is reused, as VS Code reuses a preview editor): forget
   * everything shown, then say `ready` as a freshly loaded page does.
   */
  | { type: 'retarget'; taskId: string }
  /** Types a search and picks a filter in the page's toolbar, as the user would (tests drive the toolbar so). */
  | { type: 'search'; text: string; filter: TimelineFilter };

export interface TimelineStats {
  /** Events the host had indexed when the webview last heard from it. */
  received: number;
  /** Rows of the timeline (tool starts and ends merge into one row). */
  rows: number;
  /** DOM rows currently rendered (virtualization: a screenful, not `rows`). */
  rendered: number;
  lastSeq: number;
  caughtUp: boolean;
  /** Labels of the rows the webview holds (its window: the bottom of the list while it follows), in order. */
  recentLabels: string[];
  /** Index (in the current query) of the first row in view. */
  firstVisible: number;
  /** Labels of the row elements the page displays (by computed style), top to bottom: what the user sees. */
  shownLabels: string[];
  /** The footer's text ("N events · M rows"). */
  footer: string;
  /** The header's action buttons the page displays (TimelineAction values; `step:<action>` for a next step's). */
  actions: string[];
  /** The header's review note the page displays ("Applied to your workspace.", "Discarded: …"), '' when none. */
  reviewNote: string;
  /** The report's next steps the page displays, in order (those still open: see agentStepStillOpen). */
  nextSteps: string[];
}

/** The choices of the timeline's type filter (webview-ui/timeline/main.ts maps each to event types). */
export type TimelineFilter = 'all' | 'tools' | 'messages' | 'files' | 'problems';

export type WebviewToHost =
  /** The script has loaded and wants its data (also sent after the webview is restored). */
  | { type: 'ready' }
  /**
   * The rows the list needs: [start, start + count) of the current query, or with `follow` the last `count` rows
   * (and every later append while following).
   */
  | { type: 'window'; generation: number; start: number; count: number; follow: boolean }
  /** A new search or filter; the host answers with the first window of it (the last rows with `follow`). */
  | { type: 'query'; generation: number; query: TimelineQuery; count: number; follow: boolean }
  | { type: 'detail'; index: number }
  /** A report of what the webview received and rendered: the tests and the timing figures read it. */
  | { type: 'stats'; stats: TimelineStats }
  /** The user activated a file row: open that file (or its diff) in the editor. */
  | { type: 'openFile'; path: string }
  /** A button of the header: review, apply or discard the task's changes (the same commands as the tree's). */
  | { type: 'action'; action: TimelineAction }
  /** The user worked in the panel (clicked, typed, scrolled): it is theirs now, and no other task takes it over. */
  | { type: 'keep' };

/** The header's actions on the task's changes; each runs the extension command `caesar.<action>`. */
export type TimelineAction = 'reviewAll' | 'apply' | 'applySelected' | 'discard';

/** The lifecycle's id of a header action (src/common/next-actions.ts calls Review All Changes `review`). */
export function lifecycleActionOf(action: TimelineAction): TaskActionId {
  return action === 'reviewAll' ? 'review' : action;
}

/** The header's buttons for a task's actions, in the header's order. */
export function headerButtons(actions: readonly TaskAction[]): { action: TimelineAction; label: string }[] {
  const order: readonly TimelineAction[] = ['reviewAll', 'apply', 'applySelected', 'discard'];
  return order.flatMap((action) => {
    const offered = actions.find((a) => a.id === lifecycleActionOf(action));
    return offered ? [{ action, label: offered.label }] : [];
  });
}

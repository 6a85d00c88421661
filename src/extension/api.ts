import type { TaskStore } from '../engine/store';
import type { TimelineStats } from './timeline/messages';
import type { TimelineTiming } from './timeline/panel';

/** A tree item as the Tasks view shows it, flattened for assertions. */
export interface TreeItemSnapshot {
  id: string;
  label: string;
  description: string;
  icon: string;
  contextValue: string;
  children: TreeItemSnapshot[];
}

/**
 * What activate() returns. The extension tests read the live tree, the timeline panels and the status bar through
 * it; nothing here is needed by users (the commands are the user surface).
 */
export interface CaesarApi {
  readonly root: string;
  readonly store: TaskStore;
  /** Milliseconds activate() took, measured inside it. */
  readonly activationMs: number;
  /** Milliseconds from the first line of the bundle being evaluated to the end of activate(). */
  readonly loadAndActivateMs: number;
  /** Milliseconds evaluating the bundle took (its imports: zod, the engine); the rest is VS Code's own scheduling. */
  readonly bundleEvaluationMs: number;
  /** Absolute path of the bundled CLI (dist/caesar.js) shipped with the extension. */
  readonly cliPath: string;
  /** Resolves when the first listing of tasks is in. */
  ready(): Promise<void>;
  /** The tree as the view would render it now: children of active tasks, and of the tasks named in `expand`. */
  treeSnapshot(expand?: string[]): Promise<TreeItemSnapshot[]>;
  /** Resolves when the tree satisfies the predicate (re-checked on every tree change), or rejects after timeoutMs. */
  waitForTree(predicate: (tree: TreeItemSnapshot[]) => boolean, timeoutMs: number, expand?: string[]): Promise<TreeItemSnapshot[]>;
  /** The status-bar text and the view badge now. */
  statusSnapshot(): { text: string; badge?: number };
  timeline: {
    /** Opens (or reveals) a task's timeline; same as the command. */
    open(taskId: string): void;
    /** What the webview last reported it received and rendered, or undefined if no panel / no report yet. */
    stats(taskId: string): TimelineStats | undefined;
    waitForStats(taskId: string, predicate: (s: TimelineStats) => boolean, timeoutMs: number): Promise<TimelineStats>;
    timing(taskId: string): TimelineTiming | undefined;
  };
}

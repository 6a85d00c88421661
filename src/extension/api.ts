import * as vscode from 'vscode';
import type { TaskStore } from '../engine/tasks';
import type { CaesarStatus } from './status/statusBar';
import type { LiveTasks } from './tasks/liveTasks';
import { ToolCallsNode } from './tasks/nodes';
import { FolderNode, TaskNode, type TasksTreeProvider, type TaskTreeNode } from './tasks/tree';
import type { Confirm } from './review/reviewCommands';
import type { TimelineFilter, TimelineStats } from './timeline/messages';
import type { DelegateCommands } from './delegate/delegateCommands';
import { currentInput, onDidShowInput, type ShownInput } from './picker';
import type { ShownStep, StepName } from './delegate/quickSteps';
import type { AnswerOutcome, QuestionInbox, QuestionNotice } from './questions/inbox';
import type { TimelinePanel, TimelineTiming } from './timeline/panel';
import type { TimelinePanels } from './timeline/panels';

/** True only in the in-editor tests' bundle (esbuild-extension.mjs defines it for every build of the extension). */
declare const CAESAR_TEST_SEAMS: boolean;

/** A tree item as the Tasks view shows it, flattened for assertions. */
export interface TreeItemSnapshot {
  id: string;
  label: string;
  description: string;
  icon: string;
  contextValue: string;
  /** 'expanded', 'collapsed' or 'none', as the item asks the view to show it first. */
  collapsible: 'expanded' | 'collapsed' | 'none';
  /** The tooltip's text (a Markdown tooltip's source). */
  tooltip: string;
  children: TreeItemSnapshot[];
}

/**
 * What activate() returns in the in-editor tests' build only (CAESAR_TEST_SEAMS; extension.ts): the tests read the
 * live tree, the timeline panels and the status bar through it, and drive what a person would (answer a question,
 * pick in a picker, search a timeline). Any installed extension can reach an extension's exports, so the shipped
 * build exports nothing (issue 34; test/unit/extension/packaged-api.test.ts checks the .vsix): the commands are the
 * user surface.
 */
export interface CaesarApi {
  /** The first folder's caesar root. */
  readonly root: string;
  /** Every folder's caesar root, in the window's folder order. */
  readonly roots: readonly string[];
  /** The first folder's store. */
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
  /**
   * The tree as the view would render it now: children of folders, of active tasks, and of the tasks named in
   * `expand` (at any depth: nested tasks too).
   */
  treeSnapshot(expand?: string[]): Promise<TreeItemSnapshot[]>;
  /** Resolves when the tree satisfies the predicate (re-checked on every tree change), or rejects after timeoutMs. */
  waitForTree(predicate: (tree: TreeItemSnapshot[]) => boolean, timeoutMs: number, expand?: string[]): Promise<TreeItemSnapshot[]>;
  /** The status-bar text and the view badge now. */
  statusSnapshot(): { text: string; badge?: number };
  /** Reveals a task in the Tasks view and expands it, as a user's click does (VS Code then asks for its children). */
  expandTask(taskId: string): Promise<void>;
  /** The last 20 lists of children the view was given for a task, oldest first: what the user was shown. */
  childrenShown(taskId: string): TreeItemSnapshot[][];
  /** How many times the view was given a task's children since activation (childrenShown keeps only the last 20). */
  childrenAsks(taskId: string): number;
  /** What activation does under `caesar.showOnStartup` (reveal the view, open the newest task's timeline). */
  showOnStartup(): Promise<void>;
  /** Whether the Tasks view is visible now. */
  viewVisible(): boolean;
  /** Review and apply: set when a folder is open. */
  readonly review?: ReviewApi;
  /** The `caesar` MCP server definition provider, when the host has the API. */
  readonly mcp?: vscode.McpServerDefinitionProvider<vscode.McpStdioServerDefinition>;
  delegation: {
    /** The Delegate flow's step on screen now (its live quick input: a test sets its value or active item, then accepts). */
    currentStep(): ShownStep | undefined;
    /** Resolves when the flow shows the named step (or shows it already). */
    waitForStep(step: StepName, timeoutMs: number): Promise<ShownStep>;
    /** Ids of the tasks selected in the Tasks view. */
    selection(): string[];
    /**
     * Replaces the Workspace Trust probe the delegate commands read (undefined: VS Code's); returns the previous one.
     * Only in the in-editor tests' build (CAESAR_TEST_SEAMS, esbuild-extension.mjs): the shipped API has no way round
     * Workspace Trust.
     */
    setTrustProbe?(probe: (() => boolean) | undefined): (() => boolean) | undefined;
  };
  questions: {
    /** Every question notification raised since activation ("<agent> asks: …" and its buttons). */
    notified(): readonly QuestionNotice[];
    /** Resolves with the notification raised for a task's question (already raised or the next one). */
    waitForNotice(taskId: string, timeoutMs: number): Promise<QuestionNotice>;
    /** Does exactly what clicking that button of the question's notification does. */
    choose(taskId: string, questionId: string, button: string | undefined): Promise<AnswerOutcome | undefined>;
    /** Sets after how long a question still waiting is shown again (a notification that stays); returns the previous. */
    setRemindAfterMs(ms: number): number;
    /** Whether the Answer… prompt of a question is on screen now. */
    promptOpen(taskId: string, questionId: string): boolean;
  };
  /** The pickers and input boxes of picker.ts (Compare, Install 'caesar' Command, Continue with Feedback…). */
  pickers: {
    current(): ShownInput | undefined;
    /** Resolves when one whose title matches is on screen. */
    waitFor(title: RegExp, timeoutMs: number): Promise<ShownInput>;
  };
  timeline: {
    /** Opens (or reveals) a task's timeline; same as the command. */
    open(taskId: string): void;
    /** What the webview last reported it received and rendered, or undefined if no panel / no report yet. */
    stats(taskId: string): TimelineStats | undefined;
    waitForStats(taskId: string, predicate: (s: TimelineStats) => boolean, timeoutMs: number): Promise<TimelineStats>;
    timing(taskId: string): TimelineTiming | undefined;
    /** The tasks whose timeline is open (a preview taken over by another task no longer counts for the first). */
    openTaskIds(): string[];
    /** True while the task's timeline is a preview the next opened task would take over. */
    isPreview(taskId: string): boolean;
    /** Types `text` in the open timeline's search box and picks `filter`, as a user would. */
    search(taskId: string, text: string, filter: TimelineFilter): void;
  };
}

export interface ReviewApi {
  /** The decoration (badge, colour) VS Code gets for a URI: a tree file item's or a worktree file's. */
  fileDecoration(uri: vscode.Uri): vscode.FileDecoration | undefined;
  /** The URI a task's changed-file item in the tree carries. */
  treeFileUri(taskId: string, file: string): vscode.Uri;
  /** The context key that shows Apply in a multi-file diff editor's title bar (true while one of a task is active). */
  reviewingTaskChanges(): boolean;
  /**
   * Replaces the modal confirmations of apply and discard (a test cannot click a dialog); returns the previous one.
   * Only in the in-editor tests' build (CAESAR_TEST_SEAMS): no other extension can silence them in the shipped one.
   */
  setConfirm?(confirm: Confirm): Confirm;
}

export interface CaesarApiParts {
  roots: string[];
  tasks: LiveTasks;
  tree: TasksTreeProvider;
  view: vscode.TreeView<TaskTreeNode>;
  status: CaesarStatus;
  timelines: TimelinePanels;
  delegator: DelegateCommands;
  inbox: QuestionInbox;
  cliPath: string;
  timing: Pick<CaesarApi, 'activationMs' | 'loadAndActivateMs' | 'bundleEvaluationMs'>;
  showOnStartup(): Promise<void>;
  review?: ReviewApi;
  mcp?: vscode.McpServerDefinitionProvider<vscode.McpStdioServerDefinition>;
}

/** Builds the API activate() returns, over the live views (it reads them; it never holds state of its own). */
export function createCaesarApi({ roots, tasks, tree, view, status, timelines, cliPath, timing, showOnStartup, review, mcp, delegator, inbox }: CaesarApiParts): CaesarApi {
  // Children are listed for active tasks (the view shows them expanded) and for the ids asked for: listing a finished
  // task's children reads its events, which the view itself only does when the user expands it.
  const snapshot = async (expand: string[] = []): Promise<TreeItemSnapshot[]> => {
    const wanted = (node: TaskTreeNode) => {
      if (node instanceof FolderNode || node instanceof ToolCallsNode) return true;
      if (!(node instanceof TaskNode)) return false;
      const summary = tasks.get(node.taskId);
      return expand.includes(node.taskId) || (summary !== undefined && (summary.observed === 'running' || summary.observed === 'pending'));
    };
    const walk = async (nodes: TaskTreeNode[], depth: number): Promise<TreeItemSnapshot[]> =>
      Promise.all(
        nodes.map(async (node) => ({
          ...snapshotOf(tree.getTreeItem(node)),
          children: depth < 4 && wanted(node) ? await walk(await tree.childrenOf(node), depth + 1) : [],
        })),
      );
    return walk(await tree.childrenOf(), 0);
  };

  // The one record kept here: what the view itself was given, which no VS Code API reads back.
  const shown = new Map<string, TreeItemSnapshot[][]>();
  const asks = new Map<string, number>();
  tree.onDidServeChildren(({ taskId, children }) => {
    asks.set(taskId, (asks.get(taskId) ?? 0) + 1);
    const answers = shown.get(taskId) ?? [];
    answers.push(children.map((node) => snapshotOf(tree.getTreeItem(node))));
    shown.set(taskId, answers.slice(-20));
  });

  const api: CaesarApi = {
    root: roots[0]!,
    roots,
    store: tasks.store,
    ...timing,
    cliPath,
    ready: () => tasks.ready(),
    treeSnapshot: snapshot,
    waitForTree: (predicate, timeoutMs, expand) =>
      new Promise((resolve, reject) => {
        const subs: vscode.Disposable[] = [];
        const done = (fn: () => void) => {
          clearTimeout(timer);
          for (const s of subs) s.dispose();
          fn();
        };
        const check = async () => {
          const current = await snapshot(expand);
          if (predicate(current)) done(() => resolve(current));
        };
        const timer = setTimeout(async () => {
          const current = await snapshot(expand);
          done(() => reject(new Error(`tree condition not met within ${timeoutMs} ms; tree: ${JSON.stringify(current, null, 1)}`)));
        }, timeoutMs);
        subs.push(tree.onDidChangeTreeData(() => void check()));
        void check();
      }),
    statusSnapshot: () => ({ text: status.text, badge: view.badge?.value }),
    expandTask: async (taskId) => {
      await tasks.ready();
      if (!tasks.get(taskId)) throw new Error(`task ${taskId} is not listed`);
      await view.reveal(tree.nodeFor(taskId), { expand: true, select: false, focus: false });
    },
    childrenShown: (taskId) => shown.get(taskId) ?? [],
    childrenAsks: (taskId) => asks.get(taskId) ?? 0,
    showOnStartup,
    ...(review ? { review } : {}),
    ...(mcp ? { mcp } : {}),
    viewVisible: () => view.visible,
    delegation: {
      currentStep: () => delegator.flow.currentStep,
      waitForStep: (step, timeoutMs) =>
        waitFor(
          () => (delegator.flow.currentStep?.step === step ? delegator.flow.currentStep : undefined),
          delegator.flow.onDidShowStep,
          timeoutMs,
          `the delegate step "${step}" (on screen: ${delegator.flow.currentStep?.step ?? 'none'})`,
        ),
      selection: () => view.selection.filter((n): n is TaskNode => n instanceof TaskNode).map((n) => n.taskId),
      // A build-time constant (esbuild define): false in what ships, so this property is not even in the bundle.
      ...(CAESAR_TEST_SEAMS ? { setTrustProbe: (probe: (() => boolean) | undefined) => delegator.replaceTrustProbe(probe) } : {}),
    },
    questions: {
      notified: () => inbox.notified,
      waitForNotice: (taskId, timeoutMs) =>
        waitFor(() => inbox.notified.find((n) => n.taskId === taskId), inbox.onDidNotify, timeoutMs, `a question notification for task ${taskId}`),
      choose: (taskId, questionId, button) => inbox.onNotificationChoice(taskId, questionId, button),
      setRemindAfterMs: (ms) => {
        const previous = inbox.remindAfterMs;
        inbox.remindAfterMs = ms;
        return previous;
      },
      promptOpen: (taskId, questionId) => inbox.isPromptOpen(taskId, questionId),
    },
    pickers: {
      current: currentInput,
      waitFor: (title, timeoutMs) => {
        const matching = () => {
          const shown = currentInput();
          return shown && title.test(shown.title) ? shown : undefined;
        };
        return waitFor(matching, onDidShowInput, timeoutMs, `a picker titled ${title} (on screen: ${currentInput()?.title ?? 'none'})`);
      },
    },
    timeline: {
      open: (taskId) => void timelines.open(taskId),
      stats: (taskId) => timelines.get(taskId)?.stats,
      timing: (taskId) => timelines.get(taskId)?.timing,
      openTaskIds: () => timelines.openTaskIds(),
      isPreview: (taskId) => timelines.get(taskId)?.isPreview ?? false,
      search: (taskId, text, filter) => timelines.get(taskId)?.search(text, filter),
      waitForStats: (taskId, predicate, timeoutMs) => {
        let timer: NodeJS.Timeout | undefined;
        let sub: vscode.Disposable | undefined;
        const panelOpen = new Promise<TimelinePanel>((resolve) => {
          const existing = timelines.get(taskId);
          if (existing) return resolve(existing);
          sub = timelines.onDidOpen((p) => p.taskId === taskId && resolve(p));
        });
        const timeout = new Promise<never>((_, reject) => {
          timer = setTimeout(
            () => reject(new Error(`timeline stats condition not met within ${timeoutMs} ms; last: ${JSON.stringify(timelines.get(taskId)?.stats)}`)),
            timeoutMs,
          );
        });
        return Promise.race([panelOpen.then((p) => p.waitForStats(predicate)), timeout]).finally(() => {
          clearTimeout(timer);
          sub?.dispose();
        });
      },
    },
  };
  return api;
}

/** Resolves with check()'s value, re-checked whenever `event` fires; rejects after timeoutMs. */
function waitFor<T>(check: () => T | undefined, event: vscode.Event<unknown>, timeoutMs: number, what: string): Promise<T> {
  return new Promise((resolve, reject) => {
    const now = check();
    if (now !== undefined) return resolve(now);
    const timer = setTimeout(() => {
      sub.dispose();
      reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what}`));
    }, timeoutMs);
    const sub = event(() => {
      const value = check();
      if (value === undefined) return;
      clearTimeout(timer);
      sub.dispose();
      resolve(value);
    });
  });
}

function snapshotOf(item: vscode.TreeItem): TreeItemSnapshot {
  return {
    id: item.id ?? '',
    label: typeof item.label === 'string' ? item.label : (item.label?.label ?? ''),
    description: typeof item.description === 'string' ? item.description : '',
    icon: item.iconPath instanceof vscode.ThemeIcon ? item.iconPath.id : '',
    contextValue: item.contextValue ?? '',
    collapsible:
      item.collapsibleState === vscode.TreeItemCollapsibleState.Expanded ? 'expanded' : item.collapsibleState === vscode.TreeItemCollapsibleState.Collapsed ? 'collapsed' : 'none',
    tooltip: typeof item.tooltip === 'string' ? item.tooltip : (item.tooltip?.value ?? ''),
    children: [],
  };
}

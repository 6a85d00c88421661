import { taskLifecycle, type Lifecycle, type LifecycleRecords } from './lifecycle';
import { plural } from './format';

/*
 * The actions open to a task, in the order a person would take them, from its lifecycle (lifecycle.ts). Every surface
 * offers these and nothing else: the tree's context value lists their ids (package.json `when` clauses match
 * `;apply;`), the diff editors' title bars and the timeline read the same list, the CLI prints their commands as its
 * "next:" line and the MCP tools name their tools as a hint. Browser-safe and pure.
 */

export type TaskActionId =
  | 'answer'
  | 'cancel'
  | 'review'
  | 'apply'
  | 'applySelected'
  | 'land'
  | 'continue'
  | 'discard'
  | 'rerun'
  | 'compare'
  | 'remove';

export interface TaskAction {
  id: TaskActionId;
  /** The words of a button or menu item ("Apply the Rest" after a partial apply). */
  label: string;
  /** What the action does next, as a sentence of a next-steps list. */
  step: string;
  /** One of the few offered first (the tree's inline buttons, the timeline's header). */
  primary?: true;
  /** Loses something (the agent's run, unapplied work, the records): asks first. */
  destructive?: true;
}

/** The actions open to a task in that lifecycle, in the order to take them. */
export function nextActions(life: Lifecycle): TaskAction[] {
  const actions: TaskAction[] = [];
  const add = (id: TaskActionId, extra: Partial<TaskAction> = {}) => actions.push({ id, label: LABELS[id], step: STEPS[id], ...extra });
  const finishedTask = () => {
    // Continuing starts from the task's worktree (or, for a task that ran in place, from the workspace).
    if (life.worktree || life.phase === 'in_workspace') add('continue');
    add('rerun');
    add('compare');
    add('remove', { destructive: true });
  };
  switch (life.phase) {
    case 'waiting':
      add('answer', { primary: true });
      add('cancel', { destructive: true });
      return actions;
    case 'starting':
    case 'queued':
    case 'running':
      add('cancel', { primary: true, destructive: true });
      return actions;
    case 'review':
      add('review', { primary: true });
      add('apply', { primary: true });
      add('applySelected');
      add('land');
      add('discard', { primary: true, destructive: true });
      finishedTask();
      return actions;
    case 'partly_applied':
      add('review', { primary: true });
      add('apply', { primary: true, label: 'Apply the Rest', step: `Apply the ${plural(life.changedFiles - life.appliedFiles, 'file')} not applied yet.` });
      add('applySelected');
      add('discard', { primary: true, destructive: true, step: 'Discard the worktree and the files not applied.' });
      finishedTask();
      return actions;
    case 'applied':
    case 'no_change':
    case 'lost':
      // The work is in the workspace (or there is none): what is left is clean-up, a follow-up, or another run.
      if (life.phase === 'applied' && life.worktree && life.changedFiles) add('review');
      if (life.worktree) add('discard', { label: 'Remove Worktree', step: 'Remove the task’s worktree and branch.', ...(life.phase === 'lost' ? { destructive: true as const } : {}) });
      finishedTask();
      return actions;
    case 'discarded':
    case 'closed':
    case 'in_workspace':
      finishedTask();
      return actions;
    case 'unverified':
      add('remove', { destructive: true });
      return actions;
  }
}

const LABELS: Record<TaskActionId, string> = {
  answer: 'Answer',
  cancel: 'Cancel Task',
  review: 'Review All Changes',
  apply: 'Apply',
  applySelected: 'Apply Selected Files…',
  land: 'Land',
  continue: 'Continue with Feedback…',
  discard: 'Discard',
  rerun: 'Re-run',
  compare: 'Compare Tasks…',
  remove: 'Remove Task',
};

const STEPS: Record<TaskActionId, string> = {
  answer: 'Answer its question: the agent waits for it.',
  cancel: 'Cancel it if it is not needed any more.',
  review: 'Review its changes.',
  apply: 'Apply them to your workspace.',
  applySelected: 'Or apply only some of the files.',
  land: 'Or land it onto the current HEAD, its checks re-run.',
  continue: 'Send it back to its agent with feedback.',
  discard: 'Or discard its worktree and changes.',
  rerun: 'Run the same objective again.',
  compare: 'Compare it with other tasks.',
  remove: 'Remove the task and its records.',
};

/** True when the list holds the action: the one test every surface asks before offering it. */
export function offers(actions: readonly TaskAction[], id: TaskActionId): boolean {
  return actions.some((a) => a.id === id);
}

/** The actions open to a task, straight from its records. */
export function actionsFor(records: LifecycleRecords): TaskAction[] {
  return nextActions(taskLifecycle(records));
}

/** A test of a task's records: does its lifecycle allow `id` now? (The pickers list only the tasks it allows.) */
export function allows(id: TaskActionId): (records: LifecycleRecords) => boolean {
  return (records) => offers(actionsFor(records), id);
}

/**
 * The tree item's context value: `task:<phase>;<id>;<id>;…;`. package.json's menus show an action on a task when its
 * id is listed (`viewItem =~ /;apply;/`), so the tree offers exactly the list and nothing decides a second time.
 */
export function actionsContextValue(prefix: string, life: Lifecycle, actions: readonly TaskAction[]): string {
  return `${prefix}:${life.phase};${actions.map((a) => `${a.id};`).join('')}`;
}

/** The CLI's command for each action it has (the editor-only ones have none). */
const CLI_COMMANDS: Partial<Record<TaskActionId, (id: string) => string>> = {
  answer: (id) => `caesar answer ${id} <question-id> "<text>"`,
  cancel: (id) => `caesar cancel ${id}`,
  review: (id) => `caesar diff ${id}`,
  apply: (id) => `caesar apply ${id}`,
  applySelected: (id) => `caesar apply ${id} --files <paths>`,
  land: (id) => `caesar land ${id}`,
  continue: (id) => `caesar continue ${id} "<feedback>"`,
  discard: (id) => `caesar discard ${id}`,
};

/** The MCP tool of each action the orchestrator server has. */
const MCP_TOOLS: Partial<Record<TaskActionId, string>> = {
  answer: 'caesar_answer',
  cancel: 'caesar_cancel',
  review: 'caesar_diff',
  apply: 'caesar_apply',
  land: 'caesar_land',
};

export interface ActionHint {
  id: TaskActionId;
  label: string;
  /** The CLI command, or the MCP tool, that does it. */
  how: string;
  primary?: true;
}

/** The actions a front end can do itself, each with its command (`cli`) or tool (`mcp`), in order. */
export function actionHints(actions: readonly TaskAction[], surface: 'cli' | 'mcp', taskId: string): ActionHint[] {
  const hints: ActionHint[] = [];
  for (const action of actions) {
    const how = surface === 'cli' ? CLI_COMMANDS[action.id]?.(taskId) : MCP_TOOLS[action.id];
    if (how && !hints.some((h) => h.how === how)) hints.push({ id: action.id, label: action.label, how, ...(action.primary ? { primary: true as const } : {}) });
  }
  return hints;
}

/** How many commands an advice line names: the primary ones first, then the others, in order. */
const ADVICE_LENGTH = 3;

function advised(hints: readonly ActionHint[]): ActionHint[] {
  return [...hints.filter((h) => h.primary), ...hints.filter((h) => !h.primary)].slice(0, ADVICE_LENGTH);
}

/** The CLI's advice line, "next: caesar diff t_…  ·  caesar apply t_…  ·  caesar discard t_…", or '' when nothing is left. */
export function cliAdvice(actions: readonly TaskAction[], taskId: string): string {
  const hints = advised(actionHints(actions, 'cli', taskId));
  return hints.length ? `next: ${hints.map((h) => h.how).join('  ·  ')}` : '';
}

/** The MCP tools' hint, "Next: caesar_diff (Review All Changes), caesar_apply (Apply).", or '' when nothing is left. */
export function mcpAdvice(hints: readonly ActionHint[]): string {
  const shown = advised(hints);
  return shown.length ? `Next: ${shown.map((h) => `${h.how} (${h.label})`).join(', ')}.` : '';
}

/**
 * Whether a next step the agent wrote is still open: a step about reviewing, applying, landing or discarding its
 * work reads wrong once that work was applied or discarded ("Review the diff, then apply it" after Apply).
 */
export function agentStepStillOpen(step: string, actions: readonly TaskAction[]): boolean {
  const about = /\b(review|apply|applying|applied|land|landing|merge|discard)\b|caesar[ _](diff|apply|land|discard)/i.test(step);
  return !about || offers(actions, 'apply') || offers(actions, 'land');
}

import * as vscode from 'vscode';
import { plural } from '../../common/format';
import { allows } from '../../common/next-actions';
import { continueTask, describeConflicts, landTasks, type ContinuedTask, type LandOutcome } from '../../engine/tasks';
import { pickMany } from '../picker';
import { UNTRUSTED_REVIEW } from '../review/baseContent';
import { targetOf } from '../review/target';
import type { LiveTasks } from '../tasks/liveTasks';
import { runNumbers, taskTitle } from '../../common/titles';

export interface LandDeps {
  tasks: LiveTasks;
  /** The bundled CLI a follow-up's supervisor runs from. */
  cliScript: string;
  log: vscode.LogOutputChannel;
}

/** What the result message offers after a conflict; replaceable by the in-editor tests, which cannot click a toast. */
export type LandChoice = (message: string, actions: string[]) => Thenable<string | undefined>;

export const SEND_TO_AGENT = 'Send Conflict to the Agent';
const SHOW_LOG = 'Show Log';
const TITLE = 'Caesar: Land Selected Tasks';

/** A task that may be landed: its lifecycle allows it (finished, changes in its worktree, neither applied nor discarded). */
const landable = allows('land');

/**
 * "Land" (one task) and "Land Selected Tasks" (the tree's selection, in the order chosen; else a pick): the engine's
 * landing queue (engine/tasks/land.ts) with a progress notification per task and step, then one message — landed,
 * or where it stopped and why. A conflict can go straight back to the agent (Continue with Feedback from the new
 * HEAD, the conflict marked); a failed check points at its log. In an untrusted workspace nothing runs.
 */
/** What the commands return: the queue's outcome, and the follow-up task when the conflict was sent back. */
export type LandShown = LandOutcome & { follow_up_task?: string };

/** A caller's choice made in advance (the tests, a script): what to do if the queue stops at a conflict. */
interface LandRequest {
  onConflict?: 'send' | 'ask';
}

export function createLand(deps: LandDeps): vscode.Disposable & { land(ids: string[], request?: LandRequest): Promise<LandShown | undefined>; choose: LandChoice } {
  const { tasks, log } = deps;
  const self = {
    choose: ((message, actions) => vscode.window.showWarningMessage(message, ...actions)) as LandChoice,
    land,
    dispose: () => disposables.forEach((d) => d.dispose()),
  };

  async function land(ids: string[], request: LandRequest = {}): Promise<LandShown | undefined> {
    if (!vscode.workspace.isTrusted) {
      void vscode.window.showWarningMessage(`Caesar: ${UNTRUSTED_REVIEW}`);
      return undefined;
    }
    const root = tasks.rootOf(ids[0]!);
    // Cancel ends a running check and lands nothing more; a write already under way completes (it is a transaction).
    const outcome = await vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title: 'Caesar: landing', cancellable: true }, (progress, token) => {
      const stop = new AbortController();
      const cancelled = token.onCancellationRequested(() => stop.abort());
      const report = (p: { task_id: string; index: number; total: number; step: string }) =>
        progress.report({ message: `${p.index + 1}/${p.total} ${p.task_id.slice(0, 10)}: ${p.step}`, increment: p.step === 'replaying' ? 100 / p.total : 0 });
      return landTasks(root, ids, { signal: stop.signal, onProgress: report }).finally(() => cancelled.dispose());
    });
    log.info(`land ${ids.join(' ')}: ${outcome.tasks.map((t) => `${t.task_id} ${t.status}`).join(', ')}`);
    await tasks.reloadAll();
    const continued = await report(root, outcome, request);
    return continued ? { ...outcome, follow_up_task: continued.id } : outcome;
  }

  async function report(root: string, outcome: LandOutcome, request: LandRequest): Promise<ContinuedTask | undefined> {
    const stop = outcome.tasks.find((t) => t.task_id === outcome.stopped_at);
    if (!stop) {
      void vscode.window.showInformationMessage(`Caesar: ${outcome.message}`);
      return undefined;
    }
    const why = stop.status === 'conflict' && stop.conflicts ? `conflicts in ${describeConflicts(stop.conflicts)}` : stop.message;
    const landed = outcome.landed.length ? `Landed ${plural(outcome.landed.length, 'task')}; ` : 'Nothing was landed; ';
    const message = `Caesar: ${landed}stopped at ${stop.task_id.slice(0, 10)}: ${why}`;
    if (request.onConflict === 'send' && stop.follow_up) {
      void vscode.window.showWarningMessage(message);
    }
    const choice = request.onConflict === 'send' ? SEND_TO_AGENT : await self.choose(message, stop.follow_up ? [SEND_TO_AGENT, SHOW_LOG] : [SHOW_LOG]);
    if (choice === SHOW_LOG) log.show();
    return choice === SEND_TO_AGENT && stop.follow_up ? sendToAgent(root, stop.task_id, stop.follow_up.feedback, stop.follow_up.base_commit) : undefined;
  }

  async function sendToAgent(root: string, taskId: string, feedback: string, baseCommit: string): Promise<ContinuedTask> {
    const continued = await continueTask(root, taskId, feedback, { baseCommit, cliScript: deps.cliScript, trusted: true });
    log.info(`sent the land conflict of ${taskId} back to ${continued.launch.agent} as ${continued.id} (from ${baseCommit})`);
    await tasks.reloadAll();
    return continued;
  }

  const run = (fn: () => Promise<LandShown | undefined>) =>
    fn().catch((err: Error) => {
      log.warn(`land: ${err.message}`);
      void vscode.window.showErrorMessage(`Caesar: ${err.message}`);
      return undefined;
    });
  const disposables = [
    vscode.commands.registerCommand('caesar.land', (arg?: unknown) =>
      run(async () => {
        const id = arg === undefined ? undefined : targetOf(tasks, arg)?.taskId;
        const ids = id ? [id] : await pickLandable(tasks);
        return ids?.length ? land(ids) : undefined;
      }),
    ),
    vscode.commands.registerCommand('caesar.landSelected', (arg?: unknown, selection?: unknown) =>
      run(async () => {
        const ids = chosenIds(tasks, arg, selection) ?? (await pickLandable(tasks));
        return ids?.length ? land(ids, requestOf(selection)) : undefined;
      }),
    ),
  ];
  return self;
}

/** `caesar.landSelected(ids, { onConflict: 'send' })`: a caller decides up front instead of the result message. */
function requestOf(second: unknown): LandRequest {
  const onConflict = typeof second === 'object' && second !== null && !Array.isArray(second) ? (second as LandRequest).onConflict : undefined;
  return onConflict === 'send' ? { onConflict } : {};
}

/** The tree's selection in the order the user made it (or ids from a caller), one entry per task. */
function chosenIds(tasks: LiveTasks, arg: unknown, selection: unknown): string[] | undefined {
  const given = Array.isArray(arg) ? arg : Array.isArray(selection) && selection.length > 1 ? selection : arg !== undefined ? [arg] : [];
  const ids = [...new Set(given.map((n) => targetOf(tasks, n)?.taskId).filter((id): id is string => id !== undefined))];
  return ids.length ? ids : undefined;
}

/** A pick of the landable tasks, oldest first (landed in that order). */
async function pickLandable(tasks: LiveTasks): Promise<string[] | undefined> {
  const numbers = runNumbers(tasks.list());
  const candidates = tasks
    .list()
    .filter(landable)
    .sort((a, b) => (a.state.ended_at ?? '').localeCompare(b.state.ended_at ?? ''));
  if (!candidates.length) {
    void vscode.window.showInformationMessage('Caesar: no finished task has changes left to land.');
    return undefined;
  }
  const picked = await pickMany(
    candidates.map((s) => ({ label: taskTitle(s, numbers), description: `${s.state.agent} · ${s.observed}`, id: s.id })),
    { title: TITLE, placeholder: 'Land which tasks? (in this order, oldest first)' },
  );
  return picked?.map((p) => p.id);
}

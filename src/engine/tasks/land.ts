import { existsSync } from 'node:fs';
import * as path from 'node:path';
import { plural } from '../../common/format';
import { checkPassed, stateDir, taskPaths, type CheckResult, type LaunchSpec, type TaskState } from '../../protocol';
import { applyTarget, isTaskActive, readApplied, unacceptedRepositoryChanges } from '../git/apply';
import { applyLandingPatch, recordContainedLanding } from '../git/land-apply';
import { dirtyFiles, mergeDriverRefusal, replayOnto, repositoryMergeDrivers, scratchWorktree, taskResultTree, throwawayCommit, treeDiff, type ReplayConflict } from '../git/land-replay';
import { gitText } from '../git/git';
import type { DiffResult } from '../git/reconcile';
import { bareLayoutReasons, bareRepositoryLayouts } from '../git/bare-layout';
import { taskDiffSource } from '../git/worktree-seal';
import { readLaunchSpec } from '../store/launch-spec';
import { RequestError } from '../store/requests';
import { runLandChecks } from './land-checks';
import { landFollowUp, type LandFollowUp } from './land-follow-up';
import { requireTaskView } from './operations';

/*
 * The landing queue (issue 25): `caesar land <id>...` lands tasks one after another onto the checkout's current
 * HEAD. For each, in order: replay its change three-way onto what the checkout holds now (land-replay.ts, in git's
 * object store), run its checks on the combined result in a scratch worktree, then write it through the apply's
 * transaction (land-apply.ts). The first conflict or failed check stops the queue: the tasks landed before stay
 * landed (applied.json), the stopping one and those after are untouched. Every refusal known up front (a task not
 * finished, already applied, a dirty file it changes…) is found before anything lands.
 */

export type LandStatus =
  /** Written into the checkout and recorded as applied. */
  | 'landed'
  /** Changed nothing: nothing to land. */
  | 'empty'
  /**
   * Its change is already in what the checkout holds with the tasks landed before it (two tasks wrote the same
   * lines): nothing is left to write. Recorded as applied, since its work is in the checkout; the queue goes on.
   */
  | 'already_landed'
  | 'conflict'
  | 'check_failed'
  /** Could not be landed as it is (see reason); nothing of the queue was landed. */
  | 'refused'
  /** The apply transaction did not write it (busy, disk full, the checkout moved under it): see message. */
  | 'failed'
  /** Not attempted: an earlier task stopped the queue, or a refusal stopped it before it began. */
  | 'not_landed';

export type LandRefusal = 'no_worktree' | 'worktree_missing' | 'not_finished' | 'already_applied' | 'repository_changed' | 'too_large' | 'dirty' | 'no_launch' | 'conflict_markers';

export interface LandTaskOutcome {
  task_id: string;
  status: LandStatus;
  reason?: LandRefusal;
  /** Repository-relative paths the task changes. */
  files: string[];
  conflicts?: ReplayConflict[];
  checks?: CheckResult[];
  /** Where the checks' full output is, when they ran. */
  checks_log_dir?: string;
  follow_up?: LandFollowUp;
  message: string;
}

export interface LandOutcome {
  /** The checkout's git toplevel. */
  checkout: string;
  /** HEAD when the land began: every task was replayed onto it plus the ones landed before it. */
  head: string;
  landed: string[];
  /** The task that stopped the queue, if one did. */
  stopped_at?: string;
  tasks: LandTaskOutcome[];
  message: string;
}

export interface LandOptions {
  acceptRepositoryChanges?: boolean;
  /** Ctrl-C: the running check is ended (its whole process group), nothing more lands; a write under way completes. */
  signal?: AbortSignal;
  /** Called as each task goes through a step: for the editor's progress and the CLI's stderr. */
  onProgress?(progress: { task_id: string; index: number; total: number; step: string }): void;
}

interface Candidate {
  state: TaskState;
  launch: LaunchSpec;
  diff: DiffResult;
  files: string[];
}

export async function landTasks(root: string, ids: readonly string[], options: LandOptions = {}): Promise<LandOutcome> {
  if (!ids.length) throw new RequestError('Name at least one task to land.', 'invalid_id');
  const duplicate = ids.find((id, i) => ids.indexOf(id) !== i);
  if (duplicate) throw new RequestError(`Task ${duplicate} is named twice: each task lands once.`, 'invalid_id');
  const states = await Promise.all(ids.map(async (id) => (await requireTaskView(root, id)).state));
  const checkout = await commonCheckout(states);
  const drivers = await repositoryMergeDrivers(checkout);
  if (drivers.length) throw new RequestError(mergeDriverRefusal(drivers), 'finished');
  const head = await gitText(['rev-parse', '--verify', 'HEAD^{commit}'], checkout);
  const prepared = await prepareAll(root, checkout, states, options);
  if ('refusals' in prepared) return refusedOutcome(checkout, head, prepared.refusals, ids);
  return runQueue(root, checkout, head, prepared.candidates, options);
}

/** Every task must belong to one checkout: land writes one working tree. */
async function commonCheckout(states: TaskState[]): Promise<string> {
  const targets = await Promise.all(states.map((s) => (s.worktree ? applyTarget(s) : Promise.resolve(s.workspace))));
  const first = targets[0] as string;
  const other = targets.findIndex((t) => t !== first);
  if (other !== -1) throw new RequestError(`Task ${states[other]?.id} belongs to ${targets[other]}, not ${first}: land the tasks of one checkout at a time.`, 'finished');
  return first;
}

async function prepareAll(root: string, checkout: string, states: TaskState[], options: LandOptions): Promise<{ candidates: Candidate[] } | { refusals: LandTaskOutcome[] }> {
  const dirty = await dirtyFiles(checkout);
  const candidates: Candidate[] = [];
  const refusals: LandTaskOutcome[] = [];
  for (const state of states) {
    const refusal = await refusalOf(root, state, options);
    if (refusal) {
      refusals.push(refusal);
      continue;
    }
    const launch = await readLaunchSpec(root, state.id).catch((error: Error) => error);
    if (launch instanceof Error) {
      refusals.push(refused(state.id, 'no_launch', [], `Task ${state.id}'s launch.json could not be read (${launch.message}), so its checks are unknown.`));
      continue;
    }
    // The task's work as it concluded (worktree-seal.ts), as apply takes it: not what was written into its worktree since.
    const diff = await (await taskDiffSource(root, state)).diff();
    const files = diff.files.flatMap((f) => (f.old_path ? [f.path, f.old_path] : [f.path]));
    const tooLarge = diff.files.filter((f) => f.too_large).map((f) => f.path);
    const touchedDirty = files.filter((f) => dirty.has(f));
    const marked = markedFiles(diff);
    const layouts = options.acceptRepositoryChanges ? [] : await bareRepositoryLayouts(state.worktree as string, diff.files);
    if (layouts.length) refusals.push(refused(state.id, 'repository_changed', files, `Task ${state.id}: ${bareLayoutReasons(layouts).join('; ')}. To land anyway: caesar land ${state.id} --accept-repository-changes`));
    else if (marked.length) refusals.push(refused(state.id, 'conflict_markers', files, `Task ${state.id} adds unresolved conflict markers (<<<<<<< … >>>>>>>) to ${marked.join(', ')}: a follow-up that did not resolve its conflict. Continue it again, or resolve them in its worktree.`));
    else if (tooLarge.length) refusals.push(refused(state.id, 'too_large', files, `Task ${state.id} changes file(s) too large for a patch (${tooLarge.join(', ')}): apply it with caesar apply, which leaves them in the worktree.`));
    else if (touchedDirty.length) refusals.push(refused(state.id, 'dirty', files, `Task ${state.id} changes file(s) you have uncommitted changes in: ${touchedDirty.join(', ')}. Commit or stash them, then land again.`));
    else candidates.push({ state, launch, diff, files });
  }
  return refusals.length ? { refusals } : { candidates };
}

/**
 * The files whose added lines hold both a `<<<<<<< ` and a `>>>>>>> ` marker: a land follow-up starts from a merge
 * with the conflicts marked, and an agent that left them would land them into the user's code.
 */
function markedFiles(diff: DiffResult): string[] {
  const sections = diff.patch.split(/^diff --git /m).slice(1);
  return sections.filter((s) => /^\+<{7} /m.test(s) && /^\+>{7} /m.test(s)).map((s) => /^a\/(.*?) b\//.exec(s)?.[1] ?? s.split('\n', 1)[0]!);
}

/** Why a task cannot be landed at all, before any git work; undefined when it can be tried. */
async function refusalOf(root: string, state: TaskState, options: LandOptions): Promise<LandTaskOutcome | undefined> {
  const id = state.id;
  if (!state.worktree || !state.base_ref) return refused(id, 'no_worktree', [], `Task ${id} did not run in a worktree: its changes are already in the workspace; there is nothing to land.`);
  if (isTaskActive(state)) return refused(id, 'not_finished', [], `Task ${id} is still ${state.status}: land it once it has finished (or cancel it).`);
  const earlier = await readApplied(root, id).catch(() => undefined);
  if (earlier) return refused(id, 'already_applied', earlier.files, `Task ${id} was already applied (${earlier.applied_at}): its changes are in your workspace.`);
  if (!existsSync(state.worktree)) return refused(id, 'worktree_missing', [], `The worktree of task ${id} (${state.worktree}) no longer exists (discarded or collected): there is nothing to land.`);
  const changes = options.acceptRepositoryChanges ? undefined : await unacceptedRepositoryChanges(root, id);
  if (changes) {
    return refused(id, 'repository_changed', [], `Task ${id} left what git could run unchecked or changed (the repository's shared git dir, or planted repositories): ${changes.join('; ')}. Check these (a planted hook or config runs in your own git commands); to land anyway: caesar land ${id} --accept-repository-changes`);
  }
  return undefined;
}

function refused(task_id: string, reason: LandRefusal, files: string[], message: string): LandTaskOutcome {
  return { task_id, status: 'refused', reason, files, message };
}

function refusedOutcome(checkout: string, head: string, refusals: LandTaskOutcome[], ids: readonly string[]): LandOutcome {
  const byId = new Map(refusals.map((r) => [r.task_id, r]));
  const tasks = ids.map((id) => byId.get(id) ?? { task_id: id, status: 'not_landed' as const, files: [], message: 'Not landed: another task of the queue was refused.' });
  const names = refusals.map((r) => r.task_id).join(', ');
  return { checkout, head, landed: [], stopped_at: refusals[0]?.task_id, tasks, message: `Nothing was landed: ${names} cannot be landed as it is.\n${refusals.map((r) => `  ${r.message}`).join('\n')}` };
}

async function runQueue(root: string, checkout: string, head: string, candidates: Candidate[], options: LandOptions): Promise<LandOutcome> {
  const outcomes: LandTaskOutcome[] = [];
  let onto = await gitText(['rev-parse', `${head}^{tree}`], checkout);
  for (const [index, candidate] of candidates.entries()) {
    const progress = (step: string) => options.onProgress?.({ task_id: candidate.state.id, index, total: candidates.length, step });
    const landed = options.signal?.aborted
      ? { outcome: { task_id: candidate.state.id, status: 'failed' as const, files: candidate.files, message: 'stopped before it was landed: interrupted.' } }
      : await landOne(root, checkout, head, onto, candidate, progress, options.signal);
    outcomes.push(landed.outcome);
    if (!landed.tree) {
      for (const rest of candidates.slice(index + 1)) outcomes.push({ task_id: rest.state.id, status: 'not_landed', files: rest.files, message: `Not landed: the queue stopped at ${candidate.state.id}.` });
      break;
    }
    onto = landed.tree;
  }
  const landedIds = outcomes.filter((o) => QUEUE_GOES_ON.includes(o.status)).map((o) => o.task_id);
  const stop = outcomes.find((o) => !QUEUE_GOES_ON.includes(o.status) && o.status !== 'not_landed');
  const contained = outcomes.filter((o) => o.status === 'already_landed').length;
  const alsoContained = contained ? ` (${plural(contained, 'of them was', 'of them were')} already in the checkout)` : '';
  const message = stop
    ? `Landed ${landedIds.length} of ${plural(candidates.length, 'task')}${alsoContained}; stopped at ${stop.task_id}: ${stop.message}`
    : `Landed ${plural(landedIds.length, 'task')}${alsoContained} onto ${head.slice(0, 12)} in ${checkout}.`;
  return { checkout, head, landed: landedIds, ...(stop ? { stopped_at: stop.task_id } : {}), tasks: outcomes, message };
}

/** The outcomes after which the next task of the queue is landed. */
const QUEUE_GOES_ON: readonly LandStatus[] = ['landed', 'empty', 'already_landed'];

/** One task: replay, check, write. `tree` is what the checkout holds afterwards, absent when the queue stops here. */
async function landOne(
  root: string,
  checkout: string,
  head: string,
  onto: string,
  candidate: Candidate,
  progress: (step: string) => void,
  signal: AbortSignal | undefined,
): Promise<{ outcome: LandTaskOutcome; tree?: string }> {
  const { state, launch, diff, files } = candidate;
  const id = state.id;
  if (diff.is_empty) return { outcome: { task_id: id, status: 'empty', files: [], message: `Task ${id} changed nothing: nothing to land.` }, tree: onto };
  progress('replaying');
  const taskTree = await taskResultTree(checkout, state.base_ref as string, diff.patch_bytes);
  const replay = await replayOnto(checkout, { baseRef: state.base_ref as string, ontoTree: onto, taskTree });
  if (!replay.conflicts.length && replay.tree === onto) return alreadyLanded(root, checkout, onto, candidate, head);
  if (replay.conflicts.length) {
    const follow_up = await landFollowUp({ checkout, head, onto, mergedTree: replay.tree, taskId: id, conflicts: replay.conflicts });
    return { outcome: { task_id: id, status: 'conflict', files, conflicts: replay.conflicts, follow_up, message: `conflicts in ${describeConflicts(replay.conflicts)}. Nothing of it was applied.` } };
  }
  let checks: CheckResult[] = [];
  const logDir = path.join(taskPaths(root, id).dir, 'land');
  if (launch.checks.length) {
    progress('checking');
    checks = await checkCombined(root, checkout, { head, onto, merged: replay.tree }, launch, logDir, progress, signal);
    const failed = checks.filter((c) => !checkPassed(c));
    if (failed.length) {
      const why = failed.map((c) => `"${c.name}" ${c.error ?? `exit code ${c.exit_code}`}`).join(', ');
      return { outcome: { task_id: id, status: 'check_failed', files, checks, checks_log_dir: path.join(logDir, 'checks'), message: `${plural(failed.length, 'check')} failed on the combined result: ${why}. Nothing of it was applied.` } };
    }
  }
  progress('applying');
  const landing = await treeDiff(checkout, onto, replay.tree);
  const record = { applied_at: new Date().toISOString(), patch_digest: diff.patch_digest, files: diff.files.map((f) => f.path), by: 'land' as const };
  const applied = await applyLandingPatch({ root, state, checkout, patch: landing.patch, files: landing.files, record });
  const withChecks = checks.length ? { checks, checks_log_dir: path.join(logDir, 'checks') } : {};
  if (!applied.applied) return { outcome: { task_id: id, status: 'failed', files, ...withChecks, message: applied.message } };
  const passed = checks.length ? `, ${plural(checks.length, 'check')} passed on the combined result` : '';
  return { outcome: { task_id: id, status: 'landed', files, ...withChecks, message: `Landed ${plural(landing.files.length, 'file')}${passed}.${applied.recovered ? ` ${applied.recovered.message}` : ''}` }, tree: replay.tree };
}

/**
 * The merge of the task onto what the checkout holds changed nothing: its change is already there, written by a task
 * landed before it in this queue or by a commit since its base. That is the truth to tell (never "the checkout
 * changed"), and since its work is in the checkout it is recorded as applied, under the apply lock.
 */
async function alreadyLanded(root: string, checkout: string, onto: string, candidate: Candidate, head: string): Promise<{ outcome: LandTaskOutcome; tree: string }> {
  const { state, diff, files } = candidate;
  const where = onto === (await gitText(['rev-parse', `${head}^{tree}`], checkout)) ? "in your checkout's HEAD already" : 'in what the tasks before it in this queue landed';
  const record = { applied_at: new Date().toISOString(), patch_digest: diff.patch_digest, files: diff.files.map((f) => f.path), by: 'land' as const };
  const recorded = await recordContainedLanding({ root, state, checkout, record });
  const note = recorded.recorded ? ' Recorded as applied.' : ` It could not be recorded as applied: ${recorded.message}`;
  const message = `Already landed: every change it makes (${plural(record.files.length, 'file')}) is ${where}; nothing was left to write.${note}`;
  return { outcome: { task_id: state.id, status: 'already_landed', files, message }, tree: onto };
}

async function checkCombined(
  root: string,
  checkout: string,
  trees: { head: string; onto: string; merged: string },
  launch: LaunchSpec,
  logDir: string,
  progress: (step: string) => void,
  signal: AbortSignal | undefined,
): Promise<CheckResult[]> {
  const { head, onto, merged } = trees;
  const base = onto === (await gitText(['rev-parse', `${head}^{tree}`], checkout)) ? head : await throwawayCommit(checkout, onto, head, 'caesar land: landed so far');
  const commit = await throwawayCommit(checkout, merged, base, `caesar land: ${launch.id} on the combined result`);
  const scratch = await scratchWorktree(checkout, path.join(stateDir(checkout), 'land', `wt-${launch.id}`), commit);
  try {
    return await runLandChecks({ root, checkout, scratch: scratch.path, launch, logDir, onCheck: progress, ...(signal ? { signal } : {}) });
  } finally {
    await scratch.remove();
  }
}

export function describeConflicts(conflicts: readonly ReplayConflict[]): string {
  return conflicts.map((c) => `${c.path}${c.hunks.length ? ` (lines ${c.hunks.map((h) => `${h.start}-${h.end}`).join(', ')})` : c.messages[0] ? ` (${c.messages[0]})` : ''}`).join('; ');
}

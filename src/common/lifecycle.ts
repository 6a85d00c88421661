import type { AppliedDoc, DiscardedDoc, Isolation, ObservedStatus, ResultDoc } from '../protocol';

/*
 * Where a task is in its life, and what can be done with it next: computed here, once, from the task's records, and
 * read by every surface (the Tasks tree's context values and buttons, the diff editors' title bars, the timeline's
 * header and next steps, the notifications, the status bar, the walkthrough, the CLI's "next:" lines and the MCP
 * tools' hints), so that no surface offers what the records no longer allow (Apply after Apply or after Discard).
 * Browser-safe and pure: the timeline webview reads the same words.
 */

/** The records the lifecycle reads: what engine/tasks' TaskSummary holds (a TaskSummary is one). */
export interface LifecycleRecords {
  /** The status to show: the recorded one, or lost / queued / unverified as the store observed it. */
  observed: ObservedStatus;
  state: { isolation: Isolation | 'auto'; worktree?: string | undefined; phase?: string | undefined };
  pendingQuestions: readonly unknown[];
  result?: Pick<ResultDoc, 'diff'> | undefined;
  /** applied.json: written by apply and land (a landed task is an applied one). */
  applied?: Pick<AppliedDoc, 'files' | 'by'> | undefined;
  discarded?: Pick<DiscardedDoc, 'by' | 'reason'> | undefined;
}

export type LifecyclePhase =
  /** Delegated; its supervisor prepares it or waits for a slot. */
  | 'starting'
  /** Held by a job system (Slurm) whose job has not started. */
  | 'queued'
  | 'running'
  /** Running, and blocked on a question to the user. */
  | 'waiting'
  /** Finished with changes in its worktree nobody has applied or discarded yet. */
  | 'review'
  /** Some of its files were applied; the rest are still in its worktree. */
  | 'partly_applied'
  /** Its changes are in the workspace (applied, or landed). */
  | 'applied'
  /** Its worktree and the changes in it were thrown away. */
  | 'discarded'
  /** It ran in place: whatever it changed is in the workspace already. */
  | 'in_workspace'
  /** Finished (whatever its run's status) without a change to review. */
  | 'no_change'
  /** Its worktree is gone without anyone's decision (collected as holding nothing to apply). */
  | 'closed'
  /** Its supervisor died without concluding. */
  | 'lost'
  /** Its state.json is not Caesar's: what it says is nobody's word. */
  | 'unverified';

export interface Lifecycle {
  phase: LifecyclePhase;
  /** How a person reads it: "waiting for an answer", "succeeded · changes to review", "applied". */
  label: string;
  /** The run's own status (a failed run may still leave changes to review). */
  run: ObservedStatus;
  /** Active: its supervisor still runs it (or will). */
  active: boolean;
  /** What the user did with the work, as `caesar ps` says it. */
  decision?: 'applied' | 'discarded';
  /** The task's worktree is there to read, review, apply from or discard. */
  worktree: boolean;
  /** Changed files git found (0 when none, or not known). */
  changedFiles: number;
  /** Files applied (a partial apply names fewer than changedFiles). */
  appliedFiles: number;
}

const ACTIVE: readonly ObservedStatus[] = ['pending', 'running', 'queued'];

/** What the user did with a finished task's work. Applied wins (discarding after applying is the usual clean-up); a worktree gc removed as holding nothing is no decision of the user's. */
export function workDecision(records: Pick<LifecycleRecords, 'applied' | 'discarded'>): 'applied' | 'discarded' | undefined {
  if (records.applied) return 'applied';
  if (records.discarded && (records.discarded.by === 'discard' || records.discarded.reason === 'modified')) return 'discarded';
  return undefined;
}

/** The task's lifecycle, from its records. */
export function taskLifecycle(records: LifecycleRecords): Lifecycle {
  const run = records.observed;
  const active = ACTIVE.includes(run);
  const decision = workDecision(records);
  const worktree = !!records.state.worktree && !records.discarded;
  const diff = records.result?.diff;
  const changedFiles = diff && !diff.is_empty ? (diff.files_total ?? diff.files.length) : 0;
  const appliedFiles = records.applied?.files.length ?? 0;
  const phase = phaseOf(records, { active, decision, worktree, changedFiles, appliedFiles });
  return { phase, label: labelOf(phase, records, changedFiles, appliedFiles), run, active, ...(decision ? { decision } : {}), worktree, changedFiles, appliedFiles };
}

function phaseOf(records: LifecycleRecords, facts: Pick<Lifecycle, 'active' | 'decision' | 'worktree' | 'changedFiles' | 'appliedFiles'>): LifecyclePhase {
  const run = records.observed;
  if (run === 'unverified') return 'unverified';
  if (facts.active) {
    if (records.pendingQuestions.length) return 'waiting';
    return run === 'pending' ? 'starting' : run === 'queued' ? 'queued' : 'running';
  }
  if (facts.decision === 'applied') return facts.worktree && facts.appliedFiles < facts.changedFiles ? 'partly_applied' : 'applied';
  if (facts.decision === 'discarded') return 'discarded';
  if (run === 'lost') return 'lost';
  if (records.state.isolation === 'inplace' && !records.state.worktree) return facts.changedFiles ? 'in_workspace' : 'no_change';
  if (!facts.changedFiles) return 'no_change';
  return facts.worktree ? 'review' : 'closed';
}

function labelOf(phase: LifecyclePhase, records: LifecycleRecords, changedFiles: number, appliedFiles: number): string {
  const run = records.observed.replace('_', ' ');
  switch (phase) {
    case 'starting':
      return records.state.phase ?? 'starting';
    case 'waiting':
      return 'waiting for an answer';
    case 'review':
      return `${run} · changes to review`;
    case 'partly_applied':
      return `applied ${appliedFiles} of ${changedFiles} files`;
    case 'in_workspace':
      return `${run} · changed your workspace`;
    case 'no_change':
      return `${run} · no change`;
    case 'closed':
      return `${run} · worktree removed`;
    case 'lost':
      return 'lost: its supervisor died';
    case 'unverified':
      return 'unverified: its records are not Caesar’s';
    case 'applied':
      // Landed and applied allow the same next steps; a person still reads which one put the change there.
      return records.applied?.by === 'land' ? 'landed' : 'applied';
    default:
      return phase;
  }
}

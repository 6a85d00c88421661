/**
 * tasks/ — the engine's door: its use cases (delegate, continue, the agents' statuses, diff, apply, discard, answer,
 * cancel, gc) and what the front ends read through them. The CLI, the MCP servers and the extension import the engine
 * from here and nothing below it (the layering guard checks it), so none of them needs to import another front end or
 * assemble a use case itself. Being a task's supervisor has its own door beside this one (supervise.ts).
 */
export { delegateTask, type DelegateTaskOptions, type DelegateTaskRequest, type DelegatedTask } from './delegate-task';
export { holdsUnappliedWork, removeTask, type RemoveTaskOutcome } from './remove-task';
export {
  ReviewCommentsFileSchema,
  continueTask,
  continuationContext,
  formatReviewComments,
  readReviewComments,
  reviewCommentsPath,
  snapshotWorktree,
  type ContinueTaskOptions,
  type ContinuedTask,
  type ReviewComment,
  type ReviewCommentsFile,
} from './continue-task';
export {
  agentCatalogue,
  agentStatuses,
  describeCapabilities,
  listRoles,
  pickForRole,
  type AgentStatus,
  type CatalogueOptions,
  type RoleStatus,
} from './agents';
export {
  applyTaskById,
  diffTask,
  readEventPage,
  readRawLogPage,
  requireTaskView,
  resolveTaskIdPrefix,
  type EventPage,
  type RawLogPage,
  type TaskDiff,
} from './operations';
export { DelegationRefusedError, type DelegationRequest, type LaunchDraft } from '../resolve/resolve';
export { VERSION_TIMEOUT_MS, findProgram, type AgentCatalogue } from '../resolve/agent-catalogue';
export {
  ForeignTaskError,
  TaskStore,
  isActive,
  observedStatus,
  reviewOutcome,
  sortForDisplay,
  type ReviewOutcome,
  type TaskSummary,
  type TaskView,
} from '../store/store';
export { DEFAULT_MAX_PARALLEL } from '../store/launch-spec';
export { distinctPrefixLength } from '../store/task-id-prefix';
export { rankTasks } from './compare-tasks';
export { readJsonFile } from '../store/atomic';
export { tailLines } from '../store/tail';
export { bindingOf, bindingOfTaskFile, type RecordBinding } from '../store/record-seal';
export { UnsealedEventError, readSealedEventLine } from '../store/sealed-events';
export { SeqGaps } from '../store/record-order';
export { RequestError, answerQuestion, pendingQuestions, requestCancel, unknownQuestionMessage, type CancelOutcome } from '../store/requests';
export { applyTask, discardTask, unacceptedRepositoryChanges, type ApplyOutcome, type DiscardOutcome } from '../git/apply';
export { findApplyLeftovers, recoverInterruptedApply } from '../git/apply-recovery';
export { worktreeDiff, type FileChange } from '../git/reconcile';
export { gitToplevel } from '../git/git';
export { detectWorkshop } from '../git/workshop';
export { changedSinceBase, type Overlap } from '../git/changed-since-base';
export { LIVE_REFRESH_MS, OverlapTracker, overlapCandidates, type OverlapPrediction, type TaskOverlap } from '../git/overlap';
export { RecordRefused, checkWorkspace, readBaseVersion, taskVersionPath } from '../git/record-checks';
export { concludeLostTasks, type ConcludedTask } from '../run/conclude';
export { lastLogLines } from '../run/report';
export { readAnswerForRelay } from '../run/answer-read';
export { collectGarbage, type GcEntry, type GcResult } from './gc';
export { slurmHealth, type SlurmHealth } from '../cluster/slurm';
export { effectiveSandboxMode, locateSocat, sandboxPreflight } from '../sandbox/sandbox';
export { offReason, sandboxModeDecision } from '../sandbox/mode';
export { describeConflicts, landTasks, type LandOptions, type LandOutcome, type LandStatus, type LandTaskOutcome } from './land';
export { shellCommand, type LandFollowUp } from './land-follow-up';

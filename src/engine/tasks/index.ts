/**
 * The engine's use cases, one API for every front end: the CLI, the MCP server and the extension call these and
 * nothing below them, so none of them needs to import another front end or assemble a use case itself.
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
  type EventPage,
  type RawLogPage,
  type TaskDiff,
} from './operations';
export { DelegationRefusedError, type DelegationRequest, type LaunchDraft } from '../resolve';
export { TaskStore, isActive, observedStatus, type TaskSummary, type TaskView } from '../store';
export { RequestError, answerQuestion, pendingQuestions, requestCancel, type CancelOutcome } from '../requests';
export { applyTask, discardTask, type ApplyOutcome, type DiscardOutcome } from '../apply';
export { collectGarbage, type GcResult } from '../gc';
export { concludeLostTasks } from '../conclude';
export type { AgentCatalogue } from '../agent-catalogue';

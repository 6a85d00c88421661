import { existsSync } from 'node:fs';
import * as path from 'node:path';
import { z } from '../../protocol/zod';
import { isSafeId, taskPaths, tasksDir } from '../../protocol';
import { readJsonFile } from '../store/atomic';
import { checkObjectId, checkWorkspace, checkWorktree, rootRepository } from '../git/record-checks';
import { excludePathspec, gitText, runGit, withTempIndex } from '../git/git';
import { RequestError } from '../store/requests';
import { DelegationRefusedError } from '../resolve/resolve';
import { isActive, type TaskView } from '../store/store';
import { delegateTask, type DelegateTaskOptions, type DelegatedTask } from './delegate-task';
import { requireTaskView } from './operations';

/** A reviewer's comment on one line of a task's result (1-based line of the task's version of the file). */
export interface ReviewComment {
  /** Repository-relative, '/'-separated. */
  file: string;
  line: number;
  text: string;
}

/**
 * `<taskDir>/review-comments.json`: the comments a reviewer left on the task's diff in the editor. Written by the
 * editor only (whole file, atomically); read by it after a reload and by `caesar continue`. Validated like any record.
 */
export const ReviewCommentsFileSchema = z.object({
  version: z.literal(1),
  comments: z
    .array(
      z.object({
        id: z.string().max(100),
        file: z.string().min(1).max(4096),
        line: z.number().int().positive(),
        text: z.string().max(100_000),
        created_at: z.string().optional(),
        /** The follow-up task the comment was sent to: sent comments are kept as history, never sent again. */
        sent_in: z.string().optional(),
      }),
    )
    .max(10_000),
});
export type ReviewCommentsFile = z.infer<typeof ReviewCommentsFileSchema>;

export function reviewCommentsPath(root: string, taskId: string): string {
  return path.join(taskPaths(root, taskId).dir, 'review-comments.json');
}

/** The review comments stored for a task (none when there is no file); a malformed file is an error naming it. */
export async function readReviewComments(root: string, taskId: string): Promise<ReviewCommentsFile['comments']> {
  if (!isSafeId(taskId)) throw new RequestError(`Invalid task id ${JSON.stringify(taskId)}.`, 'invalid_id');
  const file = await readJsonFile(reviewCommentsPath(root, taskId), ReviewCommentsFileSchema, 4 * 1024 * 1024, { within: tasksDir(root) });
  return file?.comments ?? [];
}

export interface ContinueTaskOptions extends DelegateTaskOptions {
  /** Review comments left on the task's diff: sent to the agent as context, with the original objective. */
  comments?: ReviewComment[];
  /**
   * Start from this commit instead of a snapshot of the task's worktree: land's follow-up (land-follow-up.ts), the
   * task's change merged onto the new HEAD with the conflicts marked. Its first parent becomes the base.
   */
  baseCommit?: string;
}

export interface ContinuedTask extends DelegatedTask {
  /** The task continued (also the new task's parent_task_id). */
  continued_from: string;
  /** The snapshot of the continued task's worktree the new worktree starts from; absent for an in-place task. */
  base_commit?: string;
}

/** The objective when the user gave only line comments. */
const COMMENTS_ONLY_OBJECTIVE = 'Address the review comments on your previous work (listed in the context).';

/**
 * "Continue with Feedback": a new task on the same agent, with the same settings, that starts from where a finished
 * task left off. A worktree task's worktree is snapshotted into a commit object (its own temporary index: the user's
 * refs, index and the old worktree's index are untouched) whose parent is the old base_ref; the new task's worktree
 * is checked out at that commit while its base_ref stays the old one, so its diff — and Apply — holds the old changes
 * plus the new. An in-place task's changes are already in the workspace, so its follow-up simply runs there again.
 * The feedback is the objective; the old objective, its context and the review comments are the context; the old
 * task is the new one's parent (the tree nests it).
 */
export async function continueTask(root: string, taskId: string, feedback: string, options: ContinueTaskOptions = {}): Promise<ContinuedTask> {
  const comments = options.comments ?? [];
  if (!feedback.trim() && comments.length === 0) throw new DelegationRefusedError('usage', 'Say what to change: the feedback is empty and there are no review comments.');
  const view = await requireTaskView(root, taskId);
  if (isActive(view.observed)) {
    throw new RequestError(`Task ${taskId} is still ${view.observed}: continue it once it has finished (or cancel it first).`, 'finished');
  }
  const { state, task } = view;
  const workspace = await checkWorkspace(root, state.workspace);
  const baseCommit = options.baseCommit ? await checkedBaseCommit(root, view, options.baseCommit) : state.worktree ? await snapshotTaskWorktree(root, view) : undefined;
  const { comments: _comments, baseCommit: _baseCommit, ...delegateOptions } = options;
  const delegated = await delegateTask(
    root,
    {
      objective: feedback.trim() || COMMENTS_ONLY_OBJECTIVE,
      workspace,
      agent: state.agent,
      mode: state.mode,
      // A snapshot exists only as a commit: the follow-up must run in a worktree checked out at it.
      isolation: baseCommit ? 'worktree' : state.isolation,
      network: state.network ? 'auto' : 'off',
      timeout: state.timeout_ms,
      ...(state.model ? { model: state.model } : {}),
      context: continuationContext(view, comments),
      ...(task?.constraints.length ? { constraints: task.constraints } : {}),
      ...(task?.acceptance_criteria.length ? { acceptance_criteria: task.acceptance_criteria } : {}),
    },
    { ...delegateOptions, launch: { parent_task_id: taskId, ...(baseCommit ? { base_commit: baseCommit } : {}) } },
  );
  return { ...delegated, continued_from: taskId, ...(baseCommit ? { base_commit: baseCommit } : {}) };
}

/** The finished task's worktree (checked as a record: under this root's .caesar/wt/, registered with git) as a commit. */
async function snapshotTaskWorktree(root: string, view: TaskView): Promise<string> {
  const { state } = view;
  if (view.discarded || !existsSync(state.worktree!)) {
    throw new RequestError(`The worktree of task ${view.id} no longer exists (discarded or collected by gc): there is nothing to continue from. Re-run the task instead.`, 'finished');
  }
  const repo = await rootRepository(root);
  if (!repo) throw new RequestError(`${root} is not inside a git repository: task ${view.id}'s worktree cannot be snapshotted.`, 'finished');
  const worktree = await checkWorktree(repo, state.worktree);
  const baseRef = checkObjectId(state.base_ref);
  return snapshotWorktree(worktree, baseRef, state.excluded_paths, `caesar: snapshot of task ${view.id} (continued with feedback)`);
}

/** A commit given to start from (`--base-commit`): a commit of this root's repository with a parent, for a worktree task. */
async function checkedBaseCommit(root: string, view: TaskView, commit: string): Promise<string> {
  if (!view.state.worktree) throw new RequestError(`Task ${view.id} ran in place: a follow-up of it cannot start from another commit.`, 'finished');
  const repo = await rootRepository(root);
  if (!repo) throw new RequestError(`${root} is not inside a git repository.`, 'finished');
  if (!/^[0-9a-f]{40,64}$/.test(commit)) throw new RequestError(`--base-commit ${JSON.stringify(commit)} is not a full hex commit id.`, 'invalid_id');
  const kind = await runGit(['cat-file', '-t', commit], { cwd: repo.gitRoot, okCodes: [0, 1, 128] });
  const parent = await runGit(['rev-parse', '--verify', '--quiet', `${commit}^1`], { cwd: repo.gitRoot, okCodes: [0, 1, 128] });
  if (kind.stdout.toString().trim() !== 'commit' || parent.code !== 0) throw new RequestError(`${commit} is not a commit with a parent in ${repo.gitRoot}: nothing to start the follow-up from.`, 'finished');
  return commit;
}

/** Who the snapshot commit is by: fixed, so a machine without a git identity can snapshot too. */
const SNAPSHOT_IDENTITY = {
  GIT_AUTHOR_NAME: 'Caesar',
  GIT_AUTHOR_EMAIL: 'caesar@localhost',
  GIT_COMMITTER_NAME: 'Caesar',
  GIT_COMMITTER_EMAIL: 'caesar@localhost',
};

/**
 * Every file of the work tree (tracked, modified, new and not ignored; `excluded` paths left out) as a commit object
 * whose parent is `parent`. Built in a private copy of the index (`git add -A`, `write-tree`, `commit-tree`): no ref
 * moves and no real index is written, so neither the user's checkout nor the worktree notices anything.
 */
export async function snapshotWorktree(worktree: string, parent: string, excluded: readonly string[], message: string): Promise<string> {
  return withTempIndex(worktree, async (env) => {
    await runGit(['add', '-A', '--', ':(top)', ...excluded.map(excludePathspec)], { cwd: worktree, env });
    const tree = await gitText(['write-tree'], worktree, env);
    return gitText(['commit-tree', tree, '-p', parent, '-m', message], worktree, { ...env, ...SNAPSHOT_IDENTITY });
  });
}

/** What the agent is told besides the feedback: what it did before (objective and context) and the line comments. */
export function continuationContext(view: Pick<TaskView, 'id' | 'state' | 'task'>, comments: readonly ReviewComment[]): string {
  const parts = [
    `This task continues task ${view.id}. Its work is already in your working directory; build on it.`,
    `The objective of task ${view.id} was:\n${view.state.objective}`,
  ];
  if (view.task?.context.trim()) parts.push(`The context of task ${view.id} was:\n${view.task.context}`);
  if (comments.length) parts.push(`Review comments on that work (file:line: comment):\n${formatReviewComments(comments)}`);
  return parts.join('\n\n---\n\n');
}

/** One comment a line: `src/a.ts:12: rename this`; a multi-line comment is indented under its line. */
export function formatReviewComments(comments: readonly ReviewComment[]): string {
  return [...comments]
    .sort((a, b) => a.file.localeCompare(b.file) || a.line - b.line)
    .map((c) => `- ${c.file}:${c.line}: ${c.text.trim().split(/\r?\n/).join('\n  ')}`)
    .join('\n');
}

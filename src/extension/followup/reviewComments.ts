import { randomUUID } from 'node:crypto';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { writeJsonAtomic } from '../../base/atomic';
import { readReviewComments, reviewCommentsPath, type ReviewComment, type ReviewCommentsFile } from '../../engine/tasks';
import { taskOfWorktreeFile } from '../review/target';
import type { LiveTasks } from '../tasks/liveTasks';

type StoredComment = ReviewCommentsFile['comments'][number];

export const REVIEW_CONTROLLER_ID = 'caesar.review';

/** One comment shown in the editor, tied to the stored record it displays. */
class ReviewNote implements vscode.Comment {
  readonly mode = vscode.CommentMode.Preview;
  readonly author = { name: 'You' };
  readonly contextValue = 'caesar.reviewComment';
  body: string;
  label?: string;

  constructor(
    readonly taskId: string,
    readonly stored: StoredComment,
    readonly thread: vscode.CommentThread,
  ) {
    this.body = stored.text; // plain text: a comment is the user's words, never rendered as markdown
    this.label = stored.sent_in ? `sent to ${stored.sent_in}` : undefined;
  }
}

/**
 * Review comments on the lines of a task's result (the right side of its diff: the files in its worktree), through
 * VS Code's Comments API. They are kept in `<taskDir>/review-comments.json` (written here only, whole and atomically)
 * so a reload loses nothing, and "Continue with Feedback" sends the ones not sent yet to the agent as context.
 */
export class ReviewComments implements vscode.Disposable {
  private readonly controller: vscode.CommentController;
  private readonly byTask = new Map<string, StoredComment[]>();
  /** Every thread shown, with the task, file and line it is about (`<task>\0<file>\0<line>`). */
  private readonly threads = new Map<vscode.CommentThread, string>();
  private readonly disposables: vscode.Disposable[] = [];
  /** Resolves once the comments stored by earlier sessions are shown. */
  readonly loaded: Promise<void>;

  constructor(
    private readonly tasks: LiveTasks,
    private readonly log: vscode.LogOutputChannel,
  ) {
    this.controller = vscode.comments.createCommentController(REVIEW_CONTROLLER_ID, 'Caesar Review');
    this.controller.options = { prompt: 'Comment for the agent (sent with Continue with Feedback…)', placeHolder: 'What should the agent change here?' };
    this.controller.commentingRangeProvider = {
      provideCommentingRanges: (document) => (this.fileOf(document.uri) ? [new vscode.Range(0, 0, Math.max(0, document.lineCount - 1), 0)] : undefined),
    };
    this.disposables.push(this.controller);
    this.loaded = this.loadAll().catch((err: Error) => this.log.warn(`loading review comments: ${err.message}`));
  }

  /** The task and repository-relative file of a worktree file, when it belongs to a task whose worktree is kept. */
  fileOf(uri: vscode.Uri): { taskId: string; file: string } | undefined {
    if (uri.scheme !== 'file') return undefined;
    const found = taskOfWorktreeFile(this.tasks.list(), uri.fsPath);
    if (!found || found.summary.discarded) return undefined;
    return { taskId: found.summary.id, file: found.file };
  }

  /** Adds a comment on `line` (1-based) of a task's file; `thread` is the editor's thread when the user typed it there. */
  async add(uri: vscode.Uri, line: number, text: string, thread?: vscode.CommentThread): Promise<StoredComment> {
    const owner = this.fileOf(uri);
    if (!owner) throw new Error(`${uri.fsPath} is not a file of a Caesar task's worktree: comment on the right side of a task's diff.`);
    if (!text.trim()) throw new Error('The comment is empty.');
    const stored: StoredComment = { id: randomUUID(), file: owner.file, line, text, created_at: new Date().toISOString() };
    const comments = await this.commentsOf(owner.taskId);
    comments.push(stored);
    await this.save(owner.taskId);
    this.show(owner.taskId, stored, uri, thread);
    return stored;
  }

  /** Removes a comment (the trash button on it). */
  async remove(note: vscode.Comment): Promise<void> {
    if (!(note instanceof ReviewNote)) return;
    const comments = await this.commentsOf(note.taskId);
    const at = comments.findIndex((c) => c.id === note.stored.id);
    if (at >= 0) comments.splice(at, 1);
    await this.save(note.taskId);
    note.thread.comments = note.thread.comments.filter((c) => c !== note);
    if (note.thread.comments.length === 0) this.dropThread(note.thread);
  }

  /** The comments of a task not sent to an agent yet, as the engine takes them. */
  async unsent(taskId: string): Promise<ReviewComment[]> {
    return (await this.commentsOf(taskId)).filter((c) => !c.sent_in).map(({ file, line, text }) => ({ file, line, text }));
  }

  /** Records that the unsent comments of `taskId` went to task `sentIn`: kept as history, labelled, never sent again. */
  async markSent(taskId: string, sentIn: string): Promise<void> {
    const comments = await this.commentsOf(taskId);
    for (const c of comments) c.sent_in ??= sentIn;
    await this.save(taskId);
    for (const [thread, key] of this.threads) {
      if (!key.startsWith(`${taskId}\0`)) continue;
      thread.comments = thread.comments.map((c) => (c instanceof ReviewNote ? new ReviewNote(c.taskId, c.stored, thread) : c));
      this.labelThread(thread);
    }
  }

  private async commentsOf(taskId: string): Promise<StoredComment[]> {
    let comments = this.byTask.get(taskId);
    if (!comments) {
      comments = [...(await readReviewComments(this.tasks.rootOf(taskId), taskId).catch((err: Error) => {
        this.log.warn(`review comments of ${taskId} unreadable, starting afresh: ${err.message}`);
        return [];
      }))];
      this.byTask.set(taskId, comments);
    }
    return comments;
  }

  private async save(taskId: string): Promise<void> {
    const file: ReviewCommentsFile = { version: 1, comments: this.byTask.get(taskId) ?? [] };
    await writeJsonAtomic(reviewCommentsPath(this.tasks.rootOf(taskId), taskId), file);
  }

  private async loadAll(): Promise<void> {
    await this.tasks.ready();
    for (const summary of this.tasks.list()) {
      const worktree = summary.state.worktree;
      if (!worktree || summary.discarded) continue;
      for (const stored of await this.commentsOf(summary.id)) {
        this.show(summary.id, stored, vscode.Uri.file(path.join(worktree, ...stored.file.split('/'))));
      }
    }
  }

  /** Puts a stored comment in its thread (one thread per file and line), creating the thread when needed. */
  private show(taskId: string, stored: StoredComment, uri: vscode.Uri, typedIn?: vscode.CommentThread): void {
    const key = `${taskId}\0${stored.file}\0${stored.line}`;
    let thread = typedIn ?? [...this.threads].find(([, k]) => k === key)?.[0];
    if (!thread) {
      const line = Math.max(0, stored.line - 1);
      thread = this.controller.createCommentThread(uri, new vscode.Range(line, 0, line, 0), []);
    }
    this.threads.set(thread, key);
    thread.canReply = true;
    thread.contextValue = 'caesar.reviewThread';
    thread.comments = [...thread.comments, new ReviewNote(taskId, stored, thread)];
    this.labelThread(thread);
  }

  private labelThread(thread: vscode.CommentThread): void {
    const notes = thread.comments.filter((c): c is ReviewNote => c instanceof ReviewNote);
    const sent = notes.length > 0 && notes.every((n) => n.stored.sent_in);
    thread.label = sent ? `Sent to ${notes[notes.length - 1]!.stored.sent_in}` : 'For the agent: sent with Continue with Feedback…';
    thread.state = sent ? vscode.CommentThreadState.Resolved : vscode.CommentThreadState.Unresolved;
  }

  private dropThread(thread: vscode.CommentThread): void {
    this.threads.delete(thread);
    thread.dispose();
  }

  /** The number of comment threads shown (tests). */
  get threadCount(): number {
    return this.threads.size;
  }

  dispose(): void {
    for (const thread of this.threads.keys()) thread.dispose();
    this.threads.clear();
    for (const d of this.disposables) d.dispose();
  }
}

/** The line (1-based) a reply was typed on. */
export function replyLine(thread: vscode.CommentThread): number {
  return (thread.range?.start.line ?? 0) + 1;
}

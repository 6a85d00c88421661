import { promises as fs, watch, type FSWatcher } from 'node:fs';
import * as path from 'node:path';
import { ProgressFileSchema, QuestionFileSchema, isSafeId, type TaskPaths } from '../../protocol';
import { readJsonFile } from '../store/atomic';
import { writeJsonAtomic } from '../../base/atomic';
import { claimQuestion } from '../../base/question-claim';
import type { EventsWriter } from './events-writer';
import { closeQuestions } from '../store/questions-closed';
import { readAnswerForRelay } from './answer-read';

/**
 * The supervisor's side of the return channel's mailbox: questions/<id>.json (written by the asking agent or the
 * channel server) become `question` events, answers/<id>.json (written by whoever answers first, any process) become
 * `answer` events — once each, whatever the number of watcher notifications. The supervisor thereby stays the only
 * writer of events.jsonl (DESIGN.md principle 2) while anyone can ask or answer through plain files.
 */
export class QuestionsRelay {
  private readonly asked = new Set<string>();
  private readonly answered = new Set<string>();
  private readonly expired = new Set<string>();
  /** progress/<name>.json already relayed (the return channel's `report_progress`). */
  private readonly progressed = new Set<string>();
  private readonly watchers: FSWatcher[] = [];
  private readonly answerListeners = new Set<(id: string, answer: string) => void>();
  private chain: Promise<void> = Promise.resolve();
  /** The scan queued behind the running one: every notification meanwhile joins it (see scan()). */
  private queued: Promise<void> | undefined;
  /** mtime of each asked question file when last read: an unchanged file is not read again. */
  private readonly questionMtimes = new Map<string, number>();
  private disposed = false;

  constructor(
    private readonly paths: Pick<TaskPaths, 'questionsDir' | 'answersDir'> & Partial<Pick<TaskPaths, 'progressDir'>>,
    private readonly events: EventsWriter,
    private readonly log: (message: string) => void,
  ) {}

  async start(): Promise<void> {
    await fs.mkdir(this.paths.questionsDir, { recursive: true });
    await fs.mkdir(this.paths.answersDir, { recursive: true });
    if (this.paths.progressDir) await fs.mkdir(this.paths.progressDir, { recursive: true });
    for (const dir of [this.paths.questionsDir, this.paths.answersDir, ...(this.paths.progressDir ? [this.paths.progressDir] : [])]) {
      try {
        const watcher = watch(dir, () => void this.scan());
        watcher.on('error', (err) => this.log(`watching ${dir}: ${err.message}`));
        this.watchers.push(watcher);
      } catch (err) {
        this.log(`cannot watch ${dir}: ${(err as Error).message}`);
      }
    }
    await this.scan();
  }

  /**
   * Looks at both folders and emits what is new. Serialized: concurrent notifications never double-emit. At most one
   * scan waits behind the running one, and every call meanwhile shares it: a burst of notifications (10,000 questions
   * filed, or expired, at once) costs two scans, not one per file (issue 23: that pile-up took minutes).
   */
  scan(): Promise<void> {
    if (this.queued) return this.queued;
    const next = this.chain.then(() => {
      this.queued = undefined;
      return this.scanOnce();
    });
    this.queued = next.catch((err: Error) => this.log(`question relay: ${err.message}`));
    this.chain = this.queued;
    return this.queued;
  }

  /**
   * The asker is gone (the agent exited): questions still unanswered will never be read. Mark them expired, so
   * answering them fails clearly instead of writing into the void (reference §8.23 fixed).
   */
  async expireUnanswered(): Promise<void> {
    await this.scan();
    const pending = [...this.asked].filter((id) => !this.answered.has(id) && !this.expired.has(id));
    const expiredAt = new Date().toISOString();
    // One write expires them all (answering and pending lists read it, questions-closed.ts); the question files
    // themselves are marked too while they are few, so each still says so on its own.
    await closeQuestions(this.paths.questionsDir, expiredAt);
    if (pending.length > MARK_EACH_UP_TO) {
      for (const id of pending) this.expired.add(id);
      this.events.append({ type: 'progress', message: `${pending.length} questions expired without an answer; the agent went on with its own judgment.` });
      return;
    }
    for (const id of pending) {
      const file = path.join(this.paths.questionsDir, `${id}.json`);
      const question = await readJsonFile(file, QuestionFileSchema).catch(() => undefined);
      if (!question) continue;
      const answerExists = await fs.stat(path.join(this.paths.answersDir, `${id}.json`)).then(() => true, () => false);
      if (answerExists || (await claimQuestion(this.paths.questionsDir, id, 'expired')) === 'answered') continue;
      await writeJsonAtomic(file, { ...question, expired_at: question.expired_at ?? expiredAt });
      this.noteExpired(id);
    }
  }

  /** Calls `listener` with every answer as it is relayed (ACP permission requests wait on theirs); returns the unsubscribe. */
  onAnswer(listener: (id: string, answer: string) => void): () => void {
    this.answerListeners.add(listener);
    return () => this.answerListeners.delete(listener);
  }

  dispose(): void {
    this.disposed = true;
    for (const watcher of this.watchers.splice(0)) watcher.close();
  }

  private async scanOnce(): Promise<void> {
    if (this.disposed && this.events.isFinished) return;
    await this.scanProgress();
    for (const name of await listJson(this.paths.questionsDir)) {
      const id = name.slice(0, -'.json'.length);
      if (!isSafeId(id)) continue;
      if (this.asked.has(id) && (this.expired.has(id) || this.answered.has(id))) continue;
      const file = path.join(this.paths.questionsDir, name);
      // An asked question is read again only when its file changed (the asker marking it expired).
      const mtime = this.asked.has(id) ? await fs.lstat(file).then((st) => st.mtimeMs, () => undefined) : undefined;
      if (mtime !== undefined && this.questionMtimes.get(id) === mtime) continue;
      const question = await readJsonFile(file, QuestionFileSchema).catch((err: Error) => {
        this.log(`question ${name} unreadable: ${err.message}`);
        return undefined;
      });
      if (!question || question.id !== id) continue;
      if (mtime !== undefined) this.questionMtimes.set(id, mtime);
      if (!this.asked.has(id)) {
        this.asked.add(id);
        const stats = await fs.lstat(file).catch(() => undefined);
        if (stats) this.questionMtimes.set(id, stats.mtimeMs);
        this.events.append({ type: 'question', id, question: question.question, options: question.options });
      }
      if (question.expired_at) this.noteExpired(id);
    }
    for (const name of await listJson(this.paths.answersDir)) {
      const id = name.slice(0, -'.json'.length);
      if (!this.asked.has(id) || this.answered.has(id)) continue;
      const answer = await readAnswerForRelay(path.join(this.paths.answersDir, name), id, name);
      if (!answer) continue;
      this.answered.add(id);
      this.events.append({ type: 'answer', id, answer: answer.eventText });
      for (const listener of this.answerListeners) listener(id, answer.answer);
    }
  }

  /** Progress filed by the return channel, in filing order, each relayed once as a `progress` event. */
  private async scanProgress(): Promise<void> {
    if (!this.paths.progressDir) return;
    for (const name of await listJson(this.paths.progressDir)) {
      if (this.progressed.has(name)) continue;
      const progress = await readJsonFile(path.join(this.paths.progressDir, name), ProgressFileSchema).catch((err: Error) => {
        this.log(`progress ${name} unreadable: ${err.message}`);
        return undefined;
      });
      this.progressed.add(name);
      if (!progress) continue;
      this.events.append({ type: 'progress', message: progress.message, ...(progress.pct !== undefined ? { pct: progress.pct } : {}) });
    }
  }

  private noteExpired(id: string): void {
    if (this.expired.has(id) || this.answered.has(id)) return;
    this.expired.add(id);
    this.events.append({ type: 'progress', message: `Question ${id} expired without an answer; the agent went on with its own judgment.` });
  }
}

/** Past this many pending questions, expiry writes the mailbox's closing marker only, and one progress event. */
const MARK_EACH_UP_TO = 50;

async function listJson(dir: string): Promise<string[]> {
  const names = await fs.readdir(dir).catch(() => [] as string[]);
  return names.filter((n) => n.endsWith('.json') && !n.startsWith('.')).sort();
}

import { randomUUID } from 'node:crypto';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { AnswerFileSchema, PERMISSION_QUESTION_PREFIX, QuestionFileSchema, type EventDraft, type QuestionFile } from '../../protocol';
import { obj, str, type Json } from '../../agents/stream';
import { writeJsonAtomic } from '../../base/atomic';
import { answerFileAppears, claimQuestion } from '../../base/question-claim';
import { readJsonFile } from '../store/atomic';
import { decide, offeredOrder, optionForAnswer, optionLabel, questionText, byKind, type PermissionContext, type PermissionOption } from './permissions';

/** The subset of the supervisor's question relay a broker needs (src/engine/run/questions-relay.ts). */
export interface AnswerSource {
  scan(): Promise<void>;
  onAnswer(listener: (id: string, answer: string) => void): () => void;
}

export interface PermissionBrokerOptions extends PermissionContext {
  questionsDir: string;
  answersDir: string;
  relay: AnswerSource;
  agentName: string;
  /** When the task's deadline falls (epoch ms): a question still open then is answered with a reject. */
  deadlineAt: number;
  emit(drafts: EventDraft[]): void;
  /** Told of every reject, so a call that never reports its end is closed as failed (AcpTranslator.noteRejected). */
  onRejected(toolCallId: string): void;
}

export type PermissionOutcome = { outcome: { outcome: 'selected'; optionId: string } | { outcome: 'cancelled' } };

/** Stop waiting this long before the deadline, so the reject reaches the agent before the process group is killed. */
const DEADLINE_MARGIN_MS = 2000;

/**
 * `session/request_permission` → an automatic answer (logged as a progress event), or a question in
 * `questions/<id>.json` answered through the engine's one path (`caesar answer`, MCP, the editor — the first answer
 * wins, answers/<id>.json), mapped back to the agent's option by kind. Unanswered by the deadline → reject; a cancel
 * of the task answers every open request `cancelled`, as ACP asks of a client.
 */
export class PermissionBroker {
  private readonly waiting = new Map<string, (answer: string | undefined) => void>();
  private readonly unsubscribe: () => void;
  private cancelled = false;

  constructor(private readonly options: PermissionBrokerOptions) {
    this.unsubscribe = options.relay.onAnswer((id, answer) => this.waiting.get(id)?.(answer));
  }

  async request(params: Json): Promise<PermissionOutcome> {
    const toolCall = obj(params.toolCall);
    const options = (Array.isArray(params.options) ? params.options : []).map(obj).map(
      (o): PermissionOption => ({ optionId: str(o.optionId) ?? '', name: str(o.name) ?? str(o.optionId) ?? '', kind: str(o.kind) ?? '' }),
    );
    const question = questionText(toolCall, this.options.agentName, this.options.workspace);
    if (this.cancelled) return { outcome: { outcome: 'cancelled' } };
    const decision = decide(toolCall, this.options);
    if (decision.kind !== 'ask') {
      const option = byKind(options, decision.kind);
      this.options.emit([{ type: 'progress', message: `Permission answered automatically: ${option ? optionLabel(option) : 'cancelled'} — ${decision.reason}. (${question})` }]);
      return this.selected(toolCall, option);
    }
    const answer = await this.ask(question, offeredOrder(options).map(optionLabel));
    if (answer === undefined) {
      if (this.cancelled) return { outcome: { outcome: 'cancelled' } };
      const reject = byKind(options, 'reject_once');
      this.options.emit([{ type: 'progress', message: `Permission not answered before the task's deadline: ${reject ? optionLabel(reject) : 'cancelled'}. (${question})` }]);
      return this.selected(toolCall, reject);
    }
    const picked = optionForAnswer(answer, options);
    if (!picked.understood) {
      this.options.emit([{ type: 'progress', message: `The answer "${answer}" names none of the options: taken as ${picked.option ? optionLabel(picked.option) : 'cancelled'}.` }]);
    }
    return this.selected(toolCall, picked.option);
  }

  /** The task is being cancelled: every open request is answered `cancelled` at once. */
  cancelAll(): void {
    this.cancelled = true;
    for (const resolve of [...this.waiting.values()]) resolve(undefined);
  }

  dispose(): void {
    this.cancelAll();
    this.unsubscribe();
  }

  private selected(toolCall: Json, option: PermissionOption | undefined): PermissionOutcome {
    if (!option) {
      this.options.onRejected(str(toolCall.toolCallId) ?? '');
      return { outcome: { outcome: 'cancelled' } };
    }
    if (option.kind.startsWith('reject')) this.options.onRejected(str(toolCall.toolCallId) ?? '');
    return { outcome: { outcome: 'selected', optionId: option.optionId } };
  }

  /** Writes the question, waits for its answer (or the deadline, or a cancel); undefined when none came. */
  private async ask(text: string, labels: string[]): Promise<string | undefined> {
    const id = `${PERMISSION_QUESTION_PREFIX}${randomUUID().replaceAll('-', '').slice(0, 16)}`;
    const file = path.join(this.options.questionsDir, `${id}.json`);
    const asked: QuestionFile = QuestionFileSchema.parse({ id, question: text, options: labels, asked_at: new Date().toISOString() });
    const answered = new Promise<string | undefined>((resolve) => {
      const budget = Math.max(0, this.options.deadlineAt - DEADLINE_MARGIN_MS - Date.now());
      const timer = setTimeout(() => finish(undefined), budget);
      const finish = (answer: string | undefined) => {
        clearTimeout(timer);
        this.waiting.delete(id);
        resolve(answer);
      };
      this.waiting.set(id, finish);
    });
    await fs.mkdir(this.options.answersDir, { recursive: true });
    await writeJsonAtomic(file, asked);
    await this.options.relay.scan();
    const answer = await answered;
    if (answer !== undefined) return answer;
    // Nobody answered in time. An answerer may be claiming it right now: the first claim decides (question-claim.ts).
    const answerFile = path.join(this.options.answersDir, `${id}.json`);
    if ((await claimQuestion(this.options.questionsDir, id, 'expired')) === 'answered' && (await answerFileAppears(answerFile))) {
      const late = await readJsonFile(answerFile, AnswerFileSchema).catch(() => undefined);
      if (late) return late.answer;
    }
    // Marked so answering now fails clearly.
    await writeJsonAtomic(file, { ...asked, expired_at: new Date().toISOString() });
    await this.options.relay.scan();
    return undefined;
  }
}

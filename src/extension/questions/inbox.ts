import * as vscode from 'vscode';
import { Disposable } from '../../base/disposable';
import { Emitter } from '../../base/event';
import { RequestError, answerQuestion, isActive, pendingQuestions, type TaskSummary } from '../../engine/tasks';
import { PERMISSION_QUESTION_PREFIX, type QuestionFile } from '../../protocol';
import { taskTitle } from '../../common/format';
import { taskLifecycle } from '../../common/lifecycle';
import { optionButtonLabels } from '../../common/option-labels';
import { oneLine } from '../tasks/format';
import type { LiveTasks } from '../tasks/liveTasks';

/** The notification's button that opens the free-text prompt. */
export const ANSWER_BUTTON = 'Answer…';
/** More options than this do not fit as buttons: the notification offers the prompt, which lists them all. */
const MAX_OPTION_BUTTONS = 3;
/**
 * A question still waiting this long gets a reminder that stays on screen. VS Code hides a toast after ~10 s (only
 * errors with buttons and progress notifications stay), while an agent waits minutes for its answer.
 */
const REMIND_AFTER_MS = 45_000;

/** A notification raised for a question (the tests read them: no VS Code API lists notifications). */
export interface QuestionNotice {
  taskId: string;
  questionId: string;
  message: string;
  buttons: string[];
  /** 'question': the toast with the options; 'reminder': the notification that stays until the question is settled. */
  kind: 'question' | 'reminder';
  /** Set when the reminder closed itself (the question was answered, expired, or its task ended). */
  closedAt?: number;
}

export interface AnswerOutcome {
  answered: boolean;
  /** What the user was told. */
  message: string;
  code?: RequestError['code'];
}

/**
 * One inbox for every question: each new pending question of an active task raises a notification with its options
 * as buttons and "Answer…"; the tree's Answer action and the status bar open the same prompt. Answers go through the
 * engine (answers/<id>.json, created exclusively: the first answer wins, from any process). A prompt still open when
 * its question is answered elsewhere or expires is closed; a notification clicked after that says it was answered.
 * Closing a notification loses nothing: the question stays pending in the tree and the status bar.
 */
export class QuestionInbox extends Disposable {
  private readonly seen = new Set<string>();
  /** Per question (`task/question`): each button's label → the option it answers with. */
  private readonly buttonOptions = new Map<string, Map<string, string>>();
  /** Per question notified (`task/question`): its words, to name it when it is no longer open. */
  private readonly questionTexts = new Map<string, string>();
  private readonly prompts = new Map<string, vscode.QuickInput>();
  private readonly notices: QuestionNotice[] = [];
  private readonly noticed = this._register(new Emitter<QuestionNotice>());
  readonly onDidNotify = this.noticed.event;
  /** Per question waiting: the timer of its reminder, then the reminder's close. */
  private readonly reminders = new Map<string, { timer?: NodeJS.Timeout; close?: () => void }>();
  /** Replaceable by the in-editor tests (which cannot wait 45 s). */
  remindAfterMs = REMIND_AFTER_MS;

  constructor(
    private readonly tasks: LiveTasks,
    private readonly log: vscode.LogOutputChannel,
  ) {
    super();
    this._register(tasks.onDidChange(() => this.scan()));
    this._register({ dispose: () => this.prompts.forEach((p) => p.dispose()) });
    this._register({ dispose: () => [...this.reminders.keys()].forEach((key) => this.settle(key)) });
    void tasks.ready().then(() => this.scan());
  }

  /** Every notification raised since activation, oldest first. */
  get notified(): readonly QuestionNotice[] {
    return this.notices;
  }

  /** The questions waiting now, across active tasks, oldest first. */
  pending(): { summary: TaskSummary; question: QuestionFile }[] {
    return this.tasks
      .list()
      // Waiting for an answer is a phase of the one lifecycle (src/common/lifecycle.ts), as the tree and status bar say.
      .filter((s) => taskLifecycle(s).phase === 'waiting')
      .flatMap((summary) => summary.pendingQuestions.map((question) => ({ summary, question })))
      .sort((a, b) => a.question.asked_at.localeCompare(b.question.asked_at));
  }

  private scan(): void {
    const waiting = new Set<string>();
    for (const { summary, question } of this.pending()) {
      const key = `${summary.id}/${question.id}`;
      waiting.add(key);
      if (this.seen.has(key)) continue;
      this.seen.add(key);
      this.notify(summary, question);
    }
    // Answered elsewhere (CLI, MCP, another window), expired, or its task ended: an open prompt has nothing left to
    // ask, and a reminder nothing left to remind of.
    for (const [key, prompt] of this.prompts) if (!waiting.has(key)) prompt.hide();
    for (const key of [...this.reminders.keys()]) if (!waiting.has(key)) this.settle(key);
  }

  /** The question is no longer waiting: no reminder comes, and one on screen closes. */
  private settle(key: string): void {
    const reminder = this.reminders.get(key);
    if (!reminder) return;
    this.reminders.delete(key);
    clearTimeout(reminder.timer);
    reminder.close?.();
  }

  /**
   * After remindAfterMs, a question still waiting is shown again, as a notification that stays (a progress one: the
   * only kind an extension can keep on screen and close again) until the question is answered, from anywhere, or
   * expires. Its only button is VS Code's own, which hides the reminder; the question stays in the tree and the
   * status bar.
   */
  private scheduleReminder(summary: TaskSummary, question: QuestionFile, key: string): void {
    const entry: { timer?: NodeJS.Timeout; close?: () => void } = {};
    this.reminders.set(key, entry);
    entry.timer = setTimeout(() => {
      if (this.reminders.get(key) !== entry) return;
      const title = `Caesar: ${summary.state.agent} is still waiting for your answer: ${oneLine(question.question, 200)} — ${taskTitle(summary.state)}. Answer from the question mark in the status bar, or in the Caesar view.`;
      const notice: QuestionNotice = { taskId: summary.id, questionId: question.id, message: title, buttons: [], kind: 'reminder' };
      this.notices.push(notice);
      this.noticed.fire(notice);
      void vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title, cancellable: true }, (_progress, token) =>
        new Promise<void>((resolve) => {
          entry.close = () => {
            notice.closedAt = Date.now();
            resolve();
          };
          token.onCancellationRequested(() => resolve()); // hidden by the user: the question itself stays
        }),
      );
    }, this.remindAfterMs);
  }

  private notify(summary: TaskSummary, question: QuestionFile): void {
    // A permission request (ACP) already names its agent ("Codex asks permission to run a command: …").
    const asks = isPermissionRequest(question) ? '' : `${summary.state.agent} asks: `;
    const message = `${asks}${oneLine(question.question, 300)} — task “${oneLine(summary.state.objective, 60)}”`;
    const labels = question.options.length <= MAX_OPTION_BUTTONS ? optionButtonLabels(question.options) : [];
    // A button may show a shorter label than its option: the answer written is always the option itself.
    this.buttonOptions.set(`${summary.id}/${question.id}`, new Map(labels.map((label, i) => [label, question.options[i]!])));
    this.questionTexts.set(`${summary.id}/${question.id}`, question.question);
    const buttons = [...labels, ANSWER_BUTTON];
    const notice: QuestionNotice = { taskId: summary.id, questionId: question.id, message, buttons, kind: 'question' };
    this.notices.push(notice);
    this.log.info(`question ${question.id} of task ${summary.id}: ${oneLine(question.question, 120)}`);
    this.noticed.fire(notice);
    // A warning, not an information: the agent is blocked on the user, and the toast says so with its colour.
    void vscode.window.showWarningMessage(message, ...buttons).then((choice) => this.onNotificationChoice(summary.id, question.id, choice));
    this.scheduleReminder(summary, question, `${summary.id}/${question.id}`);
  }

  /** What a click on a question notification does (closing it, `undefined`, does nothing: the question stays). */
  async onNotificationChoice(taskId: string, questionId: string, choice: string | undefined): Promise<AnswerOutcome | undefined> {
    if (choice === undefined) return undefined;
    if (choice === ANSWER_BUTTON) return this.prompt(taskId, questionId);
    return this.answer(taskId, questionId, this.buttonOptions.get(`${taskId}/${questionId}`)?.get(choice) ?? choice);
  }

  /**
   * The Answer action (tree, status bar, palette): a question of the task (the first waiting one unless named), or a
   * pick among every waiting question when no task is given.
   */
  async answerCommand(taskId?: string, questionId?: string): Promise<AnswerOutcome | undefined> {
    if (!taskId) {
      const all = this.pending();
      if (all.length === 0) {
        void vscode.window.showInformationMessage('Caesar: no question is waiting for an answer.');
        return undefined;
      }
      const picked =
        all.length === 1
          ? all[0]
          : (
              await vscode.window.showQuickPick(
                all.map((p) => ({ label: oneLine(p.question.question, 120), description: `${p.summary.state.agent} · ${oneLine(p.summary.state.objective, 60)}`, p })),
                { title: 'Caesar: questions waiting for you', placeHolder: 'Answer which question?' },
              )
            )?.p;
      if (!picked) return undefined;
      return this.prompt(picked.summary.id, picked.question.id);
    }
    const id = questionId ?? this.tasks.get(taskId)?.pendingQuestions[0]?.id;
    if (!id) {
      void vscode.window.showInformationMessage('Caesar: this task has no question waiting for an answer.');
      return undefined;
    }
    return this.prompt(taskId, id);
  }

  /** Asks for the answer (the options, or any text), closed by itself if the question is answered elsewhere. */
  private async prompt(taskId: string, questionId: string): Promise<AnswerOutcome | undefined> {
    const key = `${taskId}/${questionId}`;
    const summary = this.tasks.get(taskId);
    const inView = summary?.pendingQuestions.find((q) => q.id === questionId);
    const fromView = inView !== undefined;
    const question = inView ?? (await pendingQuestions(this.tasks.rootOf(taskId), taskId).catch(() => [])).find((q) => q.id === questionId);
    if (!question) {
      // Not waiting (answered, expired or unknown): the engine refuses the write and says which, and by whom.
      return this.answer(taskId, questionId, '');
    }
    const agent = summary?.state.agent ?? 'the agent';
    this.prompts.get(key)?.hide();
    const title = `${agent} asks`;
    const text = await new Promise<string | undefined>((resolve) => {
      let input: vscode.QuickInput;
      let result: string | undefined;
      if (question.options.length) {
        const pick = vscode.window.createQuickPick<vscode.QuickPickItem & { option: string }>();
        pick.title = title;
        pick.placeholder = `${oneLine(question.question, 200)} (pick an option or type another answer)`;
        // Shown as the buttons show them ("Allow", not "Allow (allow_once)"); the answer is the option itself.
        const labels = optionButtonLabels(question.options);
        const options = labels.map((label, i) => ({ label, option: question.options[i]! }));
        pick.items = options;
        pick.onDidChangeValue((v) => {
          pick.items = v && !labels.includes(v) && !question.options.includes(v) ? [...options, { label: v, description: 'your answer', option: v }] : options;
        });
        pick.onDidAccept(() => {
          result = pick.activeItems[0]?.option ?? (pick.value || undefined);
          pick.hide();
        });
        input = pick;
      } else {
        const box = vscode.window.createInputBox();
        box.title = title;
        box.prompt = question.question;
        box.placeholder = 'Your answer';
        box.onDidAccept(() => {
          result = box.value;
          box.hide();
        });
        input = box;
      }
      input.ignoreFocusOut = true;
      input.onDidHide(() => {
        if (this.prompts.get(key) === input) this.prompts.delete(key);
        input.dispose();
        resolve(result);
      });
      this.prompts.set(key, input);
      input.show();
      // Answered while the prompt was being opened: scan() already ran, so close it here.
      if (fromView && !this.tasks.get(taskId)?.pendingQuestions.some((q) => q.id === questionId)) input.hide();
    });
    if (text === undefined) return undefined;
    return this.answer(taskId, questionId, text);
  }

  /** Whether the answer prompt of a question is on screen (opened by Answer…, not closed yet). */
  isPromptOpen(taskId: string, questionId: string): boolean {
    return this.prompts.has(`${taskId}/${questionId}`);
  }

  /** Writes the answer through the engine; already answered / expired are said, not thrown. */
  async answer(taskId: string, questionId: string, text: string): Promise<AnswerOutcome> {
    try {
      const answer = await answerQuestion(this.tasks.rootOf(taskId), taskId, questionId, text, 'vscode');
      const message = `Caesar: answered “${oneLine(answer.answer, 80)}”.`;
      vscode.window.setStatusBarMessage(message, 5000);
      this.log.info(`answered question ${questionId} of task ${taskId}: ${oneLine(answer.answer, 120)}`);
      return { answered: true, message };
    } catch (err) {
      if (!(err instanceof RequestError)) throw err;
      const message = `Caesar: ${this.refusal(taskId, err, questionId)}`;
      void vscode.window.showInformationMessage(message);
      return { answered: false, message, code: err.code };
    }
  }

  /** What the user is told when an answer is refused: a task named by its objective, its end said as it happened. */
  private refusal(taskId: string, err: RequestError, questionId: string): string {
    const summary = this.tasks.get(taskId);
    const asked = this.questionTexts.get(`${taskId}/${questionId}`);
    // The question named by its words, never by its id (the engine's message, written for a terminal, names the id).
    const question = asked ? `The question “${oneLine(asked, 100)}”` : 'This question';
    if (err.code === 'already_answered') {
      const by = / from ([\w-]+)/.exec(err.message)?.[1];
      const given = /: "(.*)"\.$/s.exec(err.message)?.[1];
      return `${question} was already answered${by ? ` from ${ANSWERED_FROM[by] ?? by}` : ''}${given !== undefined ? ` (“${oneLine(given, 80)}”)` : ''}: it is no longer open, nothing more to do.`;
    }
    if (err.code === 'expired') return `${question} is no longer open: the agent stopped waiting for an answer and went on with its own judgment.`;
    if (err.code !== 'finished' || !summary) return err.message;
    // The engine read the task's state just now; the summary may not have caught up with it yet.
    const how = /was cancelled/.test(err.message) ? 'was cancelled' : isActive(summary.observed) ? 'ended' : `ended (${summary.observed.replace('_', ' ')})`;
    return `${taskTitle(summary.state)} ${how} before this question was answered: nothing is waiting for the answer any more.`;
  }
}

/** Where an answer came from (answers/<id>.json's `by`), as a person says it. */
const ANSWERED_FROM: Record<string, string> = { cli: 'the terminal', mcp: 'an MCP client', 'mcp-elicitation': 'an MCP client', vscode: 'the editor' };

/** Questions the supervisor files for an ACP agent's permission requests (engine/acp/permission-broker.ts). */
function isPermissionRequest(question: QuestionFile): boolean {
  return question.id.startsWith(PERMISSION_QUESTION_PREFIX);
}

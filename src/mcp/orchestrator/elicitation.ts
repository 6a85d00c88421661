import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { RequestError, answerQuestion } from '../../engine/tasks';
import type { TaskOutcome } from './await';

/**
 * Puts a sub-agent's pending question to the person behind the MCP client (`elicitation/create`) when the client
 * declared the elicitation capability — VS Code's chat does. The answer is written exactly as caesar_answer writes it
 * (answers/<id>.json, first answer wins), so a question answered meanwhile from the CLI, the editor or another client
 * simply makes this answer "already answered", and its open prompt is withdrawn.
 */
export class ElicitationRelay {
  /** Questions put to the user and not settled yet, by "<task>/<question>", with how to withdraw the prompt. */
  private readonly open = new Map<string, AbortController>();

  constructor(
    private readonly server: Server,
    private readonly root: string,
  ) {}

  private get supported(): boolean {
    return Boolean(this.server.getClientCapabilities()?.elicitation);
  }

  /** Asks each new pending question once; withdraws prompts whose question is no longer pending. */
  offer(outcomes: TaskOutcome[]): void {
    if (!this.supported) return;
    const stillPending = new Set<string>();
    for (const outcome of outcomes) {
      for (const question of outcome.pending_questions ?? []) {
        const key = `${outcome.task_id}/${question.id}`;
        stillPending.add(key);
        if (this.open.has(key)) continue;
        const controller = new AbortController();
        this.open.set(key, controller);
        void this.ask(outcome, question, controller).finally(() => this.open.delete(key));
      }
    }
    for (const [key, controller] of this.open) {
      const taskId = key.slice(0, key.indexOf('/'));
      if (outcomes.some((o) => o.task_id === taskId) && !stillPending.has(key)) controller.abort();
    }
  }

  private async ask(outcome: TaskOutcome, question: NonNullable<TaskOutcome['pending_questions']>[number], controller: AbortController): Promise<void> {
    const answerSchema = question.options.length
      ? { type: 'string' as const, title: 'Answer', enum: question.options }
      : { type: 'string' as const, title: 'Answer', minLength: 1 };
    try {
      const result = await this.server.elicitInput(
        {
          message: `The ${outcome.agent ?? 'delegated'} agent working on task ${outcome.task_id} asks: ${question.question}`,
          requestedSchema: { type: 'object', properties: { answer: answerSchema }, required: ['answer'] },
        },
        { signal: controller.signal, timeout: 24 * 60 * 60 * 1000 },
      );
      const answer = result.action === 'accept' ? result.content?.answer : undefined;
      if (typeof answer !== 'string' || answer === '') return;
      await answerQuestion(this.root, outcome.task_id, question.id, answer, 'mcp-elicitation');
    } catch (err) {
      // Already answered elsewhere, expired, withdrawn or refused by the client: the question's own file says what happened.
      if (!(err instanceof RequestError) && !controller.signal.aborted) process.stderr.write(`caesar mcp: elicitation failed: ${(err as Error).message}\n`);
    }
  }
}

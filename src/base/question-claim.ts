import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { createExclusive } from './atomic';

/**
 * Who decides a question's fate when an answer and its expiry meet. The answerer (`caesar answer`, MCP, the editor)
 * and the waiter that gives up (the channel server's ask_orchestrator, the ACP permission broker, the relay at the
 * agent's end) each try to create `questions/<id>.claim` exclusively; the first one decides. Without it the answerer
 * could check "not expired", the waiter then mark it expired and find no answer, and the answer land after: the user
 * told "accepted" while the agent was told nobody answered. questions/ is the one folder of the task both sides may
 * write (the answers folder is the orchestrator's alone, read-only inside the sandbox). The claim is not a .json file,
 * so every reader of questions/ passes over it.
 */
export type QuestionClaim = 'answered' | 'expired';

export function questionClaimFile(questionsDir: string, id: string): string {
  return path.join(questionsDir, `${id}.claim`);
}

/**
 * Claims the question for `outcome`; returns the outcome that holds (ours, or the one claimed first). A claim file
 * that says neither (planted, cut short) counts as expired: the cautious reading for both sides.
 */
export async function claimQuestion(questionsDir: string, id: string, outcome: QuestionClaim): Promise<QuestionClaim> {
  const file = questionClaimFile(questionsDir, id);
  if (await createExclusive(file, outcome)) return outcome;
  const held = await fs.readFile(file, 'utf8').catch(() => '');
  return held === 'answered' ? 'answered' : 'expired';
}

/** How long a waiter that lost to an answer's claim waits for the answer file itself (the answerer writes it next). */
export const CLAIMED_ANSWER_WAIT_MS = 5_000;

/** Polls for `file` after an answerer claimed the question: true once it exists, false if it never came. */
export async function answerFileAppears(file: string, timeoutMs = CLAIMED_ANSWER_WAIT_MS): Promise<boolean> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    if (await fs.stat(file).then(() => true, () => false)) return true;
    if (Date.now() >= until) return false;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

import { formatBytes } from './errors';

/**
 * How much text a delegation may carry: the objective and the context together, measured as JSON text (a quote or a
 * control character counts as its escape). task.json, launch.json and state.json carry them and are read with a
 * 4 MiB bound (MAX_BYTES.task); 3 MiB leaves room for the rest of those documents. Documented in docs/agents.md.
 */
export const MAX_BRIEF_TEXT_BYTES = 3 * 1024 * 1024;

/** Why the objective and context are too large to delegate, or undefined when they fit. */
export function briefTextTooLarge(objective: string, context: string): string | undefined {
  const bytes = Buffer.byteLength(JSON.stringify(objective), 'utf8') + Buffer.byteLength(JSON.stringify(context), 'utf8');
  if (bytes <= MAX_BRIEF_TEXT_BYTES) return undefined;
  return (
    `The objective and context are ${formatBytes(bytes)} together, over the ${formatBytes(MAX_BRIEF_TEXT_BYTES)} limit. ` +
    'Put the material in a file of the workspace and name it in the objective instead.'
  );
}

/**
 * The longest answer to an agent's question (UTF-8 bytes). A person's or an orchestrator's answer is words; past
 * this it is refused with this message rather than written (issue 34: a 10 MB caesar_answer was taken). 1 MiB is
 * also what the return channel hands an asking agent whole (src/mcp/channel/server.ts), so any answer taken
 * reaches the agent entire.
 */
export const MAX_ANSWER_BYTES = 1024 * 1024;

/** Why an answer is too large to write, or undefined when it fits. */
export function answerTooLarge(answer: string): string | undefined {
  const bytes = Buffer.byteLength(answer, 'utf8');
  if (bytes <= MAX_ANSWER_BYTES) return undefined;
  return `The answer is ${formatBytes(bytes)}, over the ${formatBytes(MAX_ANSWER_BYTES)} limit: nothing was written. Put the material in a file of the workspace and name it in the answer instead.`;
}

/**
 * The longest question an agent may put through the return channel, its options included (as JSON text). A question
 * is read by a person in a notification or a chat; a larger one was written, then left unread by every reader
 * (bounded at 4 MiB), while the agent waited for an answer that could not come.
 */
export const MAX_QUESTION_BYTES = 64 * 1024;

/** Why a question is too large to ask, or undefined when it fits. */
export function questionTooLarge(question: string, options: readonly string[]): string | undefined {
  const bytes = Buffer.byteLength(JSON.stringify({ question, options }), 'utf8');
  if (bytes <= MAX_QUESTION_BYTES) return undefined;
  return `The question and its options are ${formatBytes(bytes)}, over the ${formatBytes(MAX_QUESTION_BYTES)} limit: it was not asked. Ask it in a few sentences; put the material in a file of the workspace and name it.`;
}

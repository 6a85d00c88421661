import * as path from 'node:path';
import { QUESTIONS_CLOSED_FILE, QuestionsClosedSchema } from '../../protocol';
import { writeJsonAtomic } from '../../base/atomic';
import { readJsonFile } from './atomic';

/** When the task's mailbox was closed (its agent ended), or undefined while questions may still be answered. */
export async function questionsClosedAt(questionsDir: string): Promise<string | undefined> {
  const closed = await readJsonFile(path.join(questionsDir, QUESTIONS_CLOSED_FILE), QuestionsClosedSchema, 4096).catch(() => undefined);
  return closed?.closed_at;
}

/** Closes the mailbox: one small write, whatever the number of questions waiting. */
export async function closeQuestions(questionsDir: string, closedAt: string): Promise<void> {
  await writeJsonAtomic(path.join(questionsDir, QUESTIONS_CLOSED_FILE), { closed_at: closedAt });
}

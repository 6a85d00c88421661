/**
 * The demo agent (dist/demo-agent.js): a model-free program that honours the OACP v1 contract fully, so anyone can
 * watch a delegation end to end without an API key. Its stream mode is dependency-free on purpose (only node:*).
 *
 * - reads $CAESAR_TASK_FILE, and the brief on stdin (the prompt never travels on argv);
 * - prints its native stream on stdout (one JSON object per line: say, think, step begin/end, progress, edit, usage,
 *   done) — the demo adapter translates it into caesar.event/v1, the supervisor being the only events writer;
 * - when the objective asks for it ("ask", "question"), drops questions/<id>.json (a question fitting the objective) and waits for answers/<id>.json
 *   through fs.watch, marking the question expired if no answer comes in time;
 * - makes a real edit in its workspace, valid for the file's language (a file named in the objective, or for a
 *   follow-up in the continued task's objective, else CAESAR_DEMO.md), except in read-only mode; a follow-up rewrites
 *   the line its previous note is on (./demo-work.ts);
 * - writes $CAESAR_REPORT_PATH last, then exits. Steps are paced (CAESAR_DEMO_DELAY_MS, default 300 ms) so a person
 *   can follow it.
 * With `--acp` it speaks the Agent Client Protocol instead (./acp-mode.ts, the only part that uses a package: the
 * ACP SDK, bundled in and loaded only in that mode).
 */
import { existsSync, mkdirSync, readFileSync, readdirSync, renameSync, watch, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { CLAIMED_ANSWER_WAIT_MS, claimQuestion } from '../../base/question-claim';
import { editedText, firstLine, noteFor, previousObjective, questionFor, targetFile, type Task } from './demo-work';

const delayMs = numberFromEnv('CAESAR_DEMO_DELAY_MS', 300);
const started = Date.now();

function numberFromEnv(name: string, fallback: number): number {
  const value = Number(process.env[name]);
  return Number.isFinite(value) && value >= 0 ? value : fallback;
}

function emit(line: Record<string, unknown>): void {
  process.stdout.write(`${JSON.stringify(line)}\n`);
}

function pause(ms = delayMs): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function writeJsonAtomic(file: string, value: unknown): void {
  const temp = path.join(path.dirname(file), `.${path.basename(file)}.${process.pid}.tmp`);
  writeFileSync(temp, `${JSON.stringify(value, null, 2)}\n`);
  renameSync(temp, file);
}

async function readStdin(): Promise<string> {
  if (process.stdin.isTTY) return '';
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

function wantsQuestion(objective: string): boolean {
  return /\bask\b|\bquestion\b/i.test(objective);
}

/** Waits for answers/<id>.json (fs.watch on the folder); undefined after the timeout. */
function waitForAnswer(answersDir: string, id: string, timeoutMs: number): Promise<string | undefined> {
  const file = path.join(answersDir, `${id}.json`);
  return new Promise((resolve) => {
    let done = false;
    const check = () => {
      if (done || !existsSync(file)) return;
      try {
        const answer = JSON.parse(readFileSync(file, 'utf8')) as { answer?: unknown };
        if (typeof answer.answer !== 'string') return;
        finish(answer.answer);
      } catch {
        /* written atomically by the answerer; a read error means "not yet" */
      }
    };
    const watcher = watch(answersDir, () => check());
    const timer = setTimeout(() => finish(undefined), timeoutMs);
    const finish = (value: string | undefined) => {
      if (done) return;
      done = true;
      watcher.close();
      clearTimeout(timer);
      resolve(value);
    };
    check();
  });
}

async function main(): Promise<void> {
  const taskFile = process.env.CAESAR_TASK_FILE;
  const taskDir = process.env.CAESAR_TASK_DIR;
  const reportPath = process.env.CAESAR_REPORT_PATH;
  if (!taskFile || !taskDir || !reportPath) {
    process.stderr.write('demo-agent: run me through caesar (CAESAR_TASK_FILE, CAESAR_TASK_DIR and CAESAR_REPORT_PATH are required)\n');
    process.exitCode = 2;
    return;
  }
  const task = JSON.parse(readFileSync(taskFile, 'utf8')) as Task;
  const brief = await readStdin();
  emit({ kind: 'say', text: `Demo agent here. I received a brief of ${brief.length} characters for task ${task.id}.` });
  await pause();
  emit({ kind: 'think', text: `The objective is: ${task.objective.slice(0, 200)}. I will look around, then make one small edit.` });
  await pause();

  emit({ kind: 'step', phase: 'begin', id: 'demo-1', tool: 'list', input: '. (the workspace)' });
  await pause();
  const entries = readdirSafe(task.workspace);
  emit({ kind: 'step', phase: 'end', id: 'demo-1', tool: 'list', input: '. (the workspace)', ok: true });
  emit({ kind: 'progress', message: `Looked at ${entries.length} entries in the workspace`, pct: 25 });
  await pause();

  let answer: string | undefined;
  if (wantsQuestion(task.objective)) {
    answer = await ask(task, taskDir);
  }

  const changes: Array<{ path: string; action: 'created' | 'modified'; summary: string }> = [];
  const file = targetFile(task.objective, task.context);
  let summary = 'The demo agent looked at the workspace and changed nothing (read-only).';
  if (task.mode === 'write') {
    const change = await editTarget(task, file, answer);
    if (change) changes.push(change);
    summary = change
      ? `The demo agent ${change.action} ${file}${answer ? ` using the answer "${answer}"` : ''}: ${change.summary}.`
      : `The demo agent left ${file} alone: it is not a JSON object it could add a note to.`;
  } else {
    emit({ kind: 'say', text: 'Read-only task: I leave every file as it is.' });
  }
  emit({ kind: 'progress', message: 'Checking my work', pct: 75 });
  await pause();
  emit({ kind: 'step', phase: 'begin', id: 'demo-3', tool: 'check', input: `read back ${file}` });
  await pause();
  emit({ kind: 'step', phase: 'end', id: 'demo-3', tool: 'check', input: `read back ${file}`, ok: true });
  emit({ kind: 'progress', message: 'Done', pct: 100 });

  writeJsonAtomic(reportPath, {
    protocol: 'caesar.report/v1',
    task_id: task.id,
    status: 'success',
    summary,
    details: `Brief: ${brief.length} characters. Workspace entries seen: ${entries.length}.`,
    changes,
    commands_run: [],
    findings: [],
    next_steps: task.mode === 'write' ? [`Review the diff, then apply it (caesar apply ${task.id}).`] : [],
    usage: { input_tokens: 0, output_tokens: 0, duration_ms: Date.now() - started },
  });
  emit({ kind: 'usage', input_tokens: 0, output_tokens: 0, cost_usd: 0 });
  emit({ kind: 'say', text: summary });
  emit({ kind: 'done', status: 'success', summary });
}

/** The one edit: the note written validly for the file's language; undefined when no valid edit exists. */
async function editTarget(task: Task, file: string, answer: string | undefined) {
  const target = path.join(task.workspace, file);
  emit({ kind: 'step', phase: 'begin', id: 'demo-2', tool: 'edit', input: file });
  await pause();
  const oldText = existsSync(target) ? readFileSync(target, 'utf8') : null;
  const previous = previousObjective(task.context);
  const newText = editedText(file, oldText, noteFor(task, answer), previous);
  emit({ kind: 'step', phase: 'end', id: 'demo-2', tool: 'edit', input: file, ok: newText !== undefined });
  if (newText === undefined) return undefined;
  writeFileSync(target, newText);
  const action: 'created' | 'modified' = oldText === null ? 'created' : 'modified';
  emit({ kind: 'edit', path: target, action });
  const summary = previous ? `my earlier note revised as asked ("${firstLine(task.objective)}")` : 'one note added by the demo agent';
  return { path: file, action, summary };
}

async function ask(task: Task, taskDir: string): Promise<string | undefined> {
  const questionsDir = path.join(taskDir, 'questions');
  const answersDir = path.join(taskDir, 'answers');
  mkdirSync(questionsDir, { recursive: true });
  mkdirSync(answersDir, { recursive: true });
  const id = `q_${process.pid}_${Date.now().toString(36)}`;
  const question = {
    id,
    ...questionFor(task),
    asked_at: new Date().toISOString(),
  };
  writeJsonAtomic(path.join(questionsDir, `${id}.json`), question);
  // Said in words: a question's id is for machines (the timeline and the notification show the question itself).
  emit({ kind: 'say', text: `I asked you: “${question.question}” I wait for your answer.` });
  // At most 5 minutes, and never beyond what is left of the task's deadline (measured from our own start).
  const budget = Math.min(numberFromEnv('CAESAR_DEMO_ANSWER_TIMEOUT_MS', 300_000), Math.max(0, task.deadline_ms - (Date.now() - started) - 2000));
  let answer = await waitForAnswer(answersDir, id, budget);
  // An answerer may be claiming it as we give up: the first claim decides (question-claim.ts).
  if (answer === undefined && (await claimQuestion(questionsDir, id, 'expired')) === 'answered') {
    answer = await waitForAnswer(answersDir, id, CLAIMED_ANSWER_WAIT_MS);
  }
  if (answer === undefined) {
    writeJsonAtomic(path.join(questionsDir, `${id}.json`), { ...question, expired_at: new Date().toISOString() });
    emit({ kind: 'say', text: 'No answer came in time; I go on with my own judgment.' });
  } else {
    emit({ kind: 'say', text: `You answered “${answer}”: I go on with it.` });
  }
  return answer;
}

function readdirSafe(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

process.on('SIGTERM', () => {
  process.stderr.write('demo-agent: stopped (SIGTERM)\n');
  process.exit(143);
});

if (process.argv.includes('--acp')) {
  void import('./acp-mode').then((mode) => mode.runAcp({ pause: () => pause() }));
} else {
  main().catch((err: unknown) => {
    process.stderr.write(`demo-agent: ${(err as Error)?.stack ?? String(err)}\n`);
    emit({ kind: 'done', status: 'failed', summary: (err as Error)?.message ?? String(err) });
    process.exitCode = 1;
  });
}

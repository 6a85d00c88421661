import * as fs from 'node:fs';
import * as path from 'node:path';
import { DOCUMENT_IDS, newTaskId, renderBrief, strictReportSchema, type EventDraft, type Mode, type ReportTier, type Task } from '../../../src/protocol';
import type { AgentAdapter, TranslationSummary } from '../../../src/agents/types';
import { run } from './harness';

/**
 * Runs an adapter's SpawnPlan directly — no supervisor — and translates its stdout line by line. Used to probe a CLI
 * on its own (the caesar path is what the live tests assert).
 */
export interface DirectRun {
  events: EventDraft[];
  summary: TranslationSummary;
  code: number | null;
  stdout: string;
  stderr: string;
  taskDir: string;
  task: Task;
  display: string;
}

export async function runDirect(
  adapter: AgentAdapter,
  opts: { workspace: string; taskRoot: string; mode: Mode; tier: ReportTier; model?: string; objective: string; env: NodeJS.ProcessEnv; extraArgs?: string[] },
): Promise<DirectRun> {
  const id = newTaskId();
  const taskDir = path.join(opts.taskRoot, id);
  fs.mkdirSync(taskDir, { recursive: true });
  const task: Task = {
    protocol: DOCUMENT_IDS.task,
    id,
    created_at: new Date().toISOString(),
    agent: adapter.id,
    objective: opts.objective,
    context: '',
    constraints: [],
    acceptance_criteria: [],
    mode: opts.mode,
    isolation: 'inplace',
    network: false,
    workspace: opts.workspace,
    deadline_ms: 120_000,
    depth: 0,
    report_path: path.join(taskDir, 'report.json'),
    events_path: path.join(taskDir, 'events.jsonl'),
    channel: null,
  };
  const prompt = renderBrief(task, opts.tier);
  const promptFile = path.join(taskDir, 'brief.md');
  fs.writeFileSync(promptFile, prompt);
  const reportSchemaFile = path.join(taskDir, 'report.schema.json');
  fs.writeFileSync(reportSchemaFile, JSON.stringify(strictReportSchema(), null, 2));
  const plan = adapter.build({
    task,
    taskDir,
    prompt,
    promptFile,
    tier: opts.tier,
    ...(opts.model ? { model: opts.model } : {}),
    extraArgs: opts.extraArgs ?? [],
    reportSchemaFile,
    finalMessageFile: path.join(taskDir, 'final-message.txt'),
  });
  for (const file of plan.files ?? []) fs.writeFileSync(file.path, file.content);
  const ran = await run(plan.command, plan.args, {
    cwd: plan.cwd,
    env: { ...opts.env, ...(plan.env ?? {}), CAESAR_TASK_DIR: taskDir, CAESAR_REPORT_PATH: task.report_path, CAESAR_TASK_ID: id },
    ...(plan.stdin !== undefined ? { stdin: plan.stdin } : {}),
  });
  const translator = adapter.createTranslator({ workspace: opts.workspace });
  const events = ran.stdout.split('\n').flatMap((line) => translator.line(line));
  return { events, summary: translator.end(ran.code), code: ran.code, stdout: ran.stdout, stderr: ran.stderr, taskDir, task, display: plan.display };
}

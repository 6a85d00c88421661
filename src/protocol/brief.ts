import type { Task } from './task';
import { ENV } from './env';
import { DOCUMENT_IDS } from './version';

/** How the agent hands its report back; decides the "Reporting" section of the brief. */
export type ReportTier = 'channel' | 'schema' | 'file';

/**
 * The prompt an agent receives. Plain English sections joined by blank lines; task fields are copied verbatim.
 * Unlike the reference (§8.29), a read-only brief never forbids writing the report it then asks for, and "stay
 * inside the workspace" names the report file as the one exception, so the brief never contradicts itself.
 */
export function renderBrief(task: Task, tier: ReportTier): string {
  const sections = [
    `You are a delegated sub-agent working inside an orchestrator, on task ${task.id}. Work only toward the objective below.`,
    `## Objective\n${task.objective}`,
  ];
  const context = task.context.trim();
  if (context) sections.push(`## Context\n${context}`);
  sections.push(`## Constraints\n${constraintBullets(task).map((c) => `- ${c}`).join('\n')}`);
  if (task.acceptance_criteria.length) {
    sections.push(`## Acceptance criteria\n${task.acceptance_criteria.map((c) => `- ${c}`).join('\n')}`);
  }
  sections.push(reportingSection(task, tier));
  return sections.join('\n\n') + '\n';
}

function constraintBullets(task: Task): string[] {
  const bullets: string[] = [];
  if (task.mode === 'read-only') {
    bullets.push(
      'This is a read-only investigation: do NOT modify, create or delete any file in the workspace. ' +
        'The report described under "Reporting" is the only file you write, and it lives outside the workspace.',
    );
  }
  bullets.push(...task.constraints);
  if (task.network === false) {
    bullets.push(
      'No network access: the network is cut off for this task. Do not attempt to install packages, clone repositories ' +
        'or fetch URLs — prefer what is already vendored, and report the need instead of retrying.',
    );
  }
  bullets.push(`Stay inside the workspace: ${task.workspace} (the report file under "Reporting" is the one exception).`);
  return bullets;
}

function reportingSection(task: Task, tier: ReportTier): string {
  const lines = ['## Reporting'];
  if (tier === 'schema') {
    lines.push('Your final response must be the report object itself, and nothing else: no prose before or after it.');
  } else if (tier === 'channel' && task.channel) {
    const server = task.channel.server_name;
    lines.push(
      `You are connected to the orchestrator through the \`${server}\` MCP server (the return channel). Its four tools:`,
      [
        `- \`submit_report\`: hand in your final report (the object below) as your very last action. It is validated at once: ` +
          'if it is refused, fix the fields the error names and call it again.',
        '- `report_progress`: say where you are at each milestone (a sentence, optionally a percentage); it returns at once.',
        '- `ask_orchestrator`: ask a question ONLY when a decision is outside your scope and you cannot settle it from ' +
          'the task and the code. It waits a few minutes at most; if no answer comes, go on with your best judgment and ' +
          'state the assumption in your report.',
        '- `get_task`: re-read this task (objective, constraints, criteria) if you need it.',
      ].join('\n'),
      `If that server is unreachable, write the report as JSON to this exact path instead:\n    ${task.report_path}`,
    );
  } else {
    lines.push(
      `Write your report as JSON to this exact path (also given in $${ENV.reportPath}):\n    ${task.report_path}\n` +
        'Write the file as your very last action, then stop.',
    );
  }
  lines.push('Example report:', '```json', JSON.stringify(exampleReport(task.id), null, 2), '```');
  lines.push(
    [
      '- status: "success" when the acceptance criteria are met; "partial" when part is done (say what remains in next_steps); ' +
        '"failed" when you cannot succeed; "blocked" when a decision outside your scope is needed (ask it in questions).',
      '- summary: two or three sentences a reviewer can read first.',
      '- changes: the files you created, modified, deleted or renamed. They are cross-checked against git, which is the source of truth.',
      '- findings: problems or risks you noticed, with a severity, and a file and line where you have them.',
      '- Arrays that would be empty may be omitted.',
    ].join('\n'),
  );
  return lines.join('\n');
}

function exampleReport(taskId: string) {
  return {
    protocol: DOCUMENT_IDS.report,
    task_id: taskId,
    status: 'success',
    summary: '…',
    changes: [{ path: 'src/foo.ts', action: 'modified', summary: '…' }],
    findings: [{ severity: 'medium', title: '…', file: 'src/bar.ts', line: 42, detail: '…' }],
    questions: [],
    next_steps: [],
  };
}

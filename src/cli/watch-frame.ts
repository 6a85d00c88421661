import { checksSuffix } from '../protocol';
import { optionButtonLabels } from '../common/option-labels';
import { formatDuration, oneLine } from '../common/format';
import { STALL_AFTER_MS, headline, isStalled, silenceMs, type TaskView } from '../common/task-view';
import { DEFAULT_MAX_PARALLEL, type TaskSummary } from '../engine/tasks';
import { formatUsage, shortId, truncate, type Style } from './format';

/**
 * The frame `caesar watch` draws, as a pure function of what it knows and the clock: no I/O, so a frame can be tested
 * line by line. The command (watch.ts) owns the terminal, the followers and the timers.
 */

/** At most this many finished tasks stay on screen (reference §6.3.4). */
export const MAX_RECENT = 5;

/** What watch knows about one task: its latest summary and the activity folded from its events so far. */
export interface WatchedTask {
  id: string;
  summary: TaskSummary;
  activity: TaskView;
  badLines: number;
  /** When watch saw the task stop being active (or its recorded end, for tasks that ended before watch started). */
  endedAt?: number;
}

/**
 * One screen of the live view (reference §6.3.5-7): a header, a block per active task (pending question first, else
 * the headline; counters with the silence), then the recently finished ones.
 */
export function renderFrame(
  tasks: readonly WatchedTask[],
  now: number,
  style: Style,
  columns: number,
  maxParallel = DEFAULT_MAX_PARALLEL,
): string[] {
  const width = Math.max(40, columns);
  const fit = (text: string) => truncate(text, width);
  const active = tasks
    .filter((t) => t.endedAt === undefined)
    .sort(
      (a, b) =>
        Number(b.summary.pendingQuestions.length > 0) - Number(a.summary.pendingQuestions.length > 0) ||
        Date.parse(a.summary.state.created_at) - Date.parse(b.summary.state.created_at),
    );
  const recent = tasks
    .filter((t) => t.endedAt !== undefined)
    .sort((a, b) => (b.endedAt ?? 0) - (a.endedAt ?? 0))
    .slice(0, MAX_RECENT);
  const clock = new Date(now).toTimeString().slice(0, 8);
  const lines = [
    `${style.bold('caesar · watch')}  ${style.dim(`${active.length} active · max_parallel ${maxParallel} · ${clock}`)}`,
    '',
  ];
  if (active.length === 0) lines.push(style.dim('No task in progress. The window stays open.'));
  for (const task of active) lines.push(...renderActive(task, now, style, fit), '');
  if (recent.length) {
    lines.push(style.bold('Recently finished'));
    for (const task of recent) lines.push(renderRecent(task, now, style, fit));
  }
  lines.push('', style.dim('q to quit'));
  return lines;
}

function renderActive(task: WatchedTask, now: number, style: Style, fit: (s: string) => string): string[] {
  const { state, pendingQuestions } = task.summary;
  const stalled = isStalled(task.activity, now);
  const bullet = stalled ? style.yellow('⚠') : style.cyan('●');
  const age = formatDuration(now - (Date.parse(state.started_at ?? state.created_at) || now));
  const who = [state.agent, state.role].filter(Boolean).join('•');
  const lines = [
    `${bullet} ${fit(`${shortId(task.id)}  ${who}  ${age}  ${state.isolation}•${state.mode}  ${task.summary.observed}`)}`,
    `  ${style.dim(fit(oneLine(state.objective)))}`,
  ];
  const [question, ...moreQuestions] = pendingQuestions;
  if (question) {
    const more = moreQuestions.length ? ` (+${moreQuestions.length})` : '';
    lines.push(`  ${style.yellow('?')} ${fit(`${oneLine(question.question)}${more}`)}`);
    if (question.options.length) lines.push(`    ${fit(optionButtonLabels(question.options).map((o, i) => `${i + 1}) ${o}`).join('  '))}`);
    lines.push(`    ${style.dim(fit(`waiting for an answer — caesar answer ${task.id} ${question.id} "<text>" (or caesar_answer)`))}`);
  } else {
    const concluding = concludingLine(state, now);
    const phase = task.activity.eventCount === 0 && state.phase ? `${state.phase}` : undefined;
    lines.push(`  ${fit(concluding ?? phase ?? headline(task.activity, now))}`);
  }
  const counters = [`${task.activity.files.length} files`, `${task.activity.eventCount} events`];
  if (task.badLines) counters.push(style.red(`${task.badLines} unreadable`));
  const silence = silenceMs(task.activity, now);
  // While concluding the agent is gone: its silence is expected, the heartbeat above says what is going on.
  if (!state.concluding_since && silence !== undefined && silence > STALL_AFTER_MS) counters.push(style.yellow(`silence ${formatDuration(silence)}`));
  lines.push(`  ${style.dim(counters.join(' · '))}`);
  return lines;
}

/**
 * The heartbeat of a task whose agent has ended and whose conclusion (diff, report) is still under way, with the
 * time since it began: a conclusion over a huge change can take minutes, which must not look like a hang.
 */
export function concludingLine(state: Pick<TaskSummary['state'], 'concluding_since' | 'phase'>, now: number): string | undefined {
  const since = state.concluding_since ? Date.parse(state.concluding_since) : NaN;
  if (!Number.isFinite(since)) return undefined;
  return `concluding… ${formatDuration(Math.max(0, now - since))}${state.phase ? ` (${oneLine(state.phase)})` : ''}`;
}

function renderRecent(task: WatchedTask, now: number, style: Style, fit: (s: string) => string): string {
  const { state, observed, result } = task.summary;
  const report = state.report_status ?? result?.report.status ?? task.activity.finished?.status;
  const ok = observed === 'succeeded' && report === 'success' && !checksSuffix(state);
  const mark = ok ? style.green('✓') : style.red('✗');
  const ended = formatDuration(now - (task.endedAt ?? now));
  const usage = formatUsage(state.usage ?? result?.usage);
  return `  ${mark} ${fit(`${shortId(task.id)}  ${state.agent}  ${observed}${checksSuffix(state)} / report ${report ?? '-'}  ${ended} ago${usage ? `  ${usage}` : ''}`)}`;
}

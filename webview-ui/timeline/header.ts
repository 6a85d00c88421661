// The timeline's header: the task's summary line, its actions (review, apply, discard), the agent's progress, the
// error and bad-line notes, and the final report. Agent text goes in with textContent only.
import { fileActionIcon, formatDuration, formatUsage } from '../../src/common/format';
import { agentStepStillOpen } from '../../src/common/next-actions';
import type { TimelineAction, TimelineStatus, TimelineTaskInfo, WebviewToHost } from '../../src/extension/timeline/messages';

export const HEADER_HTML = `
<header class="head">
  <div class="title-row"><span class="status-icon codicon"></span><h1 class="objective"></h1></div>
  <div class="meta"></div>
  <div class="actions" hidden></div>
  <div class="progress" hidden><div class="progress-track" role="progressbar" aria-valuemin="0" aria-valuemax="100"><div class="progress-fill"></div></div><span class="progress-text"></span></div>
  <div class="bad-lines" hidden><span class="codicon codicon-warning"></span> <span class="bad-lines-text"></span></div>
  <div class="task-error" hidden><span class="codicon codicon-error"></span> <span class="task-error-text"></span></div>
  <div class="review-note" hidden><span class="codicon"></span> <span class="review-note-text"></span></div>
</header>
<section class="report" hidden aria-label="Final report"></section>`;

const ACTIONS: readonly TimelineAction[] = ['reviewAll', 'apply', 'applySelected', 'discard'];
/** A CLI command for a task in an agent's next step: `caesar apply <id>`, with or without backquotes. */
const CLI_STEP = /`?caesar (apply|discard|diff)\s+([A-Za-z0-9._-]+)`?/;
const CLI_ACTIONS: Record<string, TimelineAction> = { apply: 'apply', discard: 'discard', diff: 'reviewAll' };
const STATUS_ICON: Record<string, [string, string]> = {
  pending: ['clock', 'warn'], running: ['loading', 'info'], succeeded: ['pass', 'ok'], failed: ['error', 'bad'],
  cancelled: ['circle-slash', 'dim'], timed_out: ['watch', 'warn'], lost: ['debug-disconnect', 'warn'],
};

function el(tag: string, className: string, text?: string): HTMLElement {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

export class Header {
  private task: TimelineTaskInfo | undefined;
  private status: TimelineStatus | undefined;
  private readonly $: <T extends HTMLElement>(selector: string) => T;

  constructor(
    root: HTMLElement,
    private readonly post: (message: WebviewToHost) => void,
  ) {
    this.$ = <T extends HTMLElement>(selector: string) => root.querySelector<T>(selector)!;
    this.$('.actions').addEventListener('click', (e) => {
      const action = (e.target as HTMLElement).closest<HTMLElement>('button[data-action]')?.dataset.action as TimelineAction | undefined;
      if (action && ACTIONS.includes(action)) post({ type: 'action', action });
    });
    // A clock for the elapsed time of a running task (rendering only; the data comes from the host).
    setInterval(() => {
      if (this.running) this.renderSummary();
    }, 1000);
  }

  /** Shows nothing until the next task's data arrives (the panel now shows another task). */
  reset(): void {
    this.task = undefined;
    this.status = undefined;
    for (const selector of ['.actions', '.progress', '.bad-lines', '.task-error', '.review-note', '.report']) this.$(selector).hidden = true;
    for (const selector of ['.objective', '.meta']) this.$(selector).textContent = '';
    this.$('.status-icon').className = 'status-icon codicon';
    this.$('.report').replaceChildren();
  }

  private get running(): boolean {
    return this.task?.status === 'running' || this.task?.status === 'pending';
  }

  setTask(task: TimelineTaskInfo): void {
    this.task = task;
    this.renderSummary();
    this.renderProgress();
    this.renderReport(task);
  }

  setStatus(status: TimelineStatus): void {
    this.status = status;
    this.renderProgress();
    const bad = this.$('.bad-lines');
    bad.hidden = status.badLines === 0;
    this.$('.bad-lines-text').textContent = `${status.badLines} line(s) of events.jsonl could not be read (see the Caesar log)`;
  }

  private renderSummary(): void {
    const task = this.task;
    if (!task) return;
    const [icon, tone] = STATUS_ICON[task.status] ?? ['circle', ''];
    const statusIcon = this.$('.status-icon');
    statusIcon.className = `status-icon codicon codicon-${icon} tone-${tone}${task.status === 'running' ? ' codicon-modifier-spin' : ''}`;
    statusIcon.title = task.status;
    this.$('.objective').textContent = task.objective;
    const start = Date.parse(task.startedAt ?? task.createdAt);
    const end = task.endedAt ? Date.parse(task.endedAt) : Date.now();
    // Read as the tree reads it (zeros mean "not reported": the demo agent reports zeros).
    const usageText = formatUsage(task.usage, 'brief') ?? '';
    // The lifecycle's words (src/common/lifecycle.ts): "succeeded · changes to review", "applied", "waiting for an answer".
    this.$('.meta').textContent = [task.agent, task.lifecycle.label, formatDuration(end - start), usageText, task.id]
      .filter(Boolean).join(' · ');
    // The buttons are the lifecycle's actions the header has (src/common/next-actions.ts), and nothing else: no Apply
    // after Apply or Discard. Each runs the extension's command.
    this.renderButtons(task);
    this.renderReviewNote(task);
    this.$('.task-error').hidden = !task.error;
    this.$('.task-error-text').textContent = task.error ?? '';
  }

  private renderButtons(task: TimelineTaskInfo): void {
    const actions = this.$('.actions');
    const shown = actions.querySelectorAll<HTMLElement>('button[data-action]');
    const same = shown.length === task.buttons.length && task.buttons.every((b, i) => shown[i]!.dataset.action === b.action && shown[i]!.textContent === b.label);
    if (!same) {
      actions.replaceChildren(...task.buttons.map((b) => {
        const button = el('button', '', b.label) as HTMLButtonElement;
        button.type = 'button';
        button.dataset.action = b.action;
        return button;
      }));
    }
    actions.hidden = task.buttons.length === 0;
  }

  /** Says what became of the work (its lifecycle): applied to the workspace, or discarded with the worktree. */
  private renderReviewNote(task: TimelineTaskInfo): void {
    const note = this.$('.review-note');
    const phase = task.lifecycle.phase;
    const applied = phase === 'applied' || phase === 'partly_applied';
    const text = applied
      ? `${phase === 'partly_applied' ? `Partly applied (${task.lifecycle.label})` : 'Applied to your workspace'}${task.worktreeGone ? '; the task\'s worktree has been removed.' : '.'}`
      : phase === 'discarded' ? 'Discarded: the task\'s worktree and its changes are gone.'
      : phase === 'closed' ? 'The task\'s worktree was removed: it held nothing left to apply.' : '';
    note.hidden = !text;
    note.querySelector('.codicon')!.className = `codicon codicon-${applied ? 'check-all' : 'trash'}`;
    this.$('.review-note-text').textContent = text;
  }

  private renderProgress(): void {
    const p = this.status?.progress;
    const progress = this.$('.progress');
    progress.hidden = !p || (!this.running && p.pct === undefined);
    if (!p) return;
    const pct = this.task && !this.running && this.task.status === 'succeeded' ? 100 : p.pct;
    const track = this.$('.progress-track');
    track.classList.toggle('indeterminate', pct === undefined);
    this.$('.progress-fill').style.width = pct === undefined ? '30%' : `${pct}%`;
    if (pct !== undefined) track.setAttribute('aria-valuenow', String(Math.round(pct)));
    this.$('.progress-text').textContent = pct === undefined ? p.message : `${Math.round(pct)}% ${p.message}`;
  }

  private renderReport(task: TimelineTaskInfo): void {
    const section = this.$('.report');
    const report = task.report;
    section.hidden = !report;
    if (!report) return;
    section.replaceChildren();
    const tone = report.status === 'success' ? 'ok' : report.status === 'partial' ? 'warn' : 'bad';
    const head = el('div', 'report-head');
    head.append(el('span', `badge tone-${tone}`, report.status), el('strong', 'report-summary', report.summary));
    section.append(head);
    if (report.details) section.append(el('p', 'report-details', report.details));
    if (report.findings.length) {
      section.append(el('h2', '', `Findings (${report.findings.length})`));
      const list = el('ul', 'findings');
      for (const f of report.findings) {
        const li = el('li', `sev-${/^[a-z]+$/.test(f.severity) ? f.severity : 'info'}`);
        li.append(el('span', 'badge', f.severity), el('span', 'finding-title', ` ${f.title}`));
        if (f.file) li.append(el('span', 'finding-where', ` ${f.file}${f.line ? `:${f.line}` : ''}`));
        if (f.detail) li.append(el('div', 'finding-detail', f.detail));
        list.append(li);
      }
      section.append(list);
    }
    // The agent wrote its next steps before anyone decided: one about applying its work reads wrong once the work was
    // applied or discarded ("Review the diff, then apply it"), so only those still open are listed.
    const steps = report.next_steps.filter((s) => agentStepStillOpen(s, task.actions));
    if (steps.length) {
      section.append(el('h2', '', 'Next steps'));
      const list = el('ol', 'next-steps');
      for (const s of steps) list.append(this.nextStep(s, task));
      section.append(list);
    }
    if (task.files?.length) section.append(this.filesList(task.files, !task.worktreeGone));
    const usage = task.usage;
    const facts = [
      task.reportSource ? `report: ${task.reportSource}` : '',
      usage?.input_tokens ? `input ${usage.input_tokens.toLocaleString()} tokens` : '',
      usage?.output_tokens ? `output ${usage.output_tokens.toLocaleString()} tokens` : '',
      usage?.cost_usd ? `cost $${usage.cost_usd.toFixed(4)}` : '',
      usage?.duration_ms ? `agent time ${formatDuration(usage.duration_ms)}` : '',
    ].filter(Boolean);
    if (facts.length) section.append(el('div', 'report-usage', facts.join(' · ')));
  }

  /**
   * One next step of the report. An agent writes for a terminal ("apply it (caesar apply <id>)"), but `caesar` may not
   * be on the PATH and the button is right here: a `caesar apply|discard|diff <this task>` in the text becomes the
   * header's button for it, when that action is still open.
   */
  private nextStep(text: string, task: TimelineTaskInfo): HTMLElement {
    const li = el('li', '');
    const match = CLI_STEP.exec(text);
    const action = match && match[2] === task.id ? CLI_ACTIONS[match[1]!] : undefined;
    if (!match || !action || !this.offers(action, task)) {
      li.textContent = text;
      return li;
    }
    const button = el('button', 'step-action', task.buttons.find((b) => b.action === action)!.label) as HTMLButtonElement;
    button.type = 'button';
    button.dataset.action = action;
    button.addEventListener('click', () => this.post({ type: 'action', action }));
    // The parentheses around the command go with it: "apply it (caesar apply x)." reads "apply it [Apply]."
    const before = text.slice(0, match.index).replace(/\s*\($/, ' ');
    const after = text.slice(match.index + match[0].length).replace(/^\)/, '');
    li.append(document.createTextNode(before), button, document.createTextNode(after));
    return li;
  }

  /** Whether the header offers `action` for the task now (its lifecycle's actions). */
  private offers(action: TimelineAction, task: TimelineTaskInfo): boolean {
    return task.buttons.some((b) => b.action === action);
  }

  private filesList(files: NonNullable<TimelineTaskInfo['files']>, openable: boolean): DocumentFragment {
    const fragment = document.createDocumentFragment();
    fragment.append(el('h2', '', `Files changed (${files.length})`));
    const list = el('ul', 'files');
    for (const f of files) {
      const li = el('li', '');
      // A discarded task's files are named, not offered: there is no version of theirs left to open.
      const link = openable ? (el('a', 'file-link', f.path) as HTMLAnchorElement) : el('span', 'file-gone', f.path);
      if (link instanceof HTMLAnchorElement) {
        link.href = '#';
        link.addEventListener('click', (ev) => {
          ev.preventDefault();
          this.post({ type: 'openFile', path: f.path });
        });
      }
      li.append(el('span', `codicon codicon-${fileActionIcon(f.action)}`), link, el('span', 'counts', f.binary ? ' binary' : ` +${f.additions} −${f.deletions}`));
      list.append(li);
    }
    fragment.append(list);
    return fragment;
  }
}

// The timeline's header: the task's summary line, its actions (review, apply, discard), the agent's progress, the
// error and bad-line notes, and the final report. Agent text goes in with textContent only.
import { fileActionIcon, formatDuration, formatUsage } from '../../src/common/format';
import type { TimelineAction, TimelineStatus, TimelineTaskInfo, WebviewToHost } from '../../src/extension/timeline/messages';

export const HEADER_HTML = `
<header class="head">
  <div class="title-row"><span class="status-icon codicon"></span><h1 class="objective"></h1></div>
  <div class="meta"></div>
  <div class="actions" hidden><button type="button" data-action="reviewAll">Review All Changes</button><button type="button" data-action="apply">Apply</button><button type="button" data-action="applySelected">Apply Selected Files…</button><button type="button" data-action="discard">Discard</button></div>
  <div class="progress" hidden><div class="progress-track" role="progressbar" aria-valuemin="0" aria-valuemax="100"><div class="progress-fill"></div></div><span class="progress-text"></span></div>
  <div class="bad-lines" hidden><span class="codicon codicon-warning"></span> <span class="bad-lines-text"></span></div>
  <div class="task-error" hidden><span class="codicon codicon-error"></span> <span class="task-error-text"></span></div>
</header>
<section class="report" hidden aria-label="Final report"></section>`;

const ACTIONS: readonly TimelineAction[] = ['reviewAll', 'apply', 'applySelected', 'discard'];
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
    for (const selector of ['.actions', '.progress', '.bad-lines', '.task-error', '.report']) this.$(selector).hidden = true;
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
    this.$('.meta').textContent = [task.agent, task.status.replace('_', ' '), task.phase && task.status === 'pending' ? task.phase : '', formatDuration(end - start), usageText, task.id]
      .filter(Boolean).join(' · ');
    // Review / Apply / Discard run the extension's commands; offered once the task is over and changed files.
    this.$('.actions').hidden = this.running || !task.files?.length;
    this.$('.task-error').hidden = !task.error;
    this.$('.task-error-text').textContent = task.error ?? '';
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
    if (report.next_steps.length) {
      section.append(el('h2', '', 'Next steps'));
      const list = el('ol', 'next-steps');
      for (const s of report.next_steps) list.append(el('li', '', s));
      section.append(list);
    }
    if (task.files?.length) section.append(this.filesList(task.files));
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

  private filesList(files: NonNullable<TimelineTaskInfo['files']>): DocumentFragment {
    const fragment = document.createDocumentFragment();
    fragment.append(el('h2', '', `Files changed (${files.length})`));
    const list = el('ul', 'files');
    for (const f of files) {
      const li = el('li', '');
      const link = el('a', 'file-link', f.path) as HTMLAnchorElement;
      link.href = '#';
      link.addEventListener('click', (ev) => {
        ev.preventDefault();
        this.post({ type: 'openFile', path: f.path });
      });
      li.append(el('span', `codicon codicon-${fileActionIcon(f.action)}`), link, el('span', 'counts', f.binary ? ' binary' : ` +${f.additions} −${f.deletions}`));
      list.append(li);
    }
    fragment.append(list);
    return fragment;
  }
}

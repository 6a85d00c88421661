// The timeline webview: a virtualized list of a task's events. Only the rows in view exist in the DOM, so a
// 100k-event task costs one array of small row records plus a screenful of elements. Every string that came from an
// agent is put in the page with textContent, never as markup.
import '@vscode/codicons/dist/codicon.css';
import './timeline.css';
import { fileActionIcon, formatDuration, formatUsage } from '../../src/common/format';
import type { HostToWebview, TimelineEvents, TimelineStats, TimelineTaskInfo, WebviewToHost } from '../../src/extension/timeline/messages';
import { TimelineRows } from './rows';

interface VsCodeApi {
  postMessage(message: WebviewToHost): void;
  setState(state: unknown): void;
}
declare function acquireVsCodeApi(): VsCodeApi;

const vscode = acquireVsCodeApi();
const ROW_HEIGHT = 22;
const OVERSCAN = 8;

const state = {
  taskId: document.body.dataset.taskId ?? '',
  task: undefined as TimelineTaskInfo | undefined,
  model: new TimelineRows(),
  get rows() {
    return this.model.rows;
  },
  caughtUp: false,
  selected: -1,
  stickToBottom: true,
  badLines: 0,
};

vscode.setState({ taskId: state.taskId });

// ---- DOM skeleton (static markup only; dynamic text goes through textContent) ----
const app = document.getElementById('app')!;
app.innerHTML = `
<header class="head">
  <div class="title-row"><span class="status-icon codicon"></span><h1 class="objective"></h1></div>
  <div class="meta"></div>
  <div class="actions" hidden><button type="button" data-action="reviewAll">Review All Changes</button><button type="button" data-action="apply">Apply</button><button type="button" data-action="applySelected">Apply Selected Files…</button><button type="button" data-action="discard">Discard</button></div>
  <div class="progress" hidden><div class="progress-track" role="progressbar" aria-valuemin="0" aria-valuemax="100"><div class="progress-fill"></div></div><span class="progress-text"></span></div>
  <div class="bad-lines" hidden><span class="codicon codicon-warning"></span> <span class="bad-lines-text"></span></div>
  <div class="task-error" hidden><span class="codicon codicon-error"></span> <span class="task-error-text"></span></div>
</header>
<section class="report" hidden aria-label="Final report"></section>
<div class="list" tabindex="0" role="listbox" aria-label="Events (arrow keys to move, Enter to open)"><div class="spacer"></div></div>
<div class="detail" role="region" aria-live="polite" aria-label="Selected event"></div>
<footer class="foot"><span class="count"></span><span class="hint">↑↓ PgUp PgDn Home End · Enter opens files</span></footer>`;

const $ = <T extends HTMLElement>(selector: string) => app.querySelector<T>(selector)!;
const els = {
  statusIcon: $('.status-icon'),
  objective: $('.objective'),
  meta: $('.meta'),
  actions: $('.actions'),
  progress: $('.progress'),
  progressTrack: $('.progress-track'),
  progressFill: $('.progress-fill'),
  progressText: $('.progress-text'),
  badLines: $('.bad-lines'),
  badLinesText: $('.bad-lines-text'),
  taskError: $('.task-error'),
  taskErrorText: $('.task-error-text'),
  report: $('.report'),
  list: $('.list'),
  spacer: $('.spacer'),
  detail: $('.detail'),
  count: $('.count'),
};

// ---- events → rows ----
function time(at: string): string {
  const d = new Date(at);
  return Number.isNaN(d.getTime()) ? '' : d.toLocaleTimeString([], { hour12: false });
}

// ---- virtualized rendering ----
const pool: HTMLDivElement[] = [];
let renderedCount = 0;
let renderQueued = false;

function makeRowElement(): HTMLDivElement {
  const el = document.createElement('div');
  el.className = 'row';
  el.setAttribute('role', 'option');
  for (const cls of ['time', 'codicon icon', 'label', 'dur']) {
    const span = document.createElement('span');
    span.className = cls;
    el.appendChild(span);
  }
  el.addEventListener('click', () => select(Number(el.dataset.index), false));
  el.addEventListener('dblclick', () => activate(Number(el.dataset.index)));
  return el;
}

function render(): void {
  renderQueued = false;
  const total = state.rows.length;
  els.spacer.style.height = `${total * ROW_HEIGHT}px`;
  const viewHeight = els.list.clientHeight || 400;
  const first = Math.max(0, Math.floor(els.list.scrollTop / ROW_HEIGHT) - OVERSCAN);
  const last = Math.min(total, Math.ceil((els.list.scrollTop + viewHeight) / ROW_HEIGHT) + OVERSCAN);
  const needed = last - first;
  while (pool.length < needed) els.spacer.appendChild((pool[pool.length] = makeRowElement()));
  for (let i = 0; i < pool.length; i++) {
    const el = pool[i]!;
    const index = first + i;
    const row = i < needed ? state.rows[index] : undefined;
    if (!row) {
      el.hidden = true;
      continue;
    }
    el.hidden = false;
    el.dataset.index = String(index);
    el.id = `row-${index}`;
    el.style.transform = `translateY(${index * ROW_HEIGHT}px)`;
    el.className = `row tone-${row.tone || 'plain'} type-${row.type}${index === state.selected ? ' selected' : ''}`;
    el.setAttribute('aria-selected', String(index === state.selected));
    const [timeEl, iconEl, labelEl, durEl] = el.children as unknown as HTMLElement[];
    timeEl!.textContent = time(row.at);
    iconEl!.className = `codicon icon codicon-${row.icon}${row.running ? ' codicon-modifier-spin' : ''}`;
    labelEl!.textContent = row.label;
    durEl!.textContent = row.running ? 'running' : (row.duration ?? '');
  }
  renderedCount = Math.min(needed, total);
  els.count.textContent = `${state.model.received.toLocaleString()} events · ${total.toLocaleString()} rows${state.caughtUp ? '' : ' · loading…'}`;
  scheduleStats();
}

function queueRender(): void {
  if (renderQueued) return;
  renderQueued = true;
  requestAnimationFrame(render);
}

function atBottom(): boolean {
  return els.list.scrollTop + els.list.clientHeight >= els.list.scrollHeight - ROW_HEIGHT * 2;
}

els.list.addEventListener('scroll', () => {
  state.stickToBottom = atBottom();
  queueRender();
});
new ResizeObserver(() => queueRender()).observe(els.list);

// ---- selection and keyboard ----
function select(index: number, scroll = true): void {
  if (!state.rows.length) return;
  state.selected = Math.max(0, Math.min(state.rows.length - 1, index));
  const row = state.rows[state.selected]!;
  els.detail.textContent = `#${row.seq} ${time(row.at)}  ${row.detail}${row.duration ? `\n(${row.duration})` : ''}`;
  els.list.setAttribute('aria-activedescendant', `row-${state.selected}`);
  if (scroll) {
    const top = state.selected * ROW_HEIGHT;
    if (top < els.list.scrollTop) els.list.scrollTop = top;
    else if (top + ROW_HEIGHT > els.list.scrollTop + els.list.clientHeight) els.list.scrollTop = top + ROW_HEIGHT - els.list.clientHeight;
  }
  state.stickToBottom = state.selected === state.rows.length - 1;
  queueRender();
}

function activate(index: number): void {
  const row = state.rows[index];
  if (row?.filePath) vscode.postMessage({ type: 'openFile', path: row.filePath });
}

els.list.addEventListener('keydown', (ev) => {
  const page = Math.max(1, Math.floor(els.list.clientHeight / ROW_HEIGHT) - 1);
  const current = state.selected < 0 ? Math.floor(els.list.scrollTop / ROW_HEIGHT) : state.selected;
  const moves: Record<string, number> = { ArrowDown: current + 1, ArrowUp: current - 1, PageDown: current + page, PageUp: current - page, Home: 0, End: state.rows.length - 1 };
  if (ev.key in moves) {
    ev.preventDefault();
    select(moves[ev.key]!);
  } else if (ev.key === 'Enter' && state.selected >= 0) {
    ev.preventDefault();
    activate(state.selected);
  }
});

// ---- header and report ----
els.actions.addEventListener('click', (e) => {
  const action = (e.target as HTMLElement).closest<HTMLElement>('button[data-action]')?.dataset.action;
  if (action === 'reviewAll' || action === 'apply' || action === 'applySelected' || action === 'discard') vscode.postMessage({ type: 'action', action });
});
const STATUS_ICON: Record<string, [string, string]> = {
  pending: ['clock', 'warn'], running: ['loading', 'info'], succeeded: ['pass', 'ok'], failed: ['error', 'bad'],
  cancelled: ['circle-slash', 'dim'], timed_out: ['watch', 'warn'], lost: ['debug-disconnect', 'warn'],
};

function renderHeader(): void {
  const task = state.task;
  if (!task) return;
  const [icon, tone] = STATUS_ICON[task.status] ?? ['circle', ''];
  els.statusIcon.className = `status-icon codicon codicon-${icon} tone-${tone}${task.status === 'running' ? ' codicon-modifier-spin' : ''}`;
  els.statusIcon.title = task.status;
  els.objective.textContent = task.objective;
  const start = Date.parse(task.startedAt ?? task.createdAt);
  const end = task.endedAt ? Date.parse(task.endedAt) : Date.now();
  // Read as the tree reads it (zeros mean "not reported": the demo agent reports zeros).
  const usageText = formatUsage(task.usage, 'brief') ?? '';
  els.meta.textContent = [task.agent, task.status.replace('_', ' '), task.phase && task.status === 'pending' ? task.phase : '', formatDuration(end - start), usageText, task.id]
    .filter(Boolean).join(' · ');
  // Review / Apply / Discard run the extension's commands; offered once the task is over and changed files.
  els.actions.hidden = task.status === 'running' || task.status === 'pending' || !task.files?.length;
  els.taskError.hidden = !task.error;
  els.taskErrorText.textContent = task.error ?? '';
  renderProgress();
  renderReport(task);
}

function renderProgress(): void {
  const running = state.task?.status === 'running' || state.task?.status === 'pending';
  const view = state.model.taskView;
  const p = view.lastProgress === undefined ? undefined : { message: view.lastProgress, pct: view.lastProgressPct };
  els.progress.hidden = !p || (!running && p.pct === undefined);
  if (!p) return;
  const pct = state.task && !running && state.task.status === 'succeeded' ? 100 : p.pct;
  els.progressTrack.classList.toggle('indeterminate', pct === undefined);
  els.progressFill.style.width = pct === undefined ? '30%' : `${pct}%`;
  if (pct !== undefined) els.progressTrack.setAttribute('aria-valuenow', String(Math.round(pct)));
  els.progressText.textContent = pct === undefined ? p.message : `${Math.round(pct)}% ${p.message}`;
}

function el(tag: string, className: string, text?: string): HTMLElement {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

function renderReport(task: TimelineTaskInfo): void {
  const report = task.report;
  els.report.hidden = !report;
  if (!report) return;
  els.report.replaceChildren();
  const tone = report.status === 'success' ? 'ok' : report.status === 'partial' ? 'warn' : 'bad';
  const head = el('div', 'report-head');
  head.append(el('span', `badge tone-${tone}`, report.status), el('strong', 'report-summary', report.summary));
  els.report.append(head);
  if (report.details) els.report.append(el('p', 'report-details', report.details));
  if (report.findings.length) {
    els.report.append(el('h2', '', `Findings (${report.findings.length})`));
    const list = el('ul', 'findings');
    for (const f of report.findings) {
      const li = el('li', `sev-${f.severity}`);
      li.append(el('span', 'badge', f.severity), el('span', 'finding-title', ` ${f.title}`));
      if (f.file) li.append(el('span', 'finding-where', ` ${f.file}${f.line ? `:${f.line}` : ''}`));
      if (f.detail) li.append(el('div', 'finding-detail', f.detail));
      list.append(li);
    }
    els.report.append(list);
  }
  if (report.next_steps.length) {
    els.report.append(el('h2', '', 'Next steps'));
    const list = el('ol', 'next-steps');
    for (const s of report.next_steps) list.append(el('li', '', s));
    els.report.append(list);
  }
  if (task.files?.length) {
    els.report.append(el('h2', '', `Files changed (${task.files.length})`));
    const list = el('ul', 'files');
    for (const f of task.files) {
      const li = el('li', '');
      const link = el('a', 'file-link', f.path) as HTMLAnchorElement;
      link.href = '#';
      link.addEventListener('click', (ev) => {
        ev.preventDefault();
        vscode.postMessage({ type: 'openFile', path: f.path });
      });
      li.append(el('span', `codicon codicon-${fileActionIcon(f.action)}`), link, el('span', 'counts', f.binary ? ' binary' : ` +${f.additions} −${f.deletions}`));
      list.append(li);
    }
    els.report.append(list);
  }
  const usage = task.usage;
  const facts = [
    task.reportSource ? `report: ${task.reportSource}` : '',
    usage?.input_tokens ? `input ${usage.input_tokens.toLocaleString()} tokens` : '',
    usage?.output_tokens ? `output ${usage.output_tokens.toLocaleString()} tokens` : '',
    usage?.cost_usd ? `cost $${usage.cost_usd.toFixed(4)}` : '',
    usage?.duration_ms ? `agent time ${formatDuration(usage.duration_ms)}` : '',
  ].filter(Boolean);
  if (facts.length) els.report.append(el('div', 'report-usage', facts.join(' · ')));
}

// A clock for the elapsed time of a running task (rendering only; the data comes from the host).
setInterval(() => {
  if (state.task?.status === 'running' || state.task?.status === 'pending') renderHeader();
}, 1000);

// ---- stats for the host (tests and measurements) ----
let statsTimer: number | undefined;
function scheduleStats(): void {
  if (statsTimer !== undefined) return;
  statsTimer = window.setTimeout(() => {
    statsTimer = undefined;
    const stats: TimelineStats = {
      received: state.model.received,
      rows: state.rows.length,
      rendered: renderedCount,
      lastSeq: state.model.lastSeq,
      caughtUp: state.caughtUp,
      recentLabels: state.rows.slice(-200).map((r) => r.label),
    };
    vscode.postMessage({ type: 'stats', stats });
  }, 30);
}

// ---- messages from the host ----
const decoder = new TextDecoder();
function decodeEvents(data: Uint8Array): TimelineEvents {
  // The host validated every event (the store parses them against the protocol schema) before encoding them.
  const events = JSON.parse(decoder.decode(data)) as unknown;
  return Array.isArray(events) ? (events as TimelineEvents) : [];
}

window.addEventListener('message', (ev: MessageEvent<HostToWebview>) => {
  const message = ev.data;
  switch (message.type) {
    case 'task':
      state.task = message.task;
      renderHeader();
      app.setAttribute('aria-busy', String(!state.caughtUp));
      break;
    case 'events': {
      const follow = state.stickToBottom;
      state.model.add(decodeEvents(message.data));
      renderProgress();
      queueRender();
      if (follow) requestAnimationFrame(() => (els.list.scrollTop = els.list.scrollHeight));
      scheduleStats(); // also when hidden (no animation frames): the host still learns what arrived
      break;
    }
    case 'caughtUp':
      state.caughtUp = true;
      app.setAttribute('aria-busy', 'false');
      queueRender();
      if (state.stickToBottom) requestAnimationFrame(() => (els.list.scrollTop = els.list.scrollHeight));
      scheduleStats();
      break;
    case 'badLines':
      state.badLines = message.count;
      els.badLines.hidden = false;
      els.badLinesText.textContent = `${message.count} line(s) of events.jsonl could not be read (see the Caesar log)`;
      break;
  }
});

vscode.postMessage({ type: 'ready' });
els.list.focus();

// The timeline webview: a virtualized list of a task's events. Only the rows in view exist in the DOM, so a
// 100k-event task costs one array of small row records plus a screenful of elements. Every string that came from an
// agent is put in the page with textContent, never as markup.
import '@vscode/codicons/dist/codicon.css';
import './timeline.css';
import type { HostToWebview, TimelineEvents, TimelineStats, TimelineTaskInfo, WebviewToHost, WireEvent } from '../../src/extension/timeline/messages';

type ProtocolEvent = WireEvent;

interface VsCodeApi {
  postMessage(message: WebviewToHost): void;
  setState(state: unknown): void;
}
declare function acquireVsCodeApi(): VsCodeApi;

const vscode = acquireVsCodeApi();
const ROW_HEIGHT = 22;
const OVERSCAN = 8;

interface Row {
  seq: number;
  at: string;
  type: ProtocolEvent['type'];
  icon: string;
  tone: '' | 'ok' | 'bad' | 'warn' | 'dim' | 'info';
  label: string;
  /** The full text shown in the detail pane when the row is selected. */
  detail: string;
  duration?: string;
  /** When the tool really started, if the agent reported it only at its end (opencode): durations count from here. */
  startedAt?: string;
  running?: boolean;
  filePath?: string;
}

const state = {
  taskId: document.body.dataset.taskId ?? '',
  task: undefined as TimelineTaskInfo | undefined,
  rows: [] as Row[],
  received: 0,
  lastSeq: -1,
  caughtUp: false,
  selected: -1,
  stickToBottom: true,
  badLines: 0,
  progress: undefined as { message: string; pct?: number } | undefined,
  openTools: new Map<string, number>(),
};

vscode.setState({ taskId: state.taskId });

// ---- DOM skeleton (static markup only; dynamic text goes through textContent) ----
const app = document.getElementById('app')!;
app.innerHTML = `
<header class="head">
  <div class="title-row"><span class="status-icon codicon"></span><h1 class="objective"></h1></div>
  <div class="meta"></div>
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

function formatDuration(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) return '';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const s = ms / 1000;
  if (s < 60) return `${s.toFixed(1)} s`;
  const m = Math.floor(s / 60);
  return m < 60 ? `${m}m ${String(Math.floor(s % 60)).padStart(2, '0')}s` : `${Math.floor(m / 60)}h ${String(m % 60).padStart(2, '0')}m`;
}

function firstLine(text: string): string {
  const line = text.split(/\r?\n/, 1)[0] ?? '';
  return line.length > 400 ? `${line.slice(0, 399)}…` : line;
}

const FILE_ICONS: Record<string, string> = { created: 'diff-added', modified: 'diff-modified', deleted: 'diff-removed', renamed: 'diff-renamed' };

function addEvent(e: ProtocolEvent): void {
  state.received++;
  if (e.seq <= state.lastSeq) return; // the host restarted the stream: already shown
  state.lastSeq = e.seq;
  const base = { seq: e.seq, at: e.at, type: e.type };
  switch (e.type) {
    case 'started':
      state.rows.push({ ...base, icon: 'play', tone: 'info', label: `Started ${e.agent}`, detail: e.command ? `${e.agent}: ${e.command}` : e.agent });
      break;
    case 'thinking':
      state.rows.push({ ...base, icon: 'lightbulb', tone: 'dim', label: firstLine(e.text), detail: e.text });
      break;
    case 'message':
      state.rows.push({ ...base, icon: 'comment', tone: '', label: firstLine(e.text), detail: e.text });
      break;
    case 'tool_use':
      addTool(e, base);
      break;
    case 'file_changed':
      state.rows.push({ ...base, icon: FILE_ICONS[e.action] ?? 'diff', tone: 'info', label: `${e.action} ${e.path}`, detail: `${e.action}: ${e.path}`, filePath: e.path });
      break;
    case 'progress':
      state.progress = { message: e.message, pct: e.pct };
      state.rows.push({ ...base, icon: 'pulse', tone: 'dim', label: e.pct !== undefined ? `${e.message} (${Math.round(e.pct)}%)` : e.message, detail: e.message });
      break;
    case 'question':
      state.rows.push({
        ...base, icon: 'question', tone: 'warn', label: e.question,
        detail: e.options.length ? `${e.question}\n\nOptions: ${e.options.join(' | ')}` : e.question,
      });
      break;
    case 'answer':
      state.rows.push({ ...base, icon: 'reply', tone: 'ok', label: `Answer: ${firstLine(e.answer)}`, detail: `Answer to ${e.id}: ${e.answer}` });
      break;
    case 'error':
      state.rows.push({ ...base, icon: e.fatal ? 'error' : 'warning', tone: e.fatal ? 'bad' : 'warn', label: firstLine(e.message), detail: e.message });
      break;
    case 'finished': {
      for (const index of state.openTools.values()) closeTool(index, 'failed', e.at);
      state.openTools.clear();
      const ok = e.status === 'success';
      state.rows.push({
        ...base, icon: ok ? 'pass' : e.status === 'partial' ? 'warning' : 'error', tone: ok ? 'ok' : e.status === 'partial' ? 'warn' : 'bad',
        label: `Finished: ${e.status}${e.summary ? ` — ${firstLine(e.summary)}` : ''}`, detail: e.summary || e.status,
      });
      break;
    }
  }
}

function addTool(e: Extract<ProtocolEvent, { type: 'tool_use' }>, base: Pick<Row, 'seq' | 'at' | 'type'>): void {
  const label = [e.tool || 'tool', e.input_summary].filter(Boolean).join('  ');
  if (e.status === 'started') {
    state.rows.push({ ...base, icon: 'loading', tone: '', label, detail: `${e.tool}\n${e.input_summary}`, running: true, ...(e.started_at ? { startedAt: e.started_at } : {}) });
    state.openTools.set(e.id ? `id:${e.id}` : `tool:${e.tool}`, state.rows.length - 1);
    return;
  }
  const key = e.id ? `id:${e.id}` : `tool:${e.tool}`;
  let index = state.openTools.get(key);
  if (index === undefined && !e.id && !e.tool) {
    // An end that names neither id nor tool closes the latest open call.
    const all = [...state.openTools.entries()];
    const last = all[all.length - 1];
    if (last) index = last[1];
    if (last) state.openTools.delete(last[0]);
  } else if (index !== undefined) state.openTools.delete(key);
  if (index !== undefined) {
    closeTool(index, e.status, e.at);
    return;
  }
  state.rows.push({
    ...base, icon: e.status === 'failed' ? 'error' : 'tools', tone: e.status === 'failed' ? 'bad' : '', label,
    detail: `${e.tool}\n${e.input_summary}`,
  });
}

function closeTool(index: number, status: 'succeeded' | 'failed', endAt: string): void {
  const row = state.rows[index];
  if (!row || !row.running) return;
  row.running = false;
  row.icon = status === 'failed' ? 'error' : 'tools';
  row.tone = status === 'failed' ? 'bad' : '';
  row.duration = formatDuration(Date.parse(endAt) - Date.parse(row.startedAt ?? row.at));
  if (status === 'failed') row.detail += '\n(failed)';
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
  els.count.textContent = `${state.received.toLocaleString()} events · ${total.toLocaleString()} rows${state.caughtUp ? '' : ' · loading…'}`;
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
  const usage = task.usage;
  const tokens = (usage?.input_tokens ?? 0) + (usage?.output_tokens ?? 0);
  // Zeros mean "not reported" for most agents (the demo agent reports zeros): only real figures are shown.
  const usageText = [tokens ? `${tokens.toLocaleString()} tokens` : '', usage?.cost_usd ? `$${usage.cost_usd.toFixed(3)}` : ''].filter(Boolean).join(' · ');
  els.meta.textContent = [task.agent, task.status.replace('_', ' '), task.phase && task.status === 'pending' ? task.phase : '', formatDuration(end - start), usageText, task.id]
    .filter(Boolean).join(' · ');
  els.taskError.hidden = !task.error;
  els.taskErrorText.textContent = task.error ?? '';
  renderProgress();
  renderReport(task);
}

function renderProgress(): void {
  const running = state.task?.status === 'running' || state.task?.status === 'pending';
  const p = state.progress;
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
      li.append(el('span', `codicon codicon-${FILE_ICONS[f.action] ?? 'diff'}`), link, el('span', 'counts', f.binary ? ' binary' : ` +${f.additions} −${f.deletions}`));
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
      received: state.received,
      rows: state.rows.length,
      rendered: renderedCount,
      lastSeq: state.lastSeq,
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
      for (const e of decodeEvents(message.data)) addEvent(e);
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

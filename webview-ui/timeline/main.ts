// The timeline webview: the header (task summary, actions, report), a search and filter bar, and a virtual list of the
// task's rows. The rows stay in the extension host; this page asks for the window it shows (list.ts), so its memory
// and the channel's traffic do not grow with the event count. This file wires the parts to the host's messages.
import '@vscode/codicons/dist/codicon.css';
import './timeline.css';
import type { HostToWebview, TimelineFilter, TimelineQuery, TimelineRow, WebviewToHost } from '../../src/extension/timeline/messages';
import { HEADER_HTML, Header } from './header';
import { TimelineList } from './list';

interface VsCodeApi {
  postMessage(message: WebviewToHost): void;
  setState(state: unknown): void;
}
declare function acquireVsCodeApi(): VsCodeApi;

const vscode = acquireVsCodeApi();
const post = (message: WebviewToHost) => vscode.postMessage(message);
vscode.setState({ taskId: document.body.dataset.taskId ?? '' });

/** The type filter's choices: value → event types (empty: all). */
const FILTERS: Record<TimelineFilter, TimelineRow['type'][]> = {
  all: [],
  tools: ['tool_use'],
  messages: ['message', 'thinking'],
  files: ['file_changed'],
  problems: ['error', 'question'],
};

// ---- DOM skeleton (static markup only; dynamic text goes through textContent) ----
const app = document.getElementById('app')!;
app.innerHTML = `${HEADER_HTML}
<div class="toolbar"><input class="search" type="search" placeholder="Search events" aria-label="Search events">
<select class="type-filter" aria-label="Show"><option value="all">All events</option><option value="tools">Tool calls</option><option value="messages">Messages</option><option value="files">Files</option><option value="problems">Errors and questions</option></select></div>
<div class="list" tabindex="0" role="listbox" aria-label="Events (arrow keys to move, Enter to open)"><div class="spacer"></div></div>
<div class="detail" role="region" aria-live="polite" aria-label="Selected event"></div>
<footer class="foot"><span class="count"></span><span class="hint">↑↓ PgUp PgDn Home End · Enter opens files</span></footer>`;

const $ = <T extends HTMLElement>(selector: string) => app.querySelector<T>(selector)!;
const header = new Header(app, post);
const shownActions = () => [...app.querySelectorAll<HTMLElement>('.actions button[data-action], .next-steps button[data-action]')]
  .filter((b) => b.offsetParent !== null) // displayed: neither it nor the actions row is hidden
  .map((b) => `${b.closest('.next-steps') ? 'step:' : ''}${b.dataset.action ?? ''}`);
/** The header's review note as the page displays it ('' while hidden): tests wait for it, not for a time. */
const shownReviewNote = () => ($('.review-note').offsetParent !== null ? $('.review-note-text').textContent ?? '' : '');
/** The report's next steps as the page displays them (none while the report is hidden). */
const shownNextSteps = () => [...app.querySelectorAll<HTMLElement>('.next-steps li')].filter((li) => li.offsetParent !== null).map((li) => li.textContent ?? '');
const list = new TimelineList({ list: $('.list'), spacer: $('.spacer'), detail: $('.detail'), count: $('.count') }, post, shownActions, shownReviewNote, shownNextSteps);

// ---- search and filter (answered by the host) ----
const search = $<HTMLInputElement>('.search');
const filter = $<HTMLSelectElement>('.type-filter');
let queryTimer: number | undefined;
function sendQuery(): void {
  const query: TimelineQuery = { text: search.value, types: FILTERS[filter.value as TimelineFilter] ?? [] };
  list.setQuery(query);
}
search.addEventListener('input', () => {
  window.clearTimeout(queryTimer);
  queryTimer = window.setTimeout(sendQuery, 200);
});
filter.addEventListener('change', sendQuery);

// ---- preview: the first thing the user does here keeps the panel (a later "Open Timeline" opens another) ----
// As with VS Code's preview editors, reading does not keep it: a wheel scroll leaves the panel a preview.
let kept = false;
const keep = () => {
  if (kept) return;
  kept = true;
  post({ type: 'keep' });
};
app.addEventListener('pointerdown', keep, { capture: true, passive: true });
// Keys that act on this page (moving in the list, typing a search); not the workbench's own shortcuts (F1, Ctrl+P…),
// which reach this page too while it has the focus.
const PAGE_KEYS = new Set(['ArrowUp', 'ArrowDown', 'PageUp', 'PageDown', 'Home', 'End', 'Enter', 'Backspace', 'Delete']);
app.addEventListener('keydown', (ev) => {
  if (!ev.ctrlKey && !ev.metaKey && !ev.altKey && (ev.key.length === 1 || PAGE_KEYS.has(ev.key))) keep();
}, { capture: true, passive: true });

// ---- messages from the host ----
window.addEventListener('message', (ev: MessageEvent<HostToWebview>) => {
  const message = ev.data;
  switch (message.type) {
    case 'task':
      header.setTask(message.task);
      list.refreshStats();
      break;
    case 'status':
      header.setStatus(message.status);
      list.onStatus(message.status);
      app.setAttribute('aria-busy', String(!message.status.caughtUp));
      break;
    case 'rows':
      header.setStatus(message.status);
      list.onRows(message);
      app.setAttribute('aria-busy', String(!message.status.caughtUp));
      break;
    case 'search':
      search.value = message.text;
      if (message.filter in FILTERS) filter.value = message.filter;
      window.clearTimeout(queryTimer);
      sendQuery();
      break;
    case 'detail':
      list.onDetail(message.index, message.text);
      break;
    case 'retarget':
      // Another task in this page: start over as a fresh page would (the host answers `ready` with the new task).
      document.body.dataset.taskId = message.taskId;
      vscode.setState({ taskId: message.taskId });
      window.clearTimeout(queryTimer);
      search.value = '';
      filter.value = 'all';
      header.reset();
      list.reset();
      post({ type: 'ready' });
      list.start();
      break;
  }
});

post({ type: 'ready' });
list.start();
$('.list').focus();

// The timeline's virtual list in the page: a spacer as tall as all rows, a pool of a screenful of row elements, and
// the window of rows it holds (asked from the host by position; the host keeps the rows). The math lives in
// virtual-list.ts, the look of a row in rows.ts.
import type { HostToWebview, TimelineQuery, TimelineRow, TimelineStatus, WebviewToHost } from '../../src/extension/timeline/messages';
import { applyRowView, makeRowElement, rowView } from './rows';
import {
  ROW_HEIGHT, WINDOW_PAD, isAtBottom, keyMove, pageRows, rowOffset, scrollToReveal, spacerHeight, visibleRange, windowToRequest,
  type Geometry, type RowWindow,
} from './virtual-list';

type RowsMessage = Extract<HostToWebview, { type: 'rows' }>;

export interface ListElements {
  list: HTMLElement;
  spacer: HTMLElement;
  detail: HTMLElement;
  count: HTMLElement;
}

export class TimelineList {
  private generation = 0;
  private total = 0;
  /** The rows held: positions [held.start, held.start + rows.length) of the current query. */
  private held: { start: number; rows: TimelineRow[] } = { start: 0, rows: [] };
  private asked: RowWindow | undefined;
  private askedFollow = false;
  private follow = true;
  private selected = -1;
  private detailFor = -1;
  private status: TimelineStatus | undefined;
  /** The host's status as of the last rows it sent (what the stats report: rows and counts agree). */
  private rowsStatus: TimelineStatus | undefined;
  private readonly pool: HTMLDivElement[] = [];
  private rendered = 0;
  private firstVisible = 0;
  private renderQueued = false;
  private statsTimer: number | undefined;
  /** A search or a type filter is on: the list shows only the rows that match it. */
  private filtered = false;

  constructor(
    private readonly els: ListElements,
    private readonly post: (message: WebviewToHost) => void,
    /** The header's buttons on show (stats only). */
    private readonly shownActions: () => string[] = () => [],
    private readonly shownReviewNote: () => string = () => '',
    private readonly shownNextSteps: () => string[] = () => [],
  ) {
    els.list.addEventListener('scroll', () => {
      // An empty list (a query whose rows are on their way) says nothing about where the user is.
      if (this.total > 0) this.follow = isAtBottom(this.geometry(), els.list.scrollTop);
      // Asked at once, not on the next frame: the host's answer is what a jump waits for.
      this.requestRows(visibleRange(this.geometry(), els.list.scrollTop));
      this.queueRender();
    });
    new ResizeObserver(() => this.queueRender()).observe(els.list);
    els.list.addEventListener('keydown', (ev) => this.onKey(ev));
  }

  private geometry(): Geometry {
    return { total: this.total, viewHeight: this.els.list.clientHeight || 400, rowHeight: ROW_HEIGHT };
  }

  /** Rows a screen shows, plus the pad: what a follow window asks for. */
  private screenCount(): number {
    return Math.ceil(this.geometry().viewHeight / ROW_HEIGHT) + WINDOW_PAD;
  }

  /** (Re)starts the list on a query: empty text and no type is every row. Follows the end unless searching. */
  setQuery(query: TimelineQuery): void {
    this.generation++;
    this.held = { start: 0, rows: [] };
    this.asked = undefined;
    this.selected = -1;
    this.filtered = !!query.text || query.types.length > 0;
    this.follow = !this.filtered;
    this.askedFollow = this.follow;
    if (!this.follow) this.els.list.scrollTop = 0; // results read from the top
    this.post({ type: 'query', generation: this.generation, query, count: this.screenCount(), follow: this.follow });
  }

  /** Asks again for what is shown (the webview was recreated, or the host restarted). */
  start(): void {
    this.askedFollow = false;
    this.asked = undefined;
    this.post({ type: 'window', generation: this.generation, start: this.held.start, count: this.screenCount(), follow: this.follow });
    this.askedFollow = this.follow;
  }

  /** Forgets every row, the selection and the scroll position: the panel shows another task now. */
  reset(): void {
    this.generation = 0;
    this.total = 0;
    this.held = { start: 0, rows: [] };
    this.asked = undefined;
    this.askedFollow = false;
    this.follow = true;
    this.filtered = false;
    this.selected = -1;
    this.detailFor = -1;
    this.status = undefined;
    this.rowsStatus = undefined;
    this.els.detail.textContent = '';
    this.els.count.textContent = '';
    this.els.list.removeAttribute('aria-activedescendant');
    this.els.list.scrollTop = 0;
    this.queueRender();
  }

  onStatus(status: TimelineStatus): void {
    this.status = status;
    this.renderFooter();
    this.scheduleStats();
  }

  onRows(message: RowsMessage): void {
    if (message.generation !== this.generation) return;
    this.total = message.total;
    this.held = { start: message.start, rows: message.rows };
    this.rowsStatus = message.status;
    this.status = message.status;
    if (this.asked && this.asked.start === message.start) this.asked = undefined;
    if (this.follow) this.scrollToEnd();
    this.requestPendingDetail();
    this.queueRender();
    this.scheduleStats(); // also when hidden (no animation frames): the host still learns what arrived
  }

  onDetail(index: number, text: string): void {
    if (this.rowAt(this.selected)?.index === index) this.els.detail.textContent = text;
  }

  private rowAt(position: number): TimelineRow | undefined {
    return this.held.rows[position - this.held.start];
  }

  private scrollToEnd(): void {
    this.els.spacer.style.height = `${spacerHeight(this.geometry())}px`;
    this.els.list.scrollTop = this.els.list.scrollHeight;
  }

  private queueRender(): void {
    if (this.renderQueued) return;
    this.renderQueued = true;
    requestAnimationFrame(() => this.render());
  }

  private render(): void {
    this.renderQueued = false;
    const g = this.geometry();
    const scrollTop = this.els.list.scrollTop;
    this.els.spacer.style.height = `${spacerHeight(g)}px`;
    const range = visibleRange(g, scrollTop);
    this.firstVisible = range.firstInView;
    this.requestRows(range);
    const needed = range.end - range.first;
    while (this.pool.length < needed) {
      const el = makeRowElement(document);
      el.addEventListener('click', () => this.select(Number(el.dataset.index), false));
      el.addEventListener('dblclick', () => this.activate(Number(el.dataset.index)));
      this.els.spacer.appendChild(el);
      this.pool.push(el);
    }
    let rendered = 0;
    for (let i = 0; i < this.pool.length; i++) {
      const el = this.pool[i]!;
      const position = range.first + i;
      if (i >= needed) {
        el.hidden = true;
        continue;
      }
      const row = this.rowAt(position);
      if (row) rendered++;
      applyRowView(el, rowView(row, position === this.selected), position, rowOffset(g, scrollTop, position));
    }
    this.rendered = rendered;
    this.renderFooter();
    this.scheduleStats();
  }

  /** Asks the host for the rows in view when the held window does not cover them. */
  private requestRows(range: { first: number; end: number }): void {
    if (this.follow) {
      if (!this.askedFollow) {
        this.askedFollow = true;
        this.post({ type: 'window', generation: this.generation, start: 0, count: this.screenCount(), follow: true });
      }
      return;
    }
    this.askedFollow = false;
    const held = { start: this.held.start, count: this.held.rows.length };
    const wanted = windowToRequest(range, this.total, held, this.asked);
    if (!wanted) return;
    this.asked = wanted;
    this.post({ type: 'window', generation: this.generation, start: wanted.start, count: wanted.count, follow: false });
  }

  private renderFooter(): void {
    const s = this.status;
    if (!s) return;
    const loading = s.caughtUp ? '' : ` · loading ${s.backlogBytes ? Math.floor((100 * s.indexedBytes) / s.backlogBytes) : 0}%…`;
    const rows = this.filtered ? `${this.total.toLocaleString()} of ${s.rows.toLocaleString()} rows match` : `${s.rows.toLocaleString()} rows`;
    this.els.count.textContent = `${s.events.toLocaleString()} events · ${rows}${loading}`;
  }

  // ---- selection and keyboard ----
  private select(position: number, reveal = true): void {
    if (!this.total) return;
    this.selected = Math.max(0, Math.min(this.total - 1, position));
    this.els.list.setAttribute('aria-activedescendant', `row-${this.selected}`);
    if (reveal) {
      const top = scrollToReveal(this.geometry(), this.els.list.scrollTop, this.selected);
      if (top !== undefined) this.els.list.scrollTop = top;
    }
    this.follow = this.selected === this.total - 1;
    const row = this.rowAt(this.selected);
    this.els.detail.textContent = '';
    this.detailFor = row ? row.index : -1;
    if (row) this.post({ type: 'detail', index: row.index });
    this.queueRender();
  }

  private activate(position: number): void {
    const path = this.rowAt(position)?.filePath;
    if (path) this.post({ type: 'openFile', path });
  }

  private onKey(ev: KeyboardEvent): void {
    const g = this.geometry();
    const current = this.selected < 0 ? this.firstVisible : this.selected;
    const next = keyMove(ev.key, current, pageRows(g), this.total);
    if (next !== undefined) {
      ev.preventDefault();
      this.select(next);
    } else if (ev.key === 'Enter' && this.selected >= 0) {
      ev.preventDefault();
      this.activate(this.selected);
    }
  }

  /** The selected row's detail, once its data arrived (it may have been selected before). */
  private requestPendingDetail(): void {
    const row = this.rowAt(this.selected);
    if (row && row.index !== this.detailFor) {
      this.detailFor = row.index;
      this.post({ type: 'detail', index: row.index });
    }
  }

  // ---- stats for the host (tests and measurements) ----
  /** Something shown outside the list changed (the header): report again. */
  refreshStats(): void {
    this.scheduleStats();
  }

  /** The labels of the row elements the page displays (computed style, not the attribute), top to bottom. */
  private shownLabels(): string[] {
    return this.pool
      .filter((el) => getComputedStyle(el).display !== 'none')
      .sort((a, b) => Number(a.dataset.index) - Number(b.dataset.index))
      .map((el) => el.children[2]?.textContent ?? '');
  }

  private scheduleStats(): void {
    if (this.statsTimer !== undefined) return;
    this.statsTimer = window.setTimeout(() => {
      this.statsTimer = undefined;
      // While following, the counts are those the held rows came with, so that rows and counts always agree.
      const s = this.follow ? this.rowsStatus : (this.status ?? this.rowsStatus);
      this.post({
        type: 'stats',
        stats: {
          received: s?.events ?? 0,
          rows: s?.rows ?? 0,
          rendered: this.rendered,
          lastSeq: s?.lastSeq ?? -1,
          caughtUp: s?.caughtUp ?? false,
          recentLabels: this.held.rows.map((r) => r.label),
          firstVisible: this.firstVisible,
          shownLabels: this.shownLabels(),
          footer: this.els.count.textContent ?? '',
          actions: this.shownActions(),
          reviewNote: this.shownReviewNote(),
          nextSteps: this.shownNextSteps(),
        },
      });
    }, 30);
  }
}

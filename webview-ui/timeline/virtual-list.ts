// The scroll math of the timeline's virtual list, pure (no DOM) so it is unit-tested without an editor. The list holds
// a spacer as tall as all rows and a screenful of row elements; which rows those are, and which window of rows to ask
// the host for, follow from the scroll position alone.
//
// Browsers cap an element's height (~33.5M px in Chromium): past MAX_SPACER_PX the spacer stays that tall and the
// scroll position maps to rows proportionally, so a 10M-row task still scrolls end to end.

export const ROW_HEIGHT = 22;
export const OVERSCAN = 8;
export const MAX_SPACER_PX = 8_000_000;
/** Rows asked for beyond the visible ones on each side, so that small scrolls need no request. */
export const WINDOW_PAD = 60;

export interface Geometry {
  total: number;
  viewHeight: number;
  rowHeight?: number;
}

function rowHeightOf(g: Geometry): number {
  return g.rowHeight ?? ROW_HEIGHT;
}

/** Height of the spacer element. */
export function spacerHeight(g: Geometry): number {
  return Math.min(g.total * rowHeightOf(g), MAX_SPACER_PX);
}

/** How far the list scrolls (spacer px) and how far the rows would (row px); equal below the cap. */
function ranges(g: Geometry): { scroll: number; rows: number } {
  return { scroll: Math.max(0, spacerHeight(g) - g.viewHeight), rows: Math.max(0, g.total * rowHeightOf(g) - g.viewHeight) };
}

/** The row position (in px of rows) shown at the top for a scroll position. */
export function rowsTop(g: Geometry, scrollTop: number): number {
  const { scroll, rows } = ranges(g);
  if (scroll === rows || scroll <= 0) return Math.max(0, Math.min(scrollTop, rows));
  return (Math.max(0, Math.min(scrollTop, scroll)) / scroll) * rows;
}

/** The scroll position that shows row position `top` (in px of rows) at the top: the inverse of rowsTop. */
export function scrollTopForRows(g: Geometry, top: number): number {
  const { scroll, rows } = ranges(g);
  const clamped = Math.max(0, Math.min(top, rows));
  if (scroll === rows || rows <= 0) return clamped;
  return (clamped / rows) * scroll;
}

export interface VisibleRange {
  /** First row to render (overscan included). */
  first: number;
  /** One past the last row to render. */
  end: number;
  /** First and one-past-last row actually in view. */
  firstInView: number;
  endInView: number;
}

export function visibleRange(g: Geometry, scrollTop: number, overscan = OVERSCAN): VisibleRange {
  const h = rowHeightOf(g);
  const top = rowsTop(g, scrollTop);
  const firstInView = Math.min(g.total, Math.floor(top / h));
  const endInView = Math.min(g.total, Math.ceil((top + g.viewHeight) / h));
  return { first: Math.max(0, firstInView - overscan), end: Math.min(g.total, endInView + overscan), firstInView, endInView };
}

/** Where row `index` sits in the spacer (its element's translateY). */
export function rowOffset(g: Geometry, scrollTop: number, index: number): number {
  return scrollTop + index * rowHeightOf(g) - rowsTop(g, scrollTop);
}

/** The scroll position that brings row `index` into view (undefined: it is in view already). */
export function scrollToReveal(g: Geometry, scrollTop: number, index: number): number | undefined {
  const h = rowHeightOf(g);
  const top = rowsTop(g, scrollTop);
  const rowTop = index * h;
  if (rowTop < top) return scrollTopForRows(g, rowTop);
  if (rowTop + h > top + g.viewHeight) return scrollTopForRows(g, rowTop + h - g.viewHeight);
  return undefined;
}

/** The list shows its last row (within `slackRows`): new rows keep it at the end. */
export function isAtBottom(g: Geometry, scrollTop: number, slackRows = 2): boolean {
  const { scroll } = ranges(g);
  return scrollTop >= scroll - slackRows * rowHeightOf(g);
}

/** Rows per page for PageUp/PageDown. */
export function pageRows(g: Geometry): number {
  return Math.max(1, Math.floor(g.viewHeight / rowHeightOf(g)) - 1);
}

export interface RowWindow {
  start: number;
  count: number;
}

/**
 * The window to ask the host for so that rows [first, end) can be shown, or undefined when `held` (the rows the
 * webview has) or `asked` (a request on its way) covers them already.
 */
export function windowToRequest(range: { first: number; end: number }, total: number, held?: RowWindow, asked?: RowWindow, pad = WINDOW_PAD): RowWindow | undefined {
  const end = Math.min(range.end, total);
  if (end <= range.first) return undefined;
  const covers = (w?: RowWindow) => !!w && w.start <= range.first && w.start + w.count >= end;
  if (covers(held) || covers(asked)) return undefined;
  const start = Math.max(0, range.first - pad);
  return { start, count: Math.min(total, end + pad) - start };
}

/** The selection after a key press, or undefined for keys the list does not handle. */
export function keyMove(key: string, current: number, page: number, total: number): number | undefined {
  const moves: Record<string, number> = { ArrowDown: current + 1, ArrowUp: current - 1, PageDown: current + page, PageUp: current - page, Home: 0, End: total - 1 };
  const next = moves[key];
  return next === undefined ? undefined : Math.max(0, Math.min(total - 1, next));
}

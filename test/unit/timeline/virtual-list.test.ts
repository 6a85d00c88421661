import { strict as assert } from 'node:assert';
import {
  MAX_SPACER_PX, ROW_HEIGHT, isAtBottom, keyMove, pageRows, rowOffset, rowsTop, scrollToReveal, scrollTopForRows, spacerHeight, visibleRange,
  windowToRequest,
} from '../../../webview-ui/timeline/virtual-list';

const view = 440; // 20 rows of 22 px

describe('timeline virtual list math', () => {
  it('below the height cap, a pixel of scroll is a pixel of rows', () => {
    const g = { total: 1000, viewHeight: view };
    assert.equal(spacerHeight(g), 1000 * ROW_HEIGHT);
    assert.equal(rowsTop(g, 2200), 2200);
    const r = visibleRange(g, 2200, 8);
    assert.deepEqual(r, { first: 92, end: 128, firstInView: 100, endInView: 120 });
    assert.equal(rowOffset(g, 2200, 100), 2200, 'row 100 sits at the top of the view');
  });

  it('past the cap (1M rows), the spacer stays under the browser limit and both ends are reachable', () => {
    const g = { total: 1_000_000, viewHeight: view };
    assert.equal(spacerHeight(g), MAX_SPACER_PX);
    const maxScroll = MAX_SPACER_PX - view;
    const bottom = visibleRange(g, maxScroll, 0);
    assert.equal(bottom.endInView, 1_000_000, 'the last row is in view at the bottom');
    assert.equal(bottom.firstInView, 1_000_000 - 20);
    assert.equal(visibleRange(g, 0, 0).firstInView, 0);
    const middle = visibleRange(g, maxScroll / 2, 0);
    assert.ok(Math.abs(middle.firstInView - (1_000_000 - 20) / 2) <= 1, `middle: ${middle.firstInView}`);
    // Rows are laid out from the view's top, so they never leave the spacer.
    const offset = rowOffset(g, maxScroll / 2, middle.firstInView);
    assert.ok(offset <= maxScroll / 2 && offset > maxScroll / 2 - ROW_HEIGHT, `offset ${offset}`);
  });

  it('scrollTopForRows inverts rowsTop, with and without the cap', () => {
    for (const total of [50, 1000, 2_000_000]) {
      const g = { total, viewHeight: view };
      for (const top of [0, 1234, total * ROW_HEIGHT - view]) {
        const expected = Math.max(0, Math.min(top, total * ROW_HEIGHT - view));
        const back = rowsTop(g, scrollTopForRows(g, top));
        assert.ok(Math.abs(back - expected) < 1e-6 * Math.max(1, expected), `total ${total}, top ${top}: ${back}`);
      }
    }
  });

  it('reveals a selected row by scrolling the least', () => {
    const g = { total: 1000, viewHeight: view };
    assert.equal(scrollToReveal(g, 2200, 105), undefined, 'in view: no scroll');
    assert.equal(scrollToReveal(g, 2200, 99), 99 * ROW_HEIGHT, 'above: to its top');
    assert.equal(scrollToReveal(g, 2200, 120), 121 * ROW_HEIGHT - view, 'below: to its bottom');
    const big = { total: 1_000_000, viewHeight: view };
    const to = scrollToReveal(big, 0, 500_000)!;
    const r = visibleRange(big, to, 0);
    assert.ok(r.firstInView <= 500_000 && r.endInView > 500_000, JSON.stringify(r));
  });

  it('knows when the list is at its end (follow mode)', () => {
    const g = { total: 1000, viewHeight: view };
    const end = 1000 * ROW_HEIGHT - view;
    assert.ok(isAtBottom(g, end));
    assert.ok(isAtBottom(g, end - ROW_HEIGHT), 'within the slack');
    assert.ok(!isAtBottom(g, end - 5 * ROW_HEIGHT));
    assert.ok(isAtBottom({ total: 3, viewHeight: view }, 0), 'a list shorter than the view is at its end');
  });

  it('asks for a padded window only when the held or asked rows do not cover the view', () => {
    const range = { first: 100, end: 130 };
    assert.deepEqual(windowToRequest(range, 1000, undefined, undefined, 50), { start: 50, count: 130 });
    assert.equal(windowToRequest(range, 1000, { start: 80, count: 60 }), undefined, 'held covers it');
    assert.equal(windowToRequest(range, 1000, { start: 0, count: 10 }, { start: 90, count: 50 }), undefined, 'on its way');
    assert.deepEqual(windowToRequest({ first: 990, end: 1010 }, 1000, undefined, undefined, 50), { start: 940, count: 60 }, 'clamped at the end');
    assert.equal(windowToRequest({ first: 0, end: 0 }, 0), undefined, 'nothing to show');
  });

  it('moves the selection with the keys, within the rows', () => {
    const page = pageRows({ total: 1000, viewHeight: view });
    assert.equal(page, 19);
    assert.equal(keyMove('ArrowDown', 5, page, 1000), 6);
    assert.equal(keyMove('ArrowUp', 0, page, 1000), 0);
    assert.equal(keyMove('PageDown', 990, page, 1000), 999);
    assert.equal(keyMove('Home', 500, page, 1000), 0);
    assert.equal(keyMove('End', 0, page, 1000), 999);
    assert.equal(keyMove('x', 0, page, 1000), undefined);
  });
});

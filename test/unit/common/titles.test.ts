import { strict as assert } from 'node:assert';
import type { TaskSummary } from '../../../src/engine/store';
import { runNumbers, shortTitle, taskTitle } from '../../../src/common/titles';

const task = (id: string, objective: string, created_at: string) => ({ id, state: { objective, created_at } }) as unknown as TaskSummary;

describe('common/titles: task titles', () => {
  it('a short title: the first line, cut at a word near the limit with an ellipsis', () => {
    assert.equal(shortTitle('Fix it\nwith details below'), 'Fix it');
    const long = 'Rewrite the configuration loader so that every layer reports where each value came from';
    const cut = shortTitle(long);
    assert.ok(cut.length <= 60 && cut.endsWith('…') && long.startsWith(cut.slice(0, -1)), cut);
    assert.doesNotMatch(cut, / …$/);
    assert.equal(shortTitle('x'.repeat(100)).length, 60, 'no space to cut at: cut at the limit');
  });

  it('re-runs of one objective are numbered by creation time; the first and unique ones are not', () => {
    const list = [task('c', 'Tidy', '2026-01-03'), task('a', 'Tidy', '2026-01-01'), task('u', 'Unique', '2026-01-02'), task('b', 'Tidy', '2026-01-02')];
    const numbers = runNumbers(list);
    assert.deepEqual([...numbers].sort(), [['b', 2], ['c', 3]]);
    assert.deepEqual(list.map((t) => taskTitle(t, numbers)), ['Tidy #3', 'Tidy', 'Unique', 'Tidy #2']);
  });
});

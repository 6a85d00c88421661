import { strict as assert } from 'node:assert';
import fc from 'fast-check';
import { distinctPrefixLength, matchTaskIdPrefix } from '../../../src/engine/store/task-id-prefix';

const hexId = fc.stringMatching(/^[0-9a-f]{32}$/).map((hex) => `t_${hex}`);

describe('engine/store: task id prefixes', () => {
  it('an exact id wins over a longer id it begins; one match is that task; several are ambiguous; none is none', () => {
    const ids = ['t_ab', 't_abc1', 't_abd2', 't_ff00'];
    assert.deepEqual(matchTaskIdPrefix(ids, 't_ab'), { kind: 'exact', id: 't_ab' });
    assert.deepEqual(matchTaskIdPrefix(ids, 't_f'), { kind: 'unique', id: 't_ff00' });
    assert.deepEqual(matchTaskIdPrefix(ids, 't_a'), { kind: 'ambiguous', candidates: ['t_ab', 't_abc1', 't_abd2'] });
    assert.deepEqual(matchTaskIdPrefix(ids, 't_9'), { kind: 'none' });
    assert.deepEqual(matchTaskIdPrefix(ids, ''), { kind: 'none' });
  });

  it('every id cut at the distinct prefix length names that id alone (what ps prints is accepted back)', () => {
    // Ids drawn to share long starts, as a crowded root can.
    const crowded = fc.array(fc.tuple(fc.constantFrom('t_0123456789ab', 't_0123', 't_'), hexId).map(([start, id]) => (start + id.slice(2)).slice(0, 34)), {
      minLength: 1,
      maxLength: 40,
    });
    fc.assert(
      fc.property(crowded, (drawn) => {
        const ids = [...new Set(drawn)];
        const length = distinctPrefixLength(ids, 10);
        assert.ok(length >= 10);
        for (const id of ids) {
          const match = matchTaskIdPrefix(ids, id.slice(0, length));
          assert.ok((match.kind === 'unique' || match.kind === 'exact') && match.id === id, `${id} at ${length}: ${JSON.stringify(match)}`);
        }
      }),
    );
  });
});

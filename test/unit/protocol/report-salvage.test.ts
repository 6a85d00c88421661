import { strict as assert } from 'node:assert';
import { briefTextTooLarge, MAX_BRIEF_TEXT_BYTES, salvageReport } from '../../../src/protocol';

describe('protocol: what can be read of an invalid report (issue 23)', () => {
  it('keeps the status and every field that validates alone; names what it leaves out, array elements by index', () => {
    const salvaged = salvageReport({
      protocol: 'caesar.report/v1',
      status: ' FAILED ',
      summary: 'Tests fail.',
      usage: { input_tokens: 1.5 },
      changes: [{ path: 'a.ts', action: 'modified' }, { path: '', action: 'modified' }, { path: 'b.ts', action: 'exploded' }],
      next_steps: ['rerun'],
      findings: 'not an array',
      unknown_field: 1,
    });
    assert.equal(salvaged.status, 'failed');
    assert.equal(salvaged.report?.status, 'failed');
    assert.equal(salvaged.report?.summary, 'Tests fail.');
    assert.deepEqual(salvaged.report?.changes.map((c) => c.path), ['a.ts']);
    assert.deepEqual(salvaged.report?.next_steps, ['rerun']);
    assert.deepEqual(salvaged.report?.findings, []);
    assert.equal(salvaged.report?.usage, undefined);
    assert.deepEqual(salvaged.dropped.sort(), ['changes.1', 'changes.2', 'findings', 'usage']);
  });

  it('a missing summary or protocol does not cost the status; the summary then says so', () => {
    const salvaged = salvageReport({ status: 'blocked' });
    assert.equal(salvaged.report?.status, 'blocked');
    assert.match(salvaged.report?.summary ?? '', /reported "blocked"; its summary could not be read/);
    assert.deepEqual(salvaged.dropped, ['summary', 'protocol']);
  });

  it('a list where a text belongs (details: []) is dropped whole, not kept as an empty list (found by the fuzzer)', () => {
    const salvaged = salvageReport({ protocol: 'caesar.report/v1', status: 'success', summary: 'Did it.', details: [], changes: [{ path: 'src/a.ts', action: 'modified', summary: 'edited' }] });
    assert.equal(salvaged.report?.status, 'success');
    assert.equal(salvaged.report?.details, '');
    assert.deepEqual(salvaged.report?.changes.map((c) => c.path), ['src/a.ts']);
    assert.deepEqual(salvaged.dropped, ['details']);
  });

  for (const doc of [{ status: 'done', summary: 'x' }, { status: 3 }, {}, [], 'failed', null]) {
    it(`no readable status in ${JSON.stringify(doc)}: no report`, () => {
      const salvaged = salvageReport(doc);
      assert.equal(salvaged.report, undefined);
      assert.equal(salvaged.status, undefined);
    });
  }
});

describe('protocol: the limit on a delegation\'s text', () => {
  it('counts the objective and the context together, as JSON text', () => {
    assert.equal(briefTextTooLarge('x'.repeat(MAX_BRIEF_TEXT_BYTES / 2 - 2), 'y'.repeat(MAX_BRIEF_TEXT_BYTES / 2 - 2)), undefined);
    assert.match(briefTextTooLarge('x'.repeat(MAX_BRIEF_TEXT_BYTES / 2), 'y'.repeat(MAX_BRIEF_TEXT_BYTES / 2)) ?? '', /over the 3\.0 MiB limit/);
    // A quote is two characters of JSON: half the limit of them is over it.
    assert.ok(briefTextTooLarge('"'.repeat(MAX_BRIEF_TEXT_BYTES / 2 + 8), ''));
  });
});

import { strict as assert } from 'node:assert';
import { ReportSchema, ResultDocSchema, type Finding, type ResultDoc } from '../../../src/protocol';
import { MAX_LISTED_FILES, MAX_LISTED_FINDINGS, capResultLists } from '../../../src/engine/store/result-caps';
import { reconcileReport } from '../../../src/engine/git/reconcile';

const file = (i: number) => ({ path: `gen/f${i}.txt`, action: 'created' as const, additions: 1, deletions: 0, binary: false });

describe('engine: result.json list caps', () => {
  it('cuts files, changes and findings to their caps, keeps the totals, and never cuts a high finding', () => {
    const agentFindings: Finding[] = Array.from({ length: 1500 }, (_, i) => ({ severity: 'low', title: `note ${i}`, detail: '' }));
    const high: Finding = { severity: 'high', title: 'Write detected during a read-only task', detail: 'git shows changes' };
    const files = Array.from({ length: 5000 }, (_, i) => file(i));
    const result: ResultDoc = {
      report: ReportSchema.parse({ protocol: 'caesar.report/v1', status: 'success', summary: 's', changes: files.map((f) => ({ path: f.path, action: f.action })), findings: [...agentFindings, high] }),
      report_source: 'file',
      changes_verified_by: 'git',
      agent_report_valid: true,
      diff: { files, is_empty: false },
    };
    const capped = ResultDocSchema.parse(JSON.parse(JSON.stringify(capResultLists(result))));
    assert.equal(capped.diff?.files.length, MAX_LISTED_FILES);
    assert.equal(capped.diff?.files_total, 5000);
    assert.equal(capped.report.changes.length, MAX_LISTED_FILES);
    assert.equal(capped.changes_total, 5000);
    assert.equal(capped.report.findings.length, MAX_LISTED_FINDINGS);
    assert.equal(capped.findings_total, 1501);
    assert.deepEqual(capped.report.findings.at(-1), high, 'the high finding, last of 1,501, is kept');
    assert.deepEqual(capped.report.findings[0], agentFindings[0], 'order kept');
    assert.ok(JSON.stringify(capped).length < 512 * 1024);

    const small = { ...result, report: { ...result.report, changes: [], findings: [high] }, diff: { files: files.slice(0, 3), is_empty: false } };
    assert.deepEqual(capResultLists(small), small, 'a short result is left as is, with no totals');
  });

  it('reconciliation writes 100 per-file findings of a kind, then one that counts the rest', () => {
    const report = ReportSchema.parse({ protocol: 'caesar.report/v1', status: 'success', summary: 's', changes: [{ path: 'missing.txt', action: 'created' }] });
    const { report: out } = reconcileReport(report, { files: Array.from({ length: 3000 }, (_, i) => file(i)), is_empty: false }, 'read-only');
    const undeclared = out.findings.filter((f) => f.title === 'Undeclared change');
    assert.equal(undeclared.length, 101);
    assert.equal(undeclared.at(-1)?.detail, "… and 2,900 more files git shows changed that the agent's report does not mention (3,000 in all).");
    assert.equal(out.findings.filter((f) => f.title === 'Change declared but not found in the diff').length, 1);
    const readOnly = out.findings.find((f) => f.severity === 'high');
    assert.match(readOnly?.detail ?? '', /gen\/f19\.txt and 2,980 more\.$/);
  });
});

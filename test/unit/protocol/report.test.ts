import { strict as assert } from 'node:assert';
import { ProtocolError, UnsupportedVersionError, dropNulls, parseReport, readReportText } from '../../../src/protocol';
import { SPEC_REPORT } from './fixtures';

describe('protocol: caesar.report/v1', () => {
  it('accepts a minimal report and fills every default', () => {
    const report = parseReport({ protocol: 'caesar.report/v1', status: 'success', summary: 'ok' });
    assert.deepEqual(report, {
      protocol: 'caesar.report/v1',
      task_id: '',
      status: 'success',
      summary: 'ok',
      details: '',
      changes: [],
      commands_run: [],
      findings: [],
      questions: [],
      next_steps: [],
      artifacts: [],
    });
  });

  it('fills nested defaults', () => {
    const report = parseReport({
      protocol: 'caesar.report/v1',
      status: 'partial',
      summary: 's',
      changes: [{ path: 'a', action: 'created' }],
      commands_run: [{ command: 'ls' }],
      findings: [{ severity: 'low', title: 't' }],
      questions: [{ id: 'q', question: 'why?' }],
      artifacts: [{ path: 'x' }],
    });
    assert.equal(report.changes[0]!.summary, '');
    assert.equal(report.commands_run[0]!.note, '');
    assert.equal(report.commands_run[0]!.exit_code, undefined);
    assert.equal(report.findings[0]!.detail, '');
    assert.deepEqual(report.questions[0]!.options, []);
    assert.equal(report.artifacts[0]!.description, '');
  });

  it('round-trips the spec example', () => {
    const report = parseReport(SPEC_REPORT);
    assert.deepEqual(parseReport(JSON.parse(JSON.stringify(report))), report);
    assert.equal(report.commands_run[0]!.note, '');
    assert.equal(report.usage?.input_tokens, 12000);
  });

  it('drops null keys before validation, recursively, keeping nulls inside arrays', () => {
    assert.deepEqual(dropNulls({ a: null, b: { c: null, d: 1 }, e: [null, { f: null }] }), { b: { d: 1 }, e: [null, {}] });
    const report = parseReport({ ...SPEC_REPORT, usage: null, findings: [{ severity: 'info', title: 't', line: null, file: null }] });
    assert.equal(report.usage, undefined);
    assert.equal(report.findings[0]!.line, undefined);
  });

  for (const [patch, field] of [
    [{ summary: '' }, 'summary'],
    [{ status: 'done' }, 'status'],
    [{ changes: [{ path: 'a', action: 'touched' }] }, 'changes.0.action'],
    [{ findings: [{ severity: 'urgent', title: 't' }] }, 'findings.0.severity'],
    [{ findings: [{ severity: 'low', title: 't', line: 0 }] }, 'findings.0.line'],
    [{ usage: { input_tokens: -1 } }, 'usage.input_tokens'],
    [{ usage: { cost_usd: -0.5 } }, 'usage.cost_usd'],
  ] as const) {
    it(`refuses an invalid ${field}, naming it`, () => {
      assert.throws(() => parseReport({ ...SPEC_REPORT, ...patch }), (err: Error) => err instanceof ProtocolError && err.message.includes(field));
    });
  }

  it('refuses caesar.report/v2 explicitly instead of dropping it', () => {
    assert.throws(
      () => parseReport({ ...SPEC_REPORT, protocol: 'caesar.report/v2' }),
      (err: Error) => err instanceof UnsupportedVersionError && /caesar\.report\/v2/.test(err.message) && /caesar\.report\/v1/.test(err.message),
    );
  });

  it('refuses a document of another kind as an ordinary field error', () => {
    assert.throws(() => parseReport({ ...SPEC_REPORT, protocol: 'caesar.task/v1' }), (err: Error) => err instanceof ProtocolError && err.message.includes('protocol'));
  });

  it('refuses malformed and oversized report text', () => {
    assert.throws(() => readReportText('not json'), /report\.json is not valid JSON/);
    assert.throws(() => readReportText(JSON.stringify({ ...SPEC_REPORT, details: 'x'.repeat(4 * 1024 * 1024 + 1) })), /over the 4\.0 MiB limit/);
  });
});

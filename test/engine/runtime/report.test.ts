import { strict as assert } from 'node:assert';
import { createHash } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { extractReport, resolveReport, synthesize, type ResolveReportInput } from '../../../src/engine/run/report';

const R = (extra: Record<string, unknown> = {}) => ({ protocol: 'caesar.report/v1', status: 'success', summary: 'ok', ...extra });

function paths() {
  const dir = mkdtempSync(path.join(tmpdir(), 'caesar-report-'));
  return { report: path.join(dir, 'report.json'), finalMessage: path.join(dir, 'final-message.txt'), rawLog: path.join(dir, 'raw.log') };
}

function input(p: ReturnType<typeof paths>, over: Partial<ResolveReportInput> = {}): ResolveReportInput {
  return { taskId: 't_1', tier: 'file', channel: false, paths: p, translation: {}, outcome: { exitCode: 0, timedOut: false, cancelled: false }, ...over };
}

describe('engine runtime: report extraction (reference §1.8)', () => {
  it('finds a fenced caesar:report block and a raw object; the last valid one wins', () => {
    const text = [
      'first:', '```json caesar:report', JSON.stringify(R({ summary: 'first' })), '```',
      'then I corrected myself:', JSON.stringify(R({ summary: 'second' })), 'bye',
    ].join('\n');
    assert.equal(extractReport(text)?.summary, 'second');
  });

  it('is not fooled by braces inside strings, nor by protocol coming after a nested object', () => {
    const tricky = `noise { not json } ${JSON.stringify({ details: 'a } brace { and "quote"', usage: { input_tokens: 1 }, summary: 'nested first', status: 'partial', protocol: 'caesar.report/v1' })} trailing }`;
    const report = extractReport(tricky);
    assert.equal(report?.summary, 'nested first');
    assert.equal(report?.details, 'a } brace { and "quote"');
  });

  it('returns nothing for a truncated object, and tolerates nulls', () => {
    assert.equal(extractReport('{"protocol":"caesar.report/v1","status":"success","summary":"cut'), undefined);
    assert.equal(extractReport(`${JSON.stringify(R({ usage: null, findings: [{ severity: 'low', title: 't', line: null }] }))}`)?.findings[0]?.line, undefined);
  });

  it('ignores a fenced block without the marker, and a text starting with an opening brace at index 0', () => {
    assert.equal(extractReport('```json\n{"a":1}\n```'), undefined);
    assert.equal(extractReport(`${JSON.stringify(R())}`)?.summary, 'ok');
  });
});

describe('engine runtime: report tiers (reference §2.8)', () => {
  it('file beats everything; the source is channel only when the channel marker vouches for the exact bytes', async () => {
    const p = paths();
    const text = JSON.stringify(R({ summary: 'from file' }));
    writeFileSync(p.report, text);
    writeFileSync(p.rawLog, JSON.stringify(R({ summary: 'from log' })));
    const file = await resolveReport(input(p, { translation: { finalText: JSON.stringify(R({ summary: 'final' })) } }));
    assert.deepEqual([file.source, file.report.summary, file.agent_report_valid], ['file', 'from file', true]);
    const channelReport = path.join(path.dirname(p.report), 'report.channel.json');
    const withMarker = { ...p, channelReport };
    assert.equal((await resolveReport(input(withMarker, { channel: true }))).source, 'file', 'no marker: the agent wrote the file itself');
    writeFileSync(channelReport, JSON.stringify({ sha256: createHash('sha256').update(text).digest('hex'), submitted_at: new Date().toISOString() }));
    assert.equal((await resolveReport(input(withMarker, { channel: true }))).source, 'channel');
    writeFileSync(p.report, JSON.stringify(R({ summary: 'overwritten by hand after the submission' })));
    assert.equal((await resolveReport(input(withMarker, { channel: true }))).source, 'file');
  });

  it('schema tier: final-message.txt wins over a diverging stdout final text, then structured output', async () => {
    const p = paths();
    writeFileSync(p.finalMessage, JSON.stringify(R({ summary: 'from -o file' })));
    const a = await resolveReport(input(p, { tier: 'schema', translation: { finalText: JSON.stringify(R({ summary: 'stdout' })) } }));
    assert.deepEqual([a.source, a.report.summary], ['schema', 'from -o file']);
    const q = paths();
    const b = await resolveReport(input(q, { tier: 'schema', translation: { structuredOutput: R({ summary: 'structured' }) } }));
    assert.deepEqual([b.source, b.report.summary], ['schema', 'structured']);
    const c = await resolveReport(input(q, { tier: 'file', translation: { finalText: `Done.\n${JSON.stringify(R({ summary: 'in text' }))}` } }));
    assert.deepEqual([c.source, c.report.summary], ['extracted', 'in text']);
  });

  it('extracts from raw.log when nothing else has a report', async () => {
    const p = paths();
    writeFileSync(p.rawLog, `line\n\`\`\`json caesar:report\n${JSON.stringify(R({ summary: 'log' }))}\n\`\`\`\n`);
    const r = await resolveReport(input(p));
    assert.deepEqual([r.source, r.report.summary], ['extracted', 'log']);
  });

  it('never drops an invalid report.json silently: the error names the version, a high finding says so', async () => {
    const p = paths();
    writeFileSync(p.report, JSON.stringify(R({ protocol: 'caesar.report/v2' })));
    const r = await resolveReport(input(p));
    assert.equal(r.source, 'synthesized');
    assert.equal(r.agent_report_valid, false);
    assert.match(r.agent_report_error!, /caesar\.report\/v2/);
    assert.equal(r.findings[0]?.severity, 'high');
  });

  it('flags a report naming another task, and fills an empty task_id', async () => {
    const p = paths();
    writeFileSync(p.report, JSON.stringify(R({ task_id: 't_other' })));
    const r = await resolveReport(input(p));
    assert.ok(r.findings.some((f) => f.title === 'Report names another task'));
    const q = paths();
    writeFileSync(q.report, JSON.stringify(R()));
    assert.equal((await resolveReport(input(q))).report.task_id, 't_1');
  });

  it('synthesizes: failed on timeout/cancel/non-zero exit/native failure, partial with a diff, success otherwise', () => {
    const base = { taskId: 't', translation: {} };
    const ok = { exitCode: 0, timedOut: false, cancelled: false };
    assert.equal(synthesize({ ...base, outcome: { ...ok, timedOut: true } }, []).status, 'failed');
    assert.equal(synthesize({ ...base, outcome: { ...ok, cancelled: true } }, []).status, 'failed');
    assert.equal(synthesize({ ...base, outcome: { ...ok, exitCode: 2 } }, []).status, 'failed');
    assert.equal(synthesize({ ...base, outcome: { ...ok, nativeFailure: 'is_error' } }, []).status, 'failed');
    const partial = synthesize({ ...base, outcome: ok, diffFiles: [{ path: 'a', action: 'created' }] }, []);
    assert.deepEqual([partial.status, partial.changes.map((c) => c.path)], ['partial', ['a']]);
    assert.equal(synthesize({ ...base, outcome: ok }, []).status, 'success');
  });

  it('synthesized summary: final text first, else the last five log lines, else a fixed sentence', async () => {
    const ok = { exitCode: 0, timedOut: false, cancelled: false };
    assert.equal(synthesize({ taskId: 't', translation: { finalText: '  all good  ' }, outcome: ok }, ['x']).summary, 'all good');
    const p = paths();
    writeFileSync(p.rawLog, ['1', '2', '', '3', '4', '5', '6', ''].join('\n'));
    const r = await resolveReport(input(p));
    assert.equal(r.report.summary, 'No report received; last log lines: 2 | 3 | 4 | 5 | 6');
    assert.match(synthesize({ taskId: 't', translation: {}, outcome: ok }, []).summary, /nothing usable/);
    // An error the translator understood is the summary, not buried under the raw stream's JSON lines.
    const quota = synthesize({ taskId: 't', translation: {}, outcome: { ...ok, exitCode: 1, nativeFailure: 'Individual quota reached.' } }, ['{"event":"result"}']);
    assert.equal(quota.summary, 'The agent reported a failure: Individual quota reached.');
  });
});

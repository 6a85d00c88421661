import { strict as assert } from 'node:assert';
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { MAX_REPORT_DEPTH, dropNulls } from '../../src/protocol';
import { judgeReportDocument } from '../../src/engine/run/report-document';
import { buildCli, makeRepo, runBuiltCli, trustedHome } from '../engine/runtime/helpers';

/*
 * Issue 34: a report.json nested 100,000 levels deep overflowed the stack of the report reader (RangeError), which
 * failed the task's conclusion without a finding. The reader walks at most MAX_REPORT_DEPTH levels: a field nested
 * deeper is left out and named, the agent's status kept, as for any other unreadable field (issue 23).
 */
const nested = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);
const deepReport = (field: string, depth: number) =>
  `{"protocol":"caesar.report/v1","status":"failed","summary":"Stopped: the tests do not pass.","${field}":${nested(depth)}}`;

describe('reliability: a deeply nested report.json is refused with a finding, not a crash (issue 34)', function () {
  this.timeout(60_000);

  it('the reader: 100,000 levels in details and in findings are left out and named; the status is kept', () => {
    for (const field of ['details', 'findings']) {
      const verdict = judgeReportDocument(JSON.parse(deepReport(field, 100_000)));
      assert.equal(verdict.kind, 'salvaged', field);
      if (verdict.kind !== 'salvaged') return;
      assert.equal(verdict.report.status, 'failed');
      assert.match(verdict.finding.detail, new RegExp(`${field} \\(nested deeper than ${MAX_REPORT_DEPTH} levels\\)`));
    }
  });

  it('the bound is the only change: a legitimate report nests 3 levels, and MAX_REPORT_DEPTH - 1 still walks', () => {
    assert.doesNotThrow(() => dropNulls(JSON.parse(nested(MAX_REPORT_DEPTH - 1))));
    assert.throws(() => dropNulls(JSON.parse(nested(MAX_REPORT_DEPTH + 1))), /nests deeper than 32 levels/);
  });

  it('a real task whose agent writes it: concluded, "failed" kept, the high finding names the field', async () => {
    const repo = makeRepo();
    const dir = path.join(repo, '.caesar');
    mkdirSync(dir, { recursive: true });
    const prepared = path.join(dir, 'prepared-report.json');
    writeFileSync(prepared, deepReport('details', 100_000));
    const script = path.join(dir, 'agent.sh');
    writeFileSync(script, `#!/usr/bin/env bash\ncat '${prepared}' > "$CAESAR_REPORT_PATH"\n`);
    chmodSync(script, 0o755);
    writeFileSync(path.join(dir, 'config.toml'), `[[agent]]\nid = "bash"\nbin = "${script}"\nargs = ["{{prompt}}"]\n`);
    const home = trustedHome(await buildCli(), repo);
    const run = await runBuiltCli(['run', 'Do the thing', '--agent', 'bash', '--json'], repo, 45_000, { ...process.env, HOME: home, CAESAR_KILL_GRACE_MS: '500' });
    assert.equal(run.code, 1, run.stderr);
    const out = JSON.parse(run.stdout);
    assert.equal(out.status, 'succeeded', 'the agent process itself exited 0: the conclusion did not fail');
    assert.equal(out.report.status, 'failed');
    const finding = out.report.findings.find((f: { title: string }) => f.title === 'Agent report partly unreadable');
    assert.ok(finding, JSON.stringify(out.report.findings));
    assert.match(finding.detail, /details \(nested deeper than 32 levels\)/);
  });
});

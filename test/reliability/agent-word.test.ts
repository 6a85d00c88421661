import { strict as assert } from 'node:assert';
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { buildCli, makeRepo, runBuiltCli, trustedHome } from '../engine/runtime/helpers';

/**
 * Issue 23 item 3: the agent's word is kept. Real tasks: a bash OACP agent ([[agent]] template) copies a prepared
 * report.json into $CAESAR_REPORT_PATH and exits 0, through `caesar run --json` (its exit code, its result).
 */
describe('reliability: a malformed report keeps the agent\'s word', function () {
  this.timeout(60_000);
  before(() => buildCli());

  /** Runs a task whose agent writes `report` (bytes, as given) as its report.json, then exits 0. */
  async function runWithReport(report: string | Buffer): Promise<{ code: number | null; out: any; stderr: string }> {
    const repo = makeRepo();
    const dir = path.join(repo, '.caesar');
    mkdirSync(dir, { recursive: true });
    const prepared = path.join(dir, 'prepared-report.json');
    writeFileSync(prepared, report);
    const script = path.join(dir, 'agent.sh');
    writeFileSync(script, `#!/usr/bin/env bash\ncat '${prepared}' > "$CAESAR_REPORT_PATH"\n`);
    chmodSync(script, 0o755);
    writeFileSync(path.join(dir, 'config.toml'), `[[agent]]\nid = "bash"\nbin = "${script}"\nargs = ["{{prompt}}"]\n`);
    // The user trusted the repository's [[agent]] (a config naming a program is used only once trusted).
    const home = trustedHome(await buildCli(), repo);
    const run = await runBuiltCli(['run', 'Do the thing', '--agent', 'bash', '--json'], repo, 45_000, { ...process.env, HOME: home, CAESAR_KILL_GRACE_MS: '500' });
    return { code: run.code, out: JSON.parse(run.stdout), stderr: run.stderr };
  }

  const report = (fields: Record<string, unknown>) => JSON.stringify({ protocol: 'caesar.report/v1', summary: 'Stopped: the tests do not pass.', ...fields });
  const titles = (out: any) => out.report.findings.map((f: { title: string }) => f.title);
  const details = (out: any) => out.report.findings.map((f: { detail: string }) => f.detail).join('\n');

  it('control: a valid success report is a success, exit 0', async () => {
    const { code, out, stderr } = await runWithReport(report({ status: 'success', summary: 'Done.' }));
    assert.equal(code, 0, stderr);
    assert.equal(out.report.status, 'success');
    assert.equal(out.report_source, 'file');
  });

  it('"failed" with a non-integer token count stays failed (exit 1), the other fields kept, the field named', async () => {
    const { code, out } = await runWithReport(report({ status: 'failed', usage: { input_tokens: 12.5 }, next_steps: ['fix the tests'] }));
    assert.equal(code, 1);
    assert.equal(out.status, 'succeeded', 'the process itself exited 0');
    assert.equal(out.report.status, 'failed');
    assert.equal(out.report.summary, 'Stopped: the tests do not pass.');
    assert.deepEqual(out.report.next_steps, ['fix the tests']);
    assert.equal(out.report_source, 'file');
    assert.ok(titles(out).includes('Agent report partly unreadable'), titles(out).join(', '));
    assert.match(details(out), /usage\.input_tokens/);
    assert.match(details(out), /unreadable fields left out: usage/);
  });

  it('"blocked" after a UTF-8 BOM is read as written: blocked, exit 1, no refusal', async () => {
    const { code, out } = await runWithReport(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(report({ status: 'blocked' }))]));
    assert.equal(code, 1);
    assert.equal(out.report.status, 'blocked');
    assert.equal(out.report.summary, 'Stopped: the tests do not pass.');
    assert.equal(out.report_source, 'file');
    assert.ok(!titles(out).includes('Agent report refused'), titles(out).join(', '));
  });

  it('"blocked" with one bad finding keeps blocked and the good findings, naming the bad one', async () => {
    const findings = [{ severity: 'urgent', title: 'x' }, { severity: 'high', title: 'Needs a decision on the API' }];
    const { code, out } = await runWithReport(report({ status: 'Blocked', findings }));
    assert.equal(code, 1);
    assert.equal(out.report.status, 'blocked');
    assert.ok(titles(out).includes('Needs a decision on the API'));
    assert.match(details(out), /left out: findings\.0/);
  });

  it('an unknown report version saying "failed" is refused by name, and its "failed" is kept over the synthesized success', async () => {
    const { code, out } = await runWithReport(report({ protocol: 'caesar.report/v2', status: 'failed' }));
    assert.equal(code, 1);
    assert.equal(out.report.status, 'failed');
    assert.equal(out.report_source, 'synthesized');
    assert.match(details(out), /caesar\.report\/v2/);
    assert.ok(titles(out).includes('Agent status kept'));
  });

  for (const [what, text] of [
    ['an unknown status ("done")', report({ status: 'done' })],
    ['no status at all', report({})],
    ['a truncated file', '{"protocol": "caesar.report/v1", "status": "fail'],
  ] as const) {
    it(`${what}: "needs review" (blocked, exit 1), never success; the finding says why`, async () => {
      const { code, out } = await runWithReport(text);
      assert.equal(code, 1);
      assert.equal(out.report.status, 'blocked');
      assert.match(out.report.summary, /^Needs review: /);
      assert.ok(titles(out).includes('Needs review'), titles(out).join(', '));
      assert.match(details(out), /report\.json was refused: .*(status|not valid JSON)/);
    });
  }
});

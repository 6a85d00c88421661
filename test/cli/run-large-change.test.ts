import { strict as assert } from 'node:assert';
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { taskPaths } from '../../src/protocol';
import { buildCli, makeRepo, trustedHome } from '../engine/runtime/helpers';
import { needs } from '../support/needs';

function cli(cwd: string, args: string[], home?: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [process.env.CAESAR_CLI_JS!, ...args], { cwd, env: { ...process.env, NO_COLOR: '', ...(home ? { HOME: home } : {}) }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
}

/** An agent that creates 3,000 small files in 30 folders and one 300 MiB sparse file, and declares none of them. */
const AGENT = `set -e
for d in $(seq 0 29); do mkdir -p gen/d$d; for f in $(seq 0 99); do echo "$d $f" > gen/d$d/f$f.txt; done; done
truncate -s 300M huge.img
printf '%s' '{"protocol":"caesar.report/v1","status":"success","summary":"generated"}' > "$CAESAR_REPORT_PATH"
`;

describe('caesar run with a large change (real CLI, real git)', function () {
  this.timeout(120_000);
  before(async () => {
    await buildCli();
  });

  it('result.json stays small with lists capped and counted; the CLI prints the counts, findings and "and N more"', async function () {
    await needs(this, 'bubblewrap'); // its counts are a confined task's: unconfined adds a "Not sandboxed" finding
    const repo = makeRepo();
    mkdirSync(path.join(repo, '.caesar'), { recursive: true });
    writeFileSync(path.join(repo, '.caesar/config.toml'), `[[agent]]\nid = "gen"\nbin = "/bin/sh"\nargs = ["-c", ${JSON.stringify(AGENT)}, "{{prompt}}"]\n`);

    const home = trustedHome(process.env.CAESAR_CLI_JS!, repo);
    const run = await cli(repo, ['run', 'generate', '--agent', 'gen', '--isolation', 'worktree', '--mode', 'write'], home);
    assert.equal(run.code, 0, run.stderr + run.stdout.slice(-2000));
    assert.match(run.stdout, /3001 files changed \(according to git\):/);
    assert.match(run.stdout, /… and 2,901 more \(caesar diff t_\w+ --stat --all lists them all\)/);
    assert.match(run.stdout, /Findings \(101\):/);
    assert.match(run.stdout, /Undeclared change: … and 2,901 more files git shows changed that the agent's report does not mention \(3,001 in all\)\./);
    assert.match(run.stdout, /next: caesar diff t_\w+  ·  caesar apply t_\w+/);
    const id = /Task (t_\w+)/.exec(run.stdout)![1]!;

    const resultFile = taskPaths(repo, id).result;
    assert.ok(statSync(resultFile).size < 512 * 1024, `result.json is ${statSync(resultFile).size} bytes`);
    const result = JSON.parse(readFileSync(resultFile, 'utf8')) as { diff: { files: Array<{ path: string; too_large?: boolean }>; files_total: number }; changes_total: number; report: { changes: unknown[]; findings: unknown[] } };
    assert.equal(result.diff.files.length, 1000);
    assert.equal(result.diff.files_total, 3001);
    assert.equal(result.changes_total, 3001);
    assert.equal(result.report.changes.length, 1000);
    assert.equal(result.report.findings.length, 101);

    const stat = await cli(repo, ['diff', id, '--stat', '--all'], home);
    assert.equal(stat.code, 0, stat.stderr);
    assert.match(stat.stdout, /A\s+huge\.img\s+too large to show \(300\.0 MiB\)/);
    assert.equal(stat.stdout.split('\n').filter((l) => /^\s+A\s/.test(l)).length, 3001);

    const apply = await cli(repo, ['apply', id], home);
    assert.equal(apply.code, 0, apply.stderr + apply.stdout);
    assert.match(apply.stdout, /Applied 3000 files to .*\. 1 file too large for a patch was NOT applied; it stays in the worktree .*: huge\.img \(300\.0 MiB\)\. Copy them by hand\./);
    assert.match(apply.stdout, /\n {2}… and 2,800 more files\n/);
    assert.equal(readFileSync(path.join(repo, 'gen/d29/f99.txt'), 'utf8'), '29 99\n');
  });
});

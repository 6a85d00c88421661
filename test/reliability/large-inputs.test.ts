import { strict as assert } from 'node:assert';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { runAgentProcess } from '../../src/engine/process/spawn';
import { delegateTask } from '../../src/engine/tasks';
import { MAX_BRIEF_TEXT_BYTES } from '../../src/protocol';
import { buildCli, makeRepo, runBuiltCli, trustedHome, waitForFinished } from '../engine/runtime/helpers';

/**
 * Issue 23 item 5a: a large objective or context failed the task with "ReferenceError: Cannot access 'onAbort'
 * before initialization" (the E2BIG path of the spawn). It now reaches the agent through brief.md, never argv, up to
 * a documented limit past which the delegation is refused with a clear error.
 */
describe('reliability: a large objective or context', function () {
  this.timeout(60_000);
  before(() => buildCli());

  /** A bash [[agent]] that takes its prompt on argv ({{prompt}}) and says what it got, there and in brief.md. */
  function repoWithArgvAgent(): string {
    const repo = makeRepo();
    const dir = path.join(repo, '.caesar');
    mkdirSync(dir, { recursive: true });
    const script = path.join(dir, 'agent.sh');
    writeFileSync(
      script,
      [
        '#!/usr/bin/env bash',
        'arg_bytes=$(printf %s "$1" | wc -c)',
        'brief="$CAESAR_TASK_DIR/brief.md"',
        'if grep -q END-OF-MATERIAL "$brief"; then seen=yes; else seen=no; fi',
        'if printf %s "$1" | grep -q "$brief"; then points=yes; else points=no; fi',
        `printf '{"protocol":"caesar.report/v1","status":"success","summary":"argv %s seen %s points %s"}' "$arg_bytes" "$seen" "$points" > "$CAESAR_REPORT_PATH"`,
        '',
      ].join('\n'),
    );
    chmodSync(script, 0o755);
    writeFileSync(path.join(dir, 'config.toml'), `[[agent]]\nid = "argv"\nbin = "${script}"\nargs = ["{{prompt}}"]\n`);
    return repo;
  }

  function argvBytes(summary: string): number {
    return Number(/argv (\d+)/.exec(summary)?.[1] ?? NaN);
  }

  it('the spawn\'s E2BIG path (a 3 MiB argument, a cancel signal attached) fails the run cleanly, naming E2BIG', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'caesar-e2big-'));
    const result = await runAgentProcess({
      plan: { command: process.execPath, args: ['-e', '0', 'x'.repeat(3 * 1024 * 1024)], cwd: dir, display: 'node' },
      env: process.env,
      rawLogPath: path.join(dir, 'raw.log'),
      onStdoutLines: () => {},
      timeoutMs: 10_000,
      graceMs: 300,
      signal: new AbortController().signal,
      stopSignal: new AbortController().signal,
    });
    assert.equal(result.exitCode, null);
    assert.match(result.spawnError ?? '', /E2BIG/);
  });

  it('`caesar run --context @file` of 200 KB: the agent gets a short pointer on argv and the whole context in brief.md', async () => {
    const repo = repoWithArgvAgent();
    const contextFile = path.join(repo, '.caesar/context.txt');
    writeFileSync(contextFile, `${'material line\n'.repeat(200 * 1024 / 14)}END-OF-MATERIAL\n`);
    const run = await runBuiltCli(['run', 'Read the material', '--agent', 'argv', '--context', `@${contextFile}`, '--json'], repo, 45_000, { ...process.env, HOME: trustedHome(await buildCli(), repo) });
    assert.equal(run.code, 0, run.stderr + run.stdout);
    const out = JSON.parse(run.stdout);
    assert.equal(out.status, 'succeeded');
    assert.match(out.report.summary, /seen yes points yes/);
    assert.ok(argvBytes(out.report.summary) < 2048, out.report.summary);
  });

  it('a short brief still goes on argv as it is', async () => {
    const repo = repoWithArgvAgent();
    const run = await runBuiltCli(['run', 'Say hello END-OF-MATERIAL', '--agent', 'argv', '--json'], repo, 45_000, { ...process.env, HOME: trustedHome(await buildCli(), repo) });
    assert.equal(run.code, 0, run.stderr + run.stdout);
    const out = JSON.parse(run.stdout);
    assert.match(out.report.summary, /seen yes points no/);
    assert.ok(argvBytes(out.report.summary) > 1000, 'the whole brief');
  });

  it('a 2 MB objective (delegated as the MCP server does) reaches the agent through brief.md: the task succeeds', async () => {
    const repo = repoWithArgvAgent();
    const objective = `${'Refactor this. '.repeat(2_000_000 / 15)}END-OF-MATERIAL`;
    const delegated = await delegateTask(repo, { objective, workspace: repo, agent: 'argv' }, { env: { ...process.env, CAESAR_KILL_GRACE_MS: '500' }, trusted: true });
    const done = await waitForFinished(repo, delegated.id, 45_000);
    assert.equal(done.state.status, 'succeeded', done.state.error);
    assert.match(done.result.report.summary, /seen yes points yes/);
  });

  it(`objective + context over the documented limit (${MAX_BRIEF_TEXT_BYTES / 1024 / 1024} MiB) is refused before anything is written, naming the limit`, async () => {
    const repo = repoWithArgvAgent();
    const contextFile = path.join(repo, '.caesar/context.txt');
    writeFileSync(contextFile, 'y'.repeat(MAX_BRIEF_TEXT_BYTES));
    const run = await runBuiltCli(['run', 'Read the material', '--agent', 'argv', '--context', `@${contextFile}`], repo, 45_000, { ...process.env, HOME: trustedHome(await buildCli(), repo) });
    assert.equal(run.code, 2, run.stderr);
    assert.match(run.stderr, /over the 3\.0 MiB limit/);
    const tasks = path.join(repo, '.caesar/tasks');
    assert.deepEqual(existsSync(tasks) ? readdirSync(tasks) : [], [], 'no task was created');
  });
});

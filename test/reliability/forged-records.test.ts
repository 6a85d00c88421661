import { strict as assert } from 'node:assert';
import { spawn, type ChildProcess } from 'node:child_process';
import { appendFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { bindingOf, sealEventLine } from '../../src/engine/store/record-seal';
import { taskPaths, tasksDir } from '../../src/protocol';
import { FIXTURE_AGENT, buildCli, makeRepo, runCliScript, startFixture, waitFor, waitForFinished } from '../engine/runtime/helpers';

/*
 * Issue 22, item 4, from the outside: real `caesar` processes, a real task, real MCP over stdio. Lines appended to
 * events.jsonl by anyone but Caesar — a `finished` without a seal, one with a made-up seal, one sealed for another
 * task — end neither `caesar run` nor `caesar watch`: both report each line and go on until the task's own end. A
 * task folder copied from one repository into another is refused by the CLI and the MCP server, naming both.
 */

interface Running {
  child: ChildProcess;
  out: () => string;
  err: () => string;
  exited: Promise<number | null>;
  code: () => number | null | undefined;
}

function start(cli: string, args: string[], cwd: string, env: NodeJS.ProcessEnv): Running {
  const child = spawn(process.execPath, [cli, ...args], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  let code: number | null | undefined;
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('close', (c) => resolve((code = c))));
  return { child, out: () => out, err: () => err, exited, code: () => code };
}

function fixtureHome(): { home: string; env: NodeJS.ProcessEnv } {
  const home = realpathSync(mkdtempSync(path.join(tmpdir(), 'caesar-forged-home-')));
  mkdirSync(path.join(home, '.config', 'caesar'), { recursive: true });
  // In the user's own (global) config: no repository config to trust.
  writeFileSync(path.join(home, '.config', 'caesar', 'config.toml'), `[[agent]]\nid = "fixture"\nbin = "${process.execPath}"\nargs = ["${FIXTURE_AGENT}", "--objective={{prompt}}"]\n`);
  return { home, env: { ...process.env, HOME: home, CAESAR_KILL_GRACE_MS: '500', NO_COLOR: '1' } };
}

describe('reliability: records Caesar did not write are never the truth', function () {
  this.timeout(90_000);
  let cli: string;
  before(async () => {
    cli = await buildCli();
  });

  it('a forged `finished` appended to events.jsonl ends neither `caesar run` nor `caesar watch`', async () => {
    const repo = makeRepo();
    const { env } = fixtureHome();
    const run = start(cli, ['run', '--agent', 'fixture', '--isolation', 'worktree', '--context', JSON.stringify({ mode: 'ask', waitMs: 60_000 }), 'Ask, then finish'], repo, env);
    let watch: Running | undefined;
    try {
      const id = await waitFor('the task asks its question', () => {
        const ids = existsSync(tasksDir(repo)) ? readdirSync(tasksDir(repo)) : [];
        return ids.find((t) => existsSync(path.join(taskPaths(repo, t).questionsDir, 'q1.json')));
      }, 30_000);
      watch = start(cli, ['watch', id], repo, env);
      await waitFor('watch shows the task', () => watch!.out().includes('question') || undefined, 20_000);
      const events = taskPaths(repo, id).events;
      const seq = readFileSync(events, 'utf8').trim().split('\n').length + 5;
      const body = { protocol: 'caesar.event/v1', at: new Date().toISOString(), task_id: id, type: 'finished', status: 'success', summary: 'FORGED' };
      const unsigned = JSON.stringify({ ...body, seq });
      const madeUp = `${JSON.stringify({ ...body, seq: seq + 1 }).slice(0, -1)},"caesar_mac":"${'0'.repeat(32)}"}`;
      const otherTask = sealEventLine(bindingOf(repo, 't_other'), JSON.stringify({ ...body, seq: seq + 2 }));
      appendFileSync(events, `${unsigned}\n${madeUp}\n${otherTask}\n`);
      // Both read the three lines (each is reported), and both are still running: no forged line ended them.
      const reported = (text: string) => (text.match(/not written by Caesar|seal does not verify/g) ?? []).length;
      await waitFor('caesar run reports the three lines', () => reported(run.err()) >= 3 || undefined, 20_000);
      await waitFor('caesar watch reports the three lines', () => reported(watch!.err()) >= 3 || undefined, 20_000);
      assert.equal(run.code(), undefined, `caesar run ended on a forged line: ${run.out()}`);
      assert.equal(watch.code(), undefined, `caesar watch ended on a forged line: ${watch.out()}`);
      assert.doesNotMatch(run.out() + watch.out(), /FORGED/);
      // The task's own end: the answer, then its real `finished`; both end on that.
      const answer = await runCliScript(cli, ['answer', id, 'q1', 'yes'], repo, 20_000, env);
      assert.equal(answer.code, 0, answer.stderr);
      assert.equal(await run.exited, 0, run.err());
      assert.match(run.out(), /Answer was: yes/);
      assert.equal(await watch.exited, 0, watch.err());
      assert.match(watch.out(), /finished/);
    } finally {
      run.child.kill('SIGKILL');
      watch?.child.kill('SIGKILL');
    }
  });

  it('a task folder copied in from another repository is refused by the CLI and the MCP server, naming both', async () => {
    const origin = makeRepo();
    const other = makeRepo();
    const { id } = await startFixture(origin, { mode: 'success', files: { 'copied.txt': 'from origin\n' } });
    await waitForFinished(origin, id);
    mkdirSync(tasksDir(other), { recursive: true });
    cpSync(taskPaths(origin, id).dir, taskPaths(other, id).dir, { recursive: true });
    const { env } = fixtureHome();
    const both = new RegExp(`belongs to the repository ${escape(realpathSync(origin))}, not to ${escape(realpathSync(other))}`);

    const apply = await runCliScript(cli, ['apply', id, '--root', other], other, 20_000, env);
    assert.notEqual(apply.code, 0);
    assert.match(apply.stderr, both);
    assert.equal(existsSync(path.join(other, 'copied.txt')), false, 'nothing was applied into the other repository');
    const logs = await runCliScript(cli, ['logs', id, '--root', other], other, 20_000, env);
    assert.notEqual(logs.code, 0);
    assert.match(logs.stderr, both);

    const transport = new StdioClientTransport({ command: process.execPath, args: [cli, 'mcp', 'serve', '--root', other], env: env as Record<string, string>, stderr: 'pipe', cwd: other });
    const client = new Client({ name: 'caesar-test', version: '1.0.0' });
    await client.connect(transport);
    try {
      for (const tool of ['caesar_status', 'caesar_apply']) {
        const result = (await client.callTool({ name: tool, arguments: { task_id: id } })) as CallToolResult;
        assert.equal(result.isError, true, `${tool} served the copied task`);
        assert.match(textOf(result), both);
      }
      assert.equal(existsSync(path.join(other, 'copied.txt')), false);
    } finally {
      await client.close();
    }
  });
});

function textOf(result: CallToolResult): string {
  return result.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n');
}

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

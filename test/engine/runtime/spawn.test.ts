import { strict as assert } from 'node:assert';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import type { SpawnPlan } from '../../../src/agents/types';
import { groupAlive, runAgentProcess, type RunAgentOptions } from '../../../src/engine/process/spawn';
import { pidAlive } from './helpers';

function plan(script: string, stdin?: string): SpawnPlan {
  return { command: process.execPath, args: ['-e', script], cwd: tmpdir(), display: 'node -e …', ...(stdin !== undefined ? { stdin } : {}) };
}

function options(p: SpawnPlan, over: Partial<RunAgentOptions> = {}) {
  const dir = mkdtempSync(path.join(tmpdir(), 'caesar-spawn-'));
  const lines: string[] = [];
  const opts: RunAgentOptions = {
    plan: p, env: process.env, rawLogPath: path.join(dir, 'raw.log'), onStdoutLines: (l) => lines.push(...l), timeoutMs: 20_000, graceMs: 300, ...over,
  };
  return { opts, lines, raw: () => readFileSync(opts.rawLogPath, 'utf8') };
}

describe('engine runtime: spawning an agent', function () {
  this.timeout(30_000);

  it('closes stdin at once when there is nothing to feed (an agent reading stdin sees EOF, never hangs)', async () => {
    const { opts, lines } = options(plan("let n=0;process.stdin.on('data',d=>n+=d.length).on('end',()=>console.log('eof '+n))"));
    const result = await runAgentProcess(opts);
    assert.equal(result.exitCode, 0);
    assert.deepEqual(lines, ['eof 0']);
  });

  it('feeds plan.stdin (300 KiB, past pipe buffers) then closes it', async () => {
    const { opts, lines } = options(plan("let n=0;process.stdin.on('data',d=>n+=d.length).on('end',()=>console.log('got '+n))", 'p'.repeat(300 * 1024)));
    const result = await runAgentProcess(opts);
    assert.equal(result.exitCode, 0);
    assert.deepEqual(lines, [`got ${300 * 1024}`]);
  });

  it('survives an agent that never reads its stdin', async () => {
    const { opts } = options(plan('process.exit(0)', 'x'.repeat(1024 * 1024)));
    assert.equal((await runAgentProcess(opts)).exitCode, 0);
  });

  it('writes stdout and stderr lines to raw.log in order; only stdout is translated; a last line without newline counts', async () => {
    const { opts, lines, raw } = options(plan("console.log('out1');console.error('err1');setTimeout(()=>{console.log('out2');process.stdout.write('tail')},50)"));
    await runAgentProcess(opts);
    assert.deepEqual(lines, ['out1', 'out2', 'tail']);
    assert.equal(raw(), 'out1\nerr1\nout2\ntail\n');
  });

  it('reports a missing executable as a clear spawn error', async () => {
    const { opts } = options({ command: '/nonexistent/agent-bin', args: [], cwd: tmpdir(), display: 'x' });
    const result = await runAgentProcess(opts);
    assert.match(result.spawnError ?? '', /Agent executable not found: \/nonexistent\/agent-bin/);
  });

  it('runs the agent in its own process group and cleans up what it leaves behind when it exits', async () => {
    const script = "const c=require('child_process').spawn(process.execPath,['-e',\"process.on('SIGTERM',()=>{});setInterval(()=>{},1000)\"],{stdio:'ignore'});console.log(c.pid);setTimeout(()=>process.exit(0),100)";
    let pgid = 0;
    const { opts, lines } = options(plan(script), { onPid: (pid) => (pgid = pid) });
    const result = await runAgentProcess(opts);
    assert.equal(result.exitCode, 0);
    const grandchild = Number(lines[0]);
    assert.ok(grandchild > 0);
    assert.ok(!groupAlive(pgid), 'the group is empty');
    assert.ok(!pidAlive(grandchild), 'the TERM-ignoring grandchild was killed');
  });

  it('cancel: TERM to the group, KILL after the grace period', async () => {
    const controller = new AbortController();
    const reasons: string[] = [];
    const lines: string[] = [];
    const { opts } = options(plan("process.on('SIGTERM',()=>console.log('term received'));console.log('ready');setInterval(()=>{},1000)"), {
      signal: controller.signal,
      onTerminate: (r) => reasons.push(r),
      onStdoutLines: (l) => {
        lines.push(...l);
        if (l.includes('ready')) controller.abort();
      },
    });
    const result = await runAgentProcess(opts);
    assert.equal(result.cancelled, true);
    assert.equal(result.timedOut, false);
    // TERM came first and the agent lived to handle it (the grace period); only then KILL.
    assert.deepEqual(lines, ['ready', 'term received']);
    assert.equal(result.signal, 'SIGKILL');
    assert.deepEqual(reasons, ['cancel']);
  });

  it('timeout: counted from spawn, a polite agent ends on SIGTERM', async () => {
    const { opts } = options(plan('setInterval(()=>{},1000)'), { timeoutMs: 300 });
    const result = await runAgentProcess(opts);
    assert.equal(result.timedOut, true);
    assert.equal(result.signal, 'SIGTERM');
  });
});

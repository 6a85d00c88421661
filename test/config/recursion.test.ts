import { strict as assert } from 'node:assert';
import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { taskPaths } from '../../src/protocol';
import { readJsonFile } from '../../src/engine/store/atomic';
import { TaskStateSchema } from '../../src/protocol';
import { buildCli, makeRepo } from '../engine/runtime/helpers';

/**
 * Recursion decided by depth, not by name (issue 11 item 3), through the real `caesar run` process: a person in a
 * terminal is not claude, so `--agent claude` runs with the default configuration; a task's agent running at depth
 * max_depth that delegates again is refused with a message naming the depth; an agent delegating to itself is the
 * recursion allow_recursion = false refuses; a nested task records its parent.
 */

/** A stand-in for the claude CLI on PATH: reads the brief on stdin, writes a report holding the CAESAR_* it saw. */
const FAKE_CLAUDE = `#!${process.execPath}
const fs = require('node:fs');
fs.readFileSync(0);
const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => k.startsWith('CAESAR_')));
fs.writeFileSync(process.env.CAESAR_REPORT_PATH, JSON.stringify({ protocol: 'caesar.report/v1', status: 'success', summary: 'fake claude ran', details: JSON.stringify(env) }));
`;

interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** The environment of a process that is NOT inside a task (a terminal), plus `env`. */
function cli(cwd: string, bin: string, args: string[], env: NodeJS.ProcessEnv = {}): Promise<CliRun> {
  const base = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('CAESAR_') || k === 'CAESAR_CLI_JS' || k === 'CAESAR_DEMO_AGENT_JS'));
  const child = spawn(process.execPath, [process.env.CAESAR_CLI_JS!, ...args], {
    cwd,
    env: { ...base, PATH: `${bin}${path.delimiter}${process.env.PATH ?? ''}`, NO_COLOR: '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
}

function taskIds(repo: string): string[] {
  const dir = path.join(repo, '.caesar', 'tasks');
  return existsSync(dir) ? readdirSync(dir) : [];
}

describe('config: recursion decided by depth, not by name (real caesar run)', function () {
  this.timeout(60_000);
  let bin: string;
  before(async () => {
    await buildCli();
    bin = mkdtempSync(path.join(tmpdir(), 'caesar-fake-claude-'));
    mkdirSync(bin, { recursive: true });
    writeFileSync(path.join(bin, 'claude'), FAKE_CLAUDE);
    chmodSync(path.join(bin, 'claude'), 0o755);
  });

  it('`caesar run --agent claude` from a terminal runs with the default configuration; its agent gets CAESAR_DEPTH=1', async () => {
    const repo = makeRepo();
    const run = await cli(repo, bin, ['run', 'Say hello', '--agent', 'claude', '--json']);
    assert.equal(run.code, 0, run.stderr + run.stdout);
    const out = JSON.parse(run.stdout) as { task_id: string; status: string; report: { summary: string; details: string } };
    assert.equal(out.status, 'succeeded');
    assert.equal(out.report.summary, 'fake claude ran');
    const seen = JSON.parse(out.report.details) as Record<string, string>;
    assert.equal(seen.CAESAR_DEPTH, '1');
    assert.equal(seen.CAESAR_AGENT, 'claude');
    assert.equal(seen.CAESAR_TASK_ID, out.task_id);
    const state = await readJsonFile(taskPaths(repo, out.task_id).state, TaskStateSchema);
    assert.equal(state?.depth, 1);
    assert.equal(state?.parent_task_id, undefined, 'a top-level task has no parent');
  });

  it('a task agent at depth max_depth (2) that delegates again is refused, naming the depth; nothing is written', async () => {
    const repo = makeRepo();
    const run = await cli(repo, bin, ['run', 'Go deeper', '--agent', 'claude'], { CAESAR_DEPTH: '2', CAESAR_AGENT: 'codex', CAESAR_TASK_ID: 't_parent' });
    assert.equal(run.code, 2, run.stderr);
    assert.match(run.stderr, /would have depth 3 and max_depth is 2/);
    assert.match(run.stderr, /running at depth 2/);
    assert.deepEqual(taskIds(repo), []);
  });

  it('one level below, the nested task runs at depth 2 and records its parent; claude inside a claude task is recursion', async () => {
    const repo = makeRepo();
    const nested = await cli(repo, bin, ['run', 'Nested', '--agent', 'claude', '--json'], { CAESAR_DEPTH: '1', CAESAR_AGENT: 'codex', CAESAR_TASK_ID: 't_parent' });
    assert.equal(nested.code, 0, nested.stderr);
    const out = JSON.parse(nested.stdout) as { task_id: string; report: { details: string } };
    assert.equal((JSON.parse(out.report.details) as Record<string, string>).CAESAR_DEPTH, '2');
    const state = await readJsonFile(taskPaths(repo, out.task_id).state, TaskStateSchema);
    assert.equal(state?.depth, 2);
    assert.equal(state?.parent_task_id, 't_parent');

    const self = await cli(repo, bin, ['run', 'Myself again', '--agent', 'claude'], { CAESAR_DEPTH: '1', CAESAR_AGENT: 'claude', CAESAR_TASK_ID: 't_parent' });
    assert.equal(self.code, 2, self.stderr);
    assert.match(self.stderr, /delegate to itself.*allow_recursion = false/);
    // Allowing recursion is the user's choice (their global layer, under a private HOME here): a repository's
    // config can only tighten the policy, so the same line in .caesar/config.toml changes nothing.
    writeFileSync(path.join(repo, '.caesar', 'config.toml'), '[policy]\nallow_recursion = true\n');
    const fromRepository = await cli(repo, bin, ['run', 'Myself again', '--agent', 'claude'], { CAESAR_DEPTH: '1', CAESAR_AGENT: 'claude', CAESAR_TASK_ID: 't_parent' });
    assert.equal(fromRepository.code, 2, fromRepository.stderr);
    const home = mkdtempSync(path.join(tmpdir(), 'caesar-recursion-home-'));
    mkdirSync(path.join(home, '.config', 'caesar'), { recursive: true });
    writeFileSync(path.join(home, '.config', 'caesar', 'config.toml'), '[policy]\nallow_recursion = true\n');
    const allowed = await cli(repo, bin, ['run', 'Myself again', '--agent', 'claude', '--json'], { HOME: home, CAESAR_DEPTH: '1', CAESAR_AGENT: 'claude', CAESAR_TASK_ID: 't_parent' });
    assert.equal(allowed.code, 0, allowed.stderr);
  });
});

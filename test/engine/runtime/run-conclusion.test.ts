import { strict as assert } from 'node:assert';
import { promises as fs, readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { concludeRun, synthesizedConclusion, type RunToConclude } from '../../../src/engine/run/run-conclusion';
import { StateWriter } from '../../../src/engine/run/state-writer';
import { taskPaths, type CheckResult, type Finding, type LaunchSpec, type TaskPaths } from '../../../src/protocol';
import type { SpawnPlan } from '../../../src/agents/types';
import type { Placement } from '../../../src/engine/run/isolation';
import type { RunAgentResult } from '../../../src/engine/process/spawn';
import { git, makeRepo, runningState } from './helpers';

/*
 * concludeRun on its own, over a real repository and a real worktree the "agent" (this test) changed: what the
 * report tier's report, git's diff, the run's outcome and the checks amount to. And synthesizedConclusion, the
 * conclusion of a task whose agent never ran or whose conclusion hung.
 */

const ID = 't_conclude';

interface Scene {
  repo: string;
  worktree: string;
  paths: TaskPaths;
  placement: Placement;
  state: StateWriter;
}

async function scene(): Promise<Scene> {
  const repo = makeRepo({ 'README.md': '# repo\n', 'a.txt': 'one\n' });
  const worktree = path.join(repo, '.caesar', 'wt', ID);
  git(repo, 'worktree', 'add', '-q', '-b', `caesar/${ID}`, worktree, 'HEAD');
  const paths = taskPaths(repo, ID);
  await fs.mkdir(paths.dir, { recursive: true });
  const placement: Placement = {
    isolation: 'worktree',
    workspace: worktree,
    gitRoot: repo,
    worktree: { path: worktree, branch: `caesar/${ID}`, base_ref: git(repo, 'rev-parse', 'HEAD') },
    excluded: [],
    prefix: '',
    findings: [],
  };
  const state = new StateWriter(paths.state, runningState(ID, repo, { objective: 'conclude', workspace: worktree }));
  return { repo, worktree, paths, placement, state };
}

const exited = (over: Partial<RunAgentResult> = {}): RunAgentResult => ({ exitCode: 0, signal: null, timedOut: false, cancelled: false, durationMs: 1234, ...over });

function writeReport(s: Scene, over: Record<string, unknown> = {}) {
  writeFileSync(s.paths.report, JSON.stringify({
    protocol: 'caesar.report/v1', task_id: ID, status: 'success', summary: 'changed a.txt',
    changes: [{ path: 'a.txt', action: 'modified' }], ...over,
  }));
}

function conclude(s: Scene, over: Partial<RunToConclude> = {}) {
  return concludeRun({
    id: ID,
    paths: s.paths,
    // concludeRun reads the mode and the launch's findings only.
    launch: { mode: 'write', findings: [] } as unknown as LaunchSpec,
    placement: s.placement,
    run: exited(),
    translation: {},
    tier: 'file',
    plan: { bin: 'agent', args: [], cwd: s.worktree } as unknown as SpawnPlan,
    state: s.state,
    ...over,
  });
}

describe('engine: concludeRun', () => {
  let s: Scene;
  beforeEach(async () => {
    s = await scene();
  });
  afterEach(async () => {
    await fs.rm(s.repo, { recursive: true, force: true });
  });

  it('an agent that exited 0 with a valid report and a real change: succeeded, verified by git, the diff and usage kept', async () => {
    writeFileSync(path.join(s.worktree, 'a.txt'), 'two\n');
    writeReport(s);
    const c = await conclude(s, { translation: { usage: { input_tokens: 10, output_tokens: 5 } } });
    assert.equal(c.status, 'succeeded');
    assert.equal(c.source, 'file');
    assert.equal(c.verifiedBy, 'git');
    assert.equal(c.agentReportValid, true);
    assert.deepEqual(c.diff?.files.map((f) => f.path), ['a.txt']);
    assert.equal(c.report.summary, 'changed a.txt');
    assert.deepEqual(c.usage, { input_tokens: 10, output_tokens: 5, duration_ms: 1234 }, "the stream's usage, the run's duration");
    assert.equal(c.exitCode, 0);
    assert.equal(c.error, undefined);
  });

  it('paths the agent asked to exclude are left out of the diff and recorded in the state, for apply and gc', async () => {
    writeFileSync(path.join(s.worktree, 'a.txt'), 'two\n');
    writeFileSync(path.join(s.worktree, 'scratch.log'), 'agent noise\n');
    writeReport(s);
    const c = await conclude(s, { plan: { bin: 'agent', args: [], cwd: s.worktree, excludeFromDiff: ['scratch.log'] } as unknown as SpawnPlan });
    assert.deepEqual(c.diff?.files.map((f) => f.path), ['a.txt']);
    await s.state.settled();
    assert.deepEqual(JSON.parse(readFileSync(s.paths.state, 'utf8')).excluded_paths, ['scratch.log']);
  });

  it('exit 0 but the agent\'s own `finished` said failed: failed, whatever the exit code says', async () => {
    writeReport(s);
    const c = await conclude(s, { translatorFinished: { type: 'finished', status: 'failed', summary: 'the model refused', exit_code: 0 } });
    assert.equal(c.status, 'failed');
  });

  it('cancelled, timed out, and a task file that could not be written each set their own status', async () => {
    writeReport(s);
    assert.equal((await conclude(s, { run: exited({ exitCode: null, signal: 'SIGTERM', cancelled: true }) })).status, 'cancelled');
    assert.equal((await conclude(s, { run: exited({ exitCode: null, signal: 'SIGKILL', timedOut: true }) })).status, 'timed_out');
    const full = await conclude(s, { run: exited({ cancelled: true, writeError: 'events.jsonl: ENOSPC' }) });
    assert.equal(full.status, 'failed', 'a write failure outranks the cancel it caused');
    assert.equal(full.error, 'events.jsonl: ENOSPC');
    assert.ok(full.report.findings.some((f) => f.title === 'Task files could not be written' && f.severity === 'high'));
  });

  it('a failed check becomes a high finding with its output, a passed one none', async () => {
    writeReport(s);
    const check = (name: string, exit: number): CheckResult => ({ name, command: `run ${name}`, exit_code: exit, duration_ms: 5, output_tail: `${name} said ${exit}\n` } as CheckResult);
    const c = await conclude(s, { checks: [check('lint', 0), check('test', 1)] });
    const titles = c.report.findings.map((f) => f.title);
    assert.ok(titles.includes('Check "test" failed'), titles.join(', '));
    assert.ok(!titles.some((t) => t.includes('"lint"')), titles.join(', '));
    assert.match(c.report.findings.find((f) => f.title === 'Check "test" failed')!.detail, /exit code 1.*test said 1/s);
    assert.equal(c.checks?.length, 2);
  });

  it('a diff git cannot compute (the worktree gone) is a high finding, not a crash; the changes stay unverified', async () => {
    writeReport(s);
    await fs.rm(s.worktree, { recursive: true, force: true });
    const c = await conclude(s);
    const finding = c.report.findings.find((f) => f.title === 'Diff could not be computed');
    assert.ok(finding, c.report.findings.map((f) => f.title).join(', '));
    assert.equal(finding.severity, 'high');
    assert.equal(c.diff, undefined);
    assert.equal(c.verifiedBy, 'declaration');
  });

  it('no report at all: a synthesized one, naming what git saw', async () => {
    writeFileSync(path.join(s.worktree, 'a.txt'), 'two\n');
    const c = await conclude(s, { translation: { finalText: 'I edited a.txt' } });
    assert.equal(c.source, 'synthesized');
    assert.equal(c.agentReportValid, false);
    assert.deepEqual(c.report.changes.map((x) => x.path), ['a.txt']);
  });
});

describe('engine: synthesizedConclusion', () => {
  const findings: Finding[] = [{ severity: 'medium', title: 'Not sandboxed', detail: 'bwrap missing' }];

  it('a cancel while queued: cancelled, the message as the summary, no error, the findings kept', () => {
    const c = synthesizedConclusion(ID, 'cancelled', 'Cancelled before the agent started.', findings, { exitCode: null, signal: null });
    assert.equal(c.status, 'cancelled');
    assert.equal(c.report.summary, 'Cancelled before the agent started.');
    assert.equal(c.report.status, 'failed');
    assert.equal(c.error, undefined);
    assert.deepEqual(c.report.findings, findings);
    assert.deepEqual([c.source, c.verifiedBy, c.agentReportValid], ['synthesized', 'declaration', false]);
  });

  it('an agent that could not start: failed, the spawn error in the summary and as the error', () => {
    const c = synthesizedConclusion(ID, 'failed', 'spawn agent ENOENT', [], { exitCode: null, signal: null, spawnError: 'spawn agent ENOENT' });
    assert.equal(c.status, 'failed');
    assert.equal(c.error, 'spawn agent ENOENT');
    assert.match(c.report.summary, /^spawn agent ENOENT /);
    assert.equal(c.report.task_id, ID);
  });

  it('a conclusion that hung: failed, the message itself as the summary, the exit of the agent kept', () => {
    const message = 'The agent ended, but concluding the task hung in the diff.';
    const c = synthesizedConclusion(ID, 'failed', message, findings, { exitCode: 0, signal: null, nativeFailure: message });
    assert.equal(c.status, 'failed');
    assert.equal(c.report.summary, message);
    assert.equal(c.exitCode, 0);
    assert.equal(c.signal, null);
    assert.equal(c.error, message);
  });
});

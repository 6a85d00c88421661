import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { startAnthropicServer, startResponsesServer, type FakeServer, type Turn } from '../fake-servers';
import { MODELS, agentEnv, makeRepo, pinnedBinDir, runCaesar, removeScratch, tempDir, type LiveAgent } from './harness';
import { writeScript } from './scripts';

/**
 * Issue 25 live: two REAL CLIs (claude and codex, each against its fake model server) work on one objective with a
 * check Caesar runs itself — it passes for claude and fails for codex in their own runs, since it looks for claude's
 * file. The user commits on HEAD meanwhile. `caesar land` then lands both onto the moved HEAD (codex's check re-run on
 * the combined result now passes), and a third task (claude again, writing claude's file differently) stops the queue
 * with a conflict naming that file and nothing of it applied.
 */

const SERVERS: Record<'claude' | 'codex', (script: Turn[]) => Promise<FakeServer>> = { claude: startAnthropicServer, codex: startResponsesServer };
const OBJECTIVE = 'Leave a note of your work in a file named after you';
const CHECK = 'test -f from-claude.txt';

interface RunOutcome {
  task_id: string;
  status: string;
  report: { status: string } | null;
}

describe('land: two real CLIs on one objective with a check, landed onto a moved HEAD; a third conflicts', function () {
  this.timeout(420_000);
  let root = '';
  let binDir = '';
  const servers: FakeServer[] = [];

  before(() => {
    root = tempDir('caesar-live-land-');
    binDir = pinnedBinDir(root);
  });
  after(async () => {
    for (const s of servers) await s.close();
    removeScratch(root);
  });

  function envFor(agent: LiveAgent, server: FakeServer): NodeJS.ProcessEnv {
    const env: NodeJS.ProcessEnv = { ...process.env, ...agentEnv(agent, server.url, path.join(root, `home-${agent}`)), PATH: `${binDir}:${process.env.PATH ?? ''}` };
    delete env.CI;
    return env;
  }

  async function runAgent(repo: string, agent: 'claude' | 'codex', file: string, content: string): Promise<RunOutcome> {
    const server = await SERVERS[agent](writeScript(agent, file, content));
    servers.push(server);
    const ran = await runCaesar(['run', '--agent', agent, '--mode', 'write', '--isolation', 'worktree', '--model', MODELS[agent], '--timeout', '300s', '--check', CHECK, '--json', OBJECTIVE], { cwd: repo, env: envFor(agent, server) });
    try {
      return JSON.parse(ran.stdout) as RunOutcome;
    } catch {
      throw new Error(`caesar run (${agent}) printed no JSON (exit ${ran.code}).\nstdout: ${ran.stdout}\nstderr: ${ran.stderr}`);
    }
  }

  const git = (repo: string, ...args: string[]) => {
    const r = spawnSync('git', args, { cwd: repo, encoding: 'utf8' });
    assert.equal(r.status, 0, `git ${args.join(' ')}: ${r.stderr}`);
    return r.stdout.trim();
  };
  const checksOf = (repo: string, id: string) => (JSON.parse(fs.readFileSync(path.join(repo, '.caesar', 'tasks', id, 'result.json'), 'utf8')) as { checks?: { exit_code: number | null }[] }).checks ?? [];

  it('lands claude then codex onto the moved HEAD, re-checking the combination; the conflicting third stops with nothing applied', async () => {
    const repo = makeRepo(path.join(root, 'repo'));
    fs.writeFileSync(path.join(repo, '.gitignore'), '.caesar/\n');
    git(repo, 'add', '.gitignore');
    git(repo, 'commit', '-qm', 'ignore .caesar');

    const claude = await runAgent(repo, 'claude', 'from-claude.txt', 'written by claude\n');
    const codex = await runAgent(repo, 'codex', 'from-codex.txt', 'written by codex\n');
    assert.equal(claude.report?.status, 'success', JSON.stringify(claude));
    assert.equal(codex.report?.status, 'success', JSON.stringify(codex));
    assert.deepEqual(checksOf(repo, claude.task_id).map((c) => c.exit_code), [0], 'the check passes on claude’s work');
    assert.notEqual(checksOf(repo, codex.task_id)[0]?.exit_code, 0, 'and fails on codex’s own');
    const third = await runAgent(repo, 'claude', 'from-claude.txt', 'claude, second opinion\n');

    fs.appendFileSync(path.join(repo, 'README.md'), 'The user moved the base.\n');
    git(repo, 'commit', '-qam', 'the user moves the base');
    const head = git(repo, 'rev-parse', 'HEAD');

    const landed = await runCaesar(['land', claude.task_id, codex.task_id, third.task_id, '--json'], { cwd: repo, env: { ...process.env, PATH: `${binDir}:${process.env.PATH ?? ''}` }, timeoutMs: 180_000 });
    assert.equal(landed.code, 1, `the queue stopped: ${landed.stdout}\n${landed.stderr}`);
    const outcome = JSON.parse(landed.stdout) as { head: string; landed: string[]; stopped_at: string; tasks: { status: string; checks?: { exit_code: number | null }[]; conflicts?: { path: string }[] }[] };
    assert.equal(outcome.head, head);
    assert.deepEqual(outcome.tasks.map((t) => t.status), ['landed', 'landed', 'conflict'], landed.stdout);
    assert.deepEqual(outcome.tasks[1]!.checks?.map((c) => c.exit_code), [0], 'codex’s check passes on the combined result');
    assert.deepEqual(outcome.tasks[2]!.conflicts?.map((c) => c.path), ['from-claude.txt']);
    assert.equal(fs.readFileSync(path.join(repo, 'from-claude.txt'), 'utf8'), 'written by claude\n', 'nothing of the third applied');
    assert.equal(fs.readFileSync(path.join(repo, 'from-codex.txt'), 'utf8'), 'written by codex\n');
    assert.match(fs.readFileSync(path.join(repo, 'README.md'), 'utf8'), /The user moved the base/);
    assert.equal(git(repo, 'rev-parse', 'HEAD'), head, 'HEAD is the user’s');
  });
});

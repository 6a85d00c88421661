import { strict as assert } from 'node:assert';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { locateSupervisor } from '../../../src/engine/launch/supervisor-process';
import { delegateTask } from '../../../src/engine/tasks';
import { idleWorktrees } from '../../../src/engine/git/worktree-pool';
import { ResultDocSchema, TaskStateSchema, taskPaths, type TaskState } from '../../../src/protocol';
import { readJsonFile } from '../../../src/engine/store/atomic';
import { cleanupTemp, makeRepo, tempDir } from './helpers';
import { buildShippedCli } from '../runtime/helpers';

async function until<T>(what: string, probe: () => Promise<T | undefined> | T | undefined, ms = 60_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function finalState(root: string, id: string): Promise<TaskState> {
  return until(`task ${id} to end`, async () => {
    const state = await readJsonFile(taskPaths(root, id).state, TaskStateSchema).catch(() => undefined);
    return state && !['pending', 'running'].includes(state.status) ? state : undefined;
  });
}

describe('engine/git/git: warm worktree pool, through the lean supervisor', function () {
  this.timeout(120_000);
  let cli: string;
  let caches: string;
  before(async () => {
    cli = await buildShippedCli();
    caches = tempDir('caesar-compile-cache-');
  });
  afterEach(cleanupTemp);

  it('the second task of a repository with [worktree] pool = 1 runs in the worktree the first one left warm', async () => {
    const repo = makeRepo({ 'a.txt': 'a\n' });
    mkdirSync(path.join(repo, '.caesar'), { recursive: true });
    const script = 'echo "$CAESAR_TASK_ID" > "written-by-$CAESAR_TASK_ID.txt"; printf \'{"protocol":"caesar.report/v1","status":"success","summary":"ok","changes":[]}\' > "$CAESAR_REPORT_PATH"';
    writeFileSync(
      path.join(repo, '.caesar', 'config.toml'),
      `[worktree]\npool = 1\n\n[[agent]]\nid = "writer"\nbin = "/bin/sh"\nargs = ["-c", ${JSON.stringify(script)}, "{{prompt}}"]\n`,
    );
    assert.equal(locateSupervisor({ cliScript: cli }), path.join(path.dirname(cli), 'supervisor.js'), 'the lean supervisor beside the CLI bundle is the one started');
    const env = { ...process.env, CAESAR_COMPILE_CACHE: caches };
    const run = async () => {
      const task = await delegateTask(repo, { objective: 'write a file', agent: 'writer', isolation: 'worktree', mode: 'write' }, { env, supervisorEnv: env, cliScript: cli, trusted: true });
      return { id: task.id, state: await finalState(repo, task.id) };
    };

    const first = await run();
    assert.equal(first.state.status, 'succeeded', first.state.error);
    // The supervisor's loader kept V8's compiled code for the next task (Node's own cache on Node ≥ 22.1).
    await until('the compile cache', () => (readdirSync(caches).length ? true : undefined));
    // The first task found the pool empty; its supervisor filled it once the agent ran.
    const [idle] = await until('an idle pooled worktree', async () => {
      const names = await idleWorktrees(repo);
      return names.length && !existsSync(path.join(repo, '.caesar', 'wt', '.pool', '.refill.lock')) ? names : undefined;
    });
    const idleInode = statSync(path.join(repo, '.caesar', 'wt', idle!)).ino;

    const second = await run();
    assert.equal(second.state.status, 'succeeded', second.state.error);
    assert.equal(second.state.worktree, path.join(repo, '.caesar', 'wt', second.id));
    assert.equal(statSync(second.state.worktree!).ino, idleInode, 'the warm worktree was handed out');
    const result = await readJsonFile(taskPaths(repo, second.id).result, ResultDocSchema);
    assert.deepEqual(result?.diff?.files.map((f) => f.path), [`written-by-${second.id}.txt`], 'only its own file: nothing of the first task');
    assert.equal(readFileSync(path.join(second.state.worktree!, `written-by-${second.id}.txt`), 'utf8'), `${second.id}\n`);
  });
});

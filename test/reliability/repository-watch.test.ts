import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { applyTaskById, discardTask, diffTask } from '../../src/engine/tasks';
import { baseRefPin } from '../../src/engine/git/repository-watch';
import { call, serve, structured } from '../mcp/orchestrator-helpers';
import { concludeLostTasks } from '../../src/engine/run/conclude';
import { TaskStore } from '../../src/engine/store/store';
import { buildCli, git, makeRepo, pidAlive, readFinished, runBuiltCli, startFixture, waitFor, waitForFinished, type Finished } from '../engine/runtime/helpers';

/*
 * Issue 22, item 2: the repository is watched, not trusted. With the sandbox off (`UNCONFINED`, set on each task that
 * writes the shared git dir: the watch is what protects a task that runs without the sandbox — mode "off", macOS, no
 * bwrap — and sandboxed those writes are refused, test/reliability/sandbox-hostile.test.ts), an agent writes the
 * shared git dir from its worktree: a hook, the shared config, info/attributes, the user's branches and tags. Each is a critical finding naming it, result.json lists it, and apply refuses until the user accepts it. The
 * task's base_ref is pinned by refs/caesar/base/<id>: a prune after the user reset their branch cannot take it.
 * Every agent here is a real shell script run as an [[agent]] template by the real supervisor.
 */

const scripts: string[] = [];

/** A shell agent whose body runs in its worktree (its cwd). */
function shellAgent(body: string) {
  const dir = mkdtempSync(path.join(tmpdir(), 'caesar-watch-agent-'));
  scripts.push(dir);
  const file = path.join(dir, 'agent.sh');
  writeFileSync(file, `#!/bin/sh\nset -e\n${body}\n`);
  chmodSync(file, 0o755);
  return { id: 'shell', bin: '/bin/sh', args: [file] };
}

/** The sandbox off for this task: its agent writes the shared git dir, which only an unconfined agent can. */
const UNCONFINED = { mode: 'off' } as const;

async function runShellTask(repo: string, body: string, sandbox?: typeof UNCONFINED): Promise<Finished & { id: string }> {
  const { id } = await startFixture(repo, {}, { agent: 'shell', generic_agent: shellAgent(body), objective: 'shell agent', ...(sandbox ? { sandbox } : {}) });
  return { id, ...(await waitForFinished(repo, id, 60_000)) };
}

const COMMIT = 'git -c user.name=A -c user.email=a@example.invalid commit -q';

function titles(done: Finished): string[] {
  return done.result.report.findings.filter((f) => f.severity === 'critical').map((f) => f.title);
}

function refExists(repo: string, ref: string): boolean {
  return spawnSync('git', ['show-ref', '--verify', '--quiet', ref], { cwd: repo }).status === 0;
}

describe('reliability: the repository is watched, not trusted (issue 22)', function () {
  this.timeout(120_000);
  const repos: string[] = [];
  const repo = (files?: Record<string, string>) => {
    const dir = makeRepo(files);
    repos.push(dir);
    return dir;
  };
  before(buildCli);
  after(() => {
    for (const dir of [...repos, ...scripts]) rmSync(dir, { recursive: true, force: true });
  });

  it('a task that leaves the git dir alone: no change, the pin holds base_ref, apply needs no acceptance, discard drops the pin', async () => {
    const r = repo({ 'a.txt': 'one\n' });
    const done = await runShellTask(r, 'echo two >> a.txt\ngit status --short >/dev/null');
    assert.equal(done.state.status, 'succeeded');
    assert.deepEqual(done.result.repository_changes, []);
    assert.deepEqual(titles(done), []);
    assert.equal(git(r, 'rev-parse', baseRefPin(done.id)), done.state.base_ref);
    const applied = await applyTaskById(r, done.id);
    assert.equal(applied.applied, true, applied.message);
    await discardTask({ root: r, state: done.state });
    assert.equal(refExists(r, baseRefPin(done.id)), false, 'discard removes the pin');
  });

  it('a hook, the shared config, info/attributes, a moved branch and tag: one critical finding each; apply refuses until accepted', async () => {
    const r = repo({ 'a.txt': 'one\n' });
    git(r, 'branch', 'feature');
    git(r, 'tag', 'v1');
    const before = git(r, 'rev-parse', 'HEAD');
    const common = path.resolve(r, git(r, 'rev-parse', '--git-common-dir'));
    const done = await runShellTask(
      r,
      [
        'echo two >> a.txt',
        'common=$(git rev-parse --git-common-dir)',
        'printf "#!/bin/sh\\necho planted\\n" > "$common/hooks/pre-commit"; chmod +x "$common/hooks/pre-commit"',
        'git config core.editor planted-editor',
        'mkdir -p "$common/info"; echo "* filter=planted" > "$common/info/attributes"',
        // Planted to stall or flood a reader that follows links or blocks: recorded by what they are, never read.
        'ln -s /dev/zero "$common/hooks/post-checkout"; mkfifo "$common/info/fifo"',
        `${COMMIT} --allow-empty -m moved`,
        'git update-ref refs/heads/feature HEAD',
        'git tag -f v1 HEAD >/dev/null',
      ].join('\n'),
      UNCONFINED,
    );
    assert.equal(done.state.status, 'succeeded');
    const moved = git(r, 'rev-parse', 'refs/heads/feature');
    assert.notEqual(moved, before, 'control: the agent did move the branch');
    const expected = [
      'config changed: + core.editor=planted-editor',
      'hooks/post-checkout added',
      'hooks/pre-commit added',
      'info/attributes added',
      'info/fifo added',
      `refs/heads/feature moved from ${before.slice(0, 12)} to ${moved.slice(0, 12)}`,
      `refs/tags/v1 moved from ${before.slice(0, 12)} to ${moved.slice(0, 12)}`,
    ];
    const changes = done.result.repository_changes ?? [];
    for (const change of expected) {
      assert.ok(changes.includes(change), `${change} in ${JSON.stringify(changes)}`);
      assert.ok(titles(done).includes(`Repository changed during the task: ${change}`), change);
    }
    assert.equal(changes.length, expected.length, JSON.stringify(changes));

    const refused = await applyTaskById(r, done.id);
    assert.equal(refused.applied, false);
    assert.equal(refused.reason, 'repository_changed');
    assert.deepEqual(refused.repository_changes, changes);
    assert.equal(readFileSync(path.join(r, 'a.txt'), 'utf8'), 'one\n', 'nothing was written');

    const cliRefused = await runBuiltCli(['apply', done.id], r, 30_000);
    assert.equal(cliRefused.code, 1);
    assert.match(cliRefused.stdout, /hooks\/pre-commit added/);
    assert.match(cliRefused.stdout, /--accept-repository-changes/);
    const accepted = await runBuiltCli(['apply', done.id, '--accept-repository-changes'], r, 30_000);
    assert.equal(accepted.code, 0, accepted.stdout + accepted.stderr);
    assert.equal(readFileSync(path.join(r, 'a.txt'), 'utf8'), 'one\ntwo\n');
    assert.ok(existsSync(path.join(common, 'hooks', 'pre-commit')), 'what the agent planted is reported, not removed');
  });

  it('an agent that deletes refs/heads/main: a critical finding naming it; MCP caesar_apply refuses until the person accepts', async () => {
    const r = repo({ 'a.txt': 'one\n' });
    const before = git(r, 'rev-parse', 'HEAD');
    const done = await runShellTask(r, 'echo two >> a.txt\ngit update-ref -d refs/heads/main', UNCONFINED);
    assert.equal(refExists(r, 'refs/heads/main'), false, 'control: the agent deleted it');
    const change = `refs/heads/main deleted (was ${before.slice(0, 12)})`;
    assert.deepEqual(done.result.repository_changes, [change]);
    assert.deepEqual(titles(done), [`Repository changed during the task: ${change}`]);
    const served = await serve(r);
    try {
      const refused = structured(await call(served.client, 'caesar_apply', { task_id: done.id }));
      assert.equal(refused.applied, false);
      assert.equal(refused.reason, 'repository_changed');
      assert.deepEqual(refused.repository_changes, [change]);
    } finally {
      await served.close();
    }
    // The person accepts through the client's elicitation (issue 34: the client's own flag is not taken).
    const asking = await serve(r, {
      capabilities: { elicitation: {} },
      setup: (client) => client.setRequestHandler(ElicitRequestSchema, async () => ({ action: 'accept', content: { accept: true } })),
    });
    try {
      const accepted = structured(await call(asking.client, 'caesar_apply', { task_id: done.id }));
      assert.equal(accepted.applied, true, String(accepted.message));
    } finally {
      await asking.close();
    }
    assert.equal(readFileSync(path.join(r, 'a.txt'), 'utf8'), 'one\ntwo\n');
  });

  it('the pin: base_ref survives an expired reflog and gc --prune=now when nothing else reaches it; gc removes the pin with the worktree', async () => {
    const r = repo({ 'a.txt': 'one\n' });
    writeFileSync(path.join(r, 'b.txt'), 'user work\n');
    git(r, 'add', 'b.txt');
    git(r, 'commit', '-q', '-m', 'user commit');
    const base = git(r, 'rev-parse', 'HEAD');
    // The agent leaves its branch: a detached orphan commit of its work, its own branch deleted (no new ref: nothing
    // for the watch to report). Only the pin reaches base.
    const done = await runShellTask(
      r,
      [
        'echo two >> a.txt',
        'git checkout -q --orphan scratch',
        `${COMMIT} -m orphan`,
        'git checkout -q --detach',
        'git branch -q -D scratch',
        `git branch -q -D "caesar/$(basename "$PWD")"`,
      ].join('\n'),
      UNCONFINED,
    );
    assert.equal(done.state.status, 'succeeded');
    assert.deepEqual(done.result.repository_changes, []);
    assert.equal(done.state.base_ref, base);
    // The user resets their branch away from base and cleans up.
    git(r, 'reset', '-q', '--hard', 'HEAD~1');
    git(r, 'reflog', 'expire', '--expire=now', '--all');
    git(r, 'gc', '-q', '--prune=now');
    git(r, 'cat-file', '-e', `${base}^{commit}`);
    const diff = await diffTask(r, done.id);
    assert.deepEqual(diff.files.map((f) => f.path), ['a.txt']);
    const applied = await applyTaskById(r, done.id);
    assert.equal(applied.applied, true, applied.message);
    assert.equal(readFileSync(path.join(r, 'a.txt'), 'utf8'), 'one\ntwo\n');

    const discard = await runBuiltCli(['discard', done.id], r, 30_000);
    assert.equal(discard.code, 0, discard.stdout + discard.stderr);
    assert.equal(refExists(r, baseRefPin(done.id)), false, 'the pin goes with the worktree');
    // Control: without the pin the same prune takes base — the pin is what kept it.
    git(r, 'reflog', 'expire', '--expire=now', '--all');
    git(r, 'gc', '-q', '--prune=now');
    assert.notEqual(spawnSync('git', ['cat-file', '-e', `${base}^{commit}`], { cwd: r }).status, 0, 'base is gone once unpinned');
  });

  it('caesar gc removes the pin of the worktree it collects, and pins whose worktree is gone; keeps a kept task\'s', async () => {
    const r = repo({ 'a.txt': 'one\n' });
    const kept = await runShellTask(r, 'echo kept > kept.txt');
    const done = await runShellTask(r, 'echo two >> a.txt');
    assert.ok(refExists(r, baseRefPin(done.id)));
    const stale = baseRefPin('t_0123456789abcdef0123456789abcdef');
    git(r, 'update-ref', stale, 'HEAD');
    const applied = await applyTaskById(r, done.id);
    assert.equal(applied.applied, true, applied.message);
    const gc = await runBuiltCli(['gc'], r, 60_000);
    assert.equal(gc.code, 0, gc.stdout + gc.stderr);
    assert.equal(existsSync(done.state.worktree!), false, `gc collected the applied worktree: ${gc.stdout}`);
    assert.equal(refExists(r, baseRefPin(done.id)), false, 'gc removed the pin');
    assert.equal(refExists(r, stale), false, 'a pin without its worktree is swept');
    assert.ok(existsSync(kept.state.worktree!), 'unapplied work is kept');
    assert.ok(refExists(r, baseRefPin(kept.id)), 'and so is its pin');
  });

  it('a task whose supervisor died: gc\'s conclusion compares the git dir with the snapshot the supervisor left', async () => {
    const r = repo({ 'a.txt': 'one\n' });
    const common = path.resolve(r, git(r, 'rev-parse', '--git-common-dir'));
    const { id } = await startFixture(r, {}, {
      agent: 'shell',
      generic_agent: shellAgent('common=$(git rev-parse --git-common-dir)\necho "#!/bin/sh" > "$common/hooks/post-merge"\nsleep 30'),
      objective: 'shell agent',
      sandbox: UNCONFINED,
    });
    const store = new TaskStore(r);
    const running = await waitFor('the hook planted', async () => {
      const view = await store.get(id);
      return view?.state.status === 'running' && existsSync(path.join(common, 'hooks', 'post-merge')) ? view : undefined;
    });
    process.kill(running.state.supervisor_pid!, 'SIGKILL');
    await waitFor('supervisor dead', () => !pidAlive(running.state.supervisor_pid!) || undefined);
    await concludeLostTasks(r, { dryRun: false });
    const done = await readFinished(r, id);
    assert.equal(done.state.status, 'failed');
    assert.deepEqual(done.result.repository_changes, ['hooks/post-merge added']);
    assert.ok(titles(done).includes('Repository changed during the task: hooks/post-merge added'));
    assert.equal((await applyTaskById(r, id)).reason, 'repository_changed');
  });
});

import { strict as assert } from 'node:assert';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { TaskSchema, taskPaths } from '../../../src/protocol';
import {
  DelegationRefusedError,
  RequestError,
  continueTask,
  delegateTask,
  diffTask,
  discardTask,
  requireTaskView,
  reviewCommentsPath,
  snapshotWorktree,
} from '../../../src/engine/tasks';
import { buildCli, git, makeRepo, waitForFinished } from '../runtime/helpers';
import { cli } from '../../cli/follow-helpers';

/**
 * Continue with Feedback, with real git and real supervisors: a project agent (a shell script) writes first.txt and
 * edits README.md on its first run; run again, it records whether it found that work in its working directory.
 */
describe('engine/tasks: continueTask (Continue with Feedback)', function () {
  this.timeout(90_000);
  before(async () => {
    await buildCli();
  });

  const AGENT = `#!/usr/bin/env bash
set -e
if [ -f first.txt ]; then
  { echo "found first.txt: $(cat first.txt)"; echo "readme: $(tail -n 1 README.md)"; } > second.txt
else
  echo one > first.txt
  echo "edited by the first task" >> README.md
  echo scratch > ignored.log
fi
echo '{"protocol":"caesar.report/v1","status":"success","summary":"ok"}' > "$CAESAR_REPORT_PATH"
`;

  function repoWithAgent(): string {
    const repo = makeRepo({ 'README.md': '# test repo\n', '.gitignore': '.caesar/\n*.log\n' });
    const script = path.join(repo, '.caesar/agent.sh');
    mkdirSync(path.dirname(script), { recursive: true });
    writeFileSync(script, AGENT);
    chmodSync(script, 0o755);
    writeFileSync(path.join(repo, '.caesar/config.toml'), '[[agent]]\nid = "local"\nbin = "./.caesar/agent.sh"\nargs = ["{{prompt}}"]\n');
    return repo;
  }

  /** What the user owns in the main checkout: refs (except caesar's task branches and base pins), the index bytes, HEAD, status. */
  function userSide(repo: string): { refs: string; index: string; head: string; status: string } {
    const refs = git(repo, 'for-each-ref', '--format=%(refname) %(objectname)')
      .split('\n')
      .filter((line) => !line.startsWith('refs/heads/caesar/') && !line.startsWith('refs/caesar/'))
      .join('\n');
    // --no-optional-locks: a plain `git status` refreshes the index itself, which is the very thing watched here.
    const status = git(repo, '--no-optional-locks', 'status', '--porcelain');
    return { refs, index: readFileSync(path.join(repo, '.git/index')).toString('base64'), head: git(repo, 'rev-parse', 'HEAD'), status };
  }

  async function firstTask(repo: string): Promise<string> {
    const first = await delegateTask(repo, { objective: 'write first.txt', agent: 'local', isolation: 'worktree' }, { trusted: true });
    const done = await waitForFinished(repo, first.id);
    assert.equal(done.state.status, 'succeeded', done.state.error);
    return first.id;
  }

  it("starts a new task on the same agent from the old task's worktree: its diff holds both tasks' work, the user's checkout untouched", async () => {
    const repo = repoWithAgent();
    const oldId = await firstTask(repo);
    const old = await requireTaskView(repo, oldId);
    const oldWorktreeStatus = git(old.state.worktree!, '--no-optional-locks', 'status', '--porcelain');
    const oldWorktreeIndex = readFileSync(path.join(git(old.state.worktree!, 'rev-parse', '--absolute-git-dir'), 'index')).toString('base64');
    const before = userSide(repo);

    const comments = [
      { file: 'first.txt', line: 1, text: 'say "two" here' },
      { file: 'README.md', line: 2, text: 'keep this line\nbut shorter' },
    ];
    const continued = await continueTask(repo, oldId, 'Now write second.txt', { comments, trusted: true });
    assert.equal(continued.continued_from, oldId);
    assert.equal(continued.launch.agent, 'local');
    assert.equal(continued.launch.parent_task_id, oldId);
    assert.match(continued.base_commit ?? '', /^[0-9a-f]{40}$/);
    assert.deepEqual(userSide(repo), before, 'no ref, no index byte, no status line of the user changed by the snapshot');

    const done = await waitForFinished(repo, continued.id);
    assert.equal(done.state.status, 'succeeded', done.state.error);
    assert.equal(done.state.parent_task_id, oldId, 'the tree nests the follow-up under the task it continues');
    assert.equal(done.state.base_ref, old.state.base_ref, 'the diff is still taken against the first base');
    const worktree = done.state.worktree!;
    assert.equal(readFileSync(path.join(worktree, 'second.txt'), 'utf8'), 'found first.txt: one\nreadme: edited by the first task\n', "the agent started from the old task's files");
    assert.ok(!existsSync(path.join(worktree, 'ignored.log')), 'ignored files are not carried over');
    assert.equal(git(worktree, 'rev-parse', 'HEAD'), continued.base_commit, 'the worktree is checked out at the snapshot');
    assert.equal(git(worktree, 'rev-parse', 'HEAD^1'), old.state.base_ref, "the snapshot's parent is the old base");

    const diff = await diffTask(repo, continued.id);
    assert.deepEqual(diff.files.map((f) => `${f.action} ${f.path}`).sort(), ['created first.txt', 'created second.txt', 'modified README.md']);

    const task = TaskSchema.parse(JSON.parse(readFileSync(taskPaths(repo, continued.id).task, 'utf8')));
    assert.equal(task.objective, 'Now write second.txt');
    assert.match(task.context, /The objective of task t_\w+ was:\nwrite first\.txt/);
    assert.match(task.context, /- first\.txt:1: say "two" here\n- README\.md:2: keep this line\n {2}but shorter/);

    assert.deepEqual(userSide(repo), before, 'the user checkout is still as it was after the follow-up ran');
    assert.equal(git(old.state.worktree!, '--no-optional-locks', 'status', '--porcelain'), oldWorktreeStatus, "the old task's worktree is as it was");
    assert.equal(readFileSync(path.join(git(old.state.worktree!, 'rev-parse', '--absolute-git-dir'), 'index')).toString('base64'), oldWorktreeIndex, "the old worktree's index was not written");
  });

  it('refuses a task without a worktree left, empty feedback, and an unknown task, leaving no task directory', async () => {
    const repo = repoWithAgent();
    const oldId = await firstTask(repo);
    const tasks = () => git(repo, 'for-each-ref', 'refs/heads/caesar/').split('\n').filter(Boolean).length;
    await assert.rejects(continueTask(repo, oldId, '   '), (err: unknown) => err instanceof DelegationRefusedError && err.code === 'usage');
    await assert.rejects(continueTask(repo, 't_00000000000000000000000000000000', 'x'), (err: unknown) => err instanceof RequestError && err.code === 'unknown_task');
    const view = await requireTaskView(repo, oldId);
    await discardTask({ root: repo, state: view.state });
    await assert.rejects(continueTask(repo, oldId, 'more', { trusted: true }), /no longer exists/);
    assert.equal(tasks(), 0, 'no follow-up branch was created');
  });

  it('`caesar continue` sends the unsent review comments stored by the editor, and says where the follow-up started', async () => {
    const repo = repoWithAgent();
    const oldId = await firstTask(repo);
    writeFileSync(
      reviewCommentsPath(repo, oldId),
      JSON.stringify({
        version: 1,
        comments: [
          { id: 'a', file: 'first.txt', line: 1, text: 'not "one": "uno"' },
          { id: 'b', file: 'README.md', line: 1, text: 'already handled', sent_in: 't_11111111111111111111111111111111' },
        ],
      }),
    );
    // The project agent is a program the repository's config names: trusted first, as a user would (private HOME).
    const env = { ...process.env, HOME: realpathSync(mkdtempSync(path.join(tmpdir(), 'caesar-continue-home-'))) };
    assert.equal((await cli(repo, ['trust'], { env })).code, 0);
    const r = await cli(repo, ['continue', oldId, 'translate', 'it', '--json'], { env });
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout) as { task_id: string; continued_from: string; base_commit: string; comments: number };
    assert.equal(out.continued_from, oldId);
    assert.equal(out.comments, 1, 'the comment already sent is not sent again');
    assert.match(out.base_commit, /^[0-9a-f]{40}$/);
    const done = await waitForFinished(repo, out.task_id);
    assert.equal(done.state.status, 'succeeded', done.state.error);
    const task = TaskSchema.parse(JSON.parse(readFileSync(taskPaths(repo, out.task_id).task, 'utf8')));
    assert.equal(task.objective, 'translate it');
    assert.match(task.context, /- first\.txt:1: not "one": "uno"/);
    assert.doesNotMatch(task.context, /already handled/);
    const bad = await cli(repo, ['continue', 'nonsense', 'x']);
    assert.equal(bad.code, 2, 'a malformed id is a usage error');
  });

  it('snapshotWorktree commits tracked, modified and new files, leaves out excluded paths, and writes no ref or index', async () => {
    const repo = makeRepo({ 'README.md': 'one\n', 'keep/a.txt': 'a\n' });
    writeFileSync(path.join(repo, 'README.md'), 'two\n');
    writeFileSync(path.join(repo, 'new.txt'), 'new\n');
    mkdirSync(path.join(repo, 'node_modules/x'), { recursive: true });
    writeFileSync(path.join(repo, 'node_modules/x/index.js'), '//\n');
    const before = userSide(repo);
    const head = git(repo, 'rev-parse', 'HEAD');
    const commit = await snapshotWorktree(repo, head, ['node_modules'], 'snapshot');
    assert.deepEqual(userSide(repo), before);
    assert.equal(git(repo, 'rev-parse', `${commit}^1`), head);
    assert.deepEqual(git(repo, 'ls-tree', '-r', '--name-only', commit).split('\n').sort(), ['.gitignore', 'README.md', 'keep/a.txt', 'new.txt']);
    assert.equal(git(repo, 'show', `${commit}:README.md`), 'two');
  });
});

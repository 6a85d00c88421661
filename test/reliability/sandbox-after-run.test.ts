import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { sandboxPreflight } from '../../src/engine/sandbox';
import { git, makeRepo, startFixture, waitForFinished, type Finished } from '../engine/runtime/helpers';
import { probeAgent, probeResults, type Probe } from '../engine/sandbox/helpers';

/**
 * Issue 21, what the agent leaves behind: inside the sandbox it may write its worktree (the `.git` file included),
 * its worktree's git entry (`commondir`, `gitdir`, `config.worktree`) and its private object store. Caesar's own git
 * calls after the run, and the user's git in that worktree later (a `git status`, or the editor's git extension
 * opening one of its files), run outside the sandbox: none of them may be steered by those files into writing
 * outside the task or running a program the agent named.
 */
(process.platform === 'linux' ? describe : describe.skip)('reliability: what a sandboxed agent leaves cannot act after the run', function () {
  this.timeout(90_000);
  let marker: string;

  before(async function () {
    if (!(await sandboxPreflight()).available) this.skip();
  });
  beforeEach(() => {
    marker = path.join(realpathSync(mkdtempSync(path.join(tmpdir(), 'caesar-after-run-'))), 'ran');
  });

  async function run(root: string, probes: Probe[]): Promise<Finished> {
    const { id } = await startFixture(root, {}, { ...probeAgent(probes), sandbox: { mode: 'required' } });
    return waitForFinished(root, id);
  }

  /** What a user does in a task's worktree after it ran (or the editor's git extension, opening one of its files). */
  function userGitStatus(worktree: string): void {
    try {
      execFileSync('git', ['status', '--porcelain'], { cwd: worktree, stdio: 'ignore' });
    } catch {
      // git refusing is fine: what matters is what it ran
    }
  }

  it('a removed .git file and a corrupt object never make Caesar rewrite the index of the user\'s checkout', async () => {
    const root = makeRepo({ 'README.md': '# test repo\n' });
    writeFileSync(path.join(root, 'staged-by-user.txt'), 'mine\n');
    git(root, 'add', 'staged-by-user.txt');
    const start = git(root, 'rev-parse', 'HEAD');
    // Without its .git file, discovery from the worktree climbs to the user's checkout; a corrupt copy of the start
    // commit in the private store (read before the shared one) fails Caesar's bring-back, whose fallback was `read-tree`.
    const corrupt = `mkdir -p "$GIT_OBJECT_DIRECTORY/${start.slice(0, 2)}" && echo garbage > "$GIT_OBJECT_DIRECTORY/${start.slice(0, 2)}/${start.slice(2)}"`;
    const done = await run(root, [['drop .git and corrupt the start commit', `rm .git && ${corrupt}`]]);
    assert.equal(probeResults(done.state.worktree!).get('drop .git and corrupt the start commit'), 'ok');
    assert.equal(git(root, 'diff', '--cached', '--name-only'), 'staged-by-user.txt', 'the user\'s staging area changed');
  });

  it('a .git file naming another repository never makes Caesar write a ref there', async () => {
    const root = makeRepo({ 'README.md': '# test repo\n' });
    const other = makeRepo({ 'other.txt': 'another project of the user\n' });
    // Its objects reach the private store through an alternates file the agent writes there.
    const probe = `echo ${other}/.git/objects > "$GIT_OBJECT_DIRECTORY/info/alternates" && echo "gitdir: ${other}/.git" > .git`;
    const done = await run(root, [['point .git at another repository', `mkdir -p "$GIT_OBJECT_DIRECTORY/info" && ${probe}`]]);
    assert.equal(probeResults(done.state.worktree!).get('point .git at another repository'), 'ok');
    assert.equal(git(other, 'for-each-ref', '--format=%(refname)'), 'refs/heads/main', 'a ref was written in another repository');
  });

  it('a .git directory the agent planted in place of its .git file runs nothing when the user runs git there', async () => {
    const root = makeRepo({ 'README.md': '# test repo\n' });
    const plant = `rm .git && env -u GIT_OBJECT_DIRECTORY -u GIT_ALTERNATE_OBJECT_DIRECTORIES git init -q . && git config core.fsmonitor "touch ${marker}"`;
    const done = await run(root, [['plant a .git directory', plant]]);
    assert.equal(probeResults(done.state.worktree!).get('plant a .git directory'), 'ok');
    userGitStatus(done.state.worktree!);
    assert.equal(existsSync(marker), false, 'the planted fsmonitor ran as the user');
  });

  it('a config.worktree in the worktree\'s git entry runs nothing when the user runs git there', async () => {
    const root = makeRepo({ 'README.md': '# test repo\n' });
    git(root, 'config', 'extensions.worktreeConfig', 'true'); // set by sparse-checkout, for one
    const entry = '$(git rev-parse --absolute-git-dir)';
    const done = await run(root, [['plant config.worktree', `printf '[core]\\n\\tfsmonitor = touch ${marker}\\n' > "${entry}/config.worktree"`]]);
    assert.equal(probeResults(done.state.worktree!).get('plant config.worktree'), 'ok');
    userGitStatus(done.state.worktree!);
    assert.equal(existsSync(marker), false, 'the planted fsmonitor ran as the user');
    assert.equal(done.state.status, 'succeeded');
  });

  it('a commondir rewritten in the worktree\'s git entry runs nothing when the user runs git there', async () => {
    const root = makeRepo({ 'README.md': '# test repo\n' });
    // A common dir of the agent's own (in its worktree) whose config names a program, its entry's commondir aimed there.
    const fake = `cp -r "$(git rev-parse --git-common-dir)" "$PWD/.fake-common" && git config -f "$PWD/.fake-common/config" core.fsmonitor "touch ${marker}"`;
    const done = await run(root, [['rewrite commondir', `${fake} && echo "$PWD/.fake-common" > "$(git rev-parse --absolute-git-dir)/commondir"`]]);
    assert.equal(probeResults(done.state.worktree!).get('rewrite commondir'), 'ok');
    userGitStatus(done.state.worktree!);
    assert.equal(existsSync(marker), false, 'the planted fsmonitor ran as the user');
    const entry = git(done.state.worktree!, 'rev-parse', '--absolute-git-dir');
    assert.equal(readFileSync(path.join(entry, 'commondir'), 'utf8').trim(), '../..');
  });
});

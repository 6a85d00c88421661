import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { taskPaths } from '../../src/protocol';
import { git, makeRepo, startFixture, waitForFinished, type Finished } from '../engine/runtime/helpers';
import { probeAgent, probeResults, type Probe } from '../engine/sandbox/helpers';
import { needs } from '../support/needs';

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
    await needs(this, 'bubblewrap');
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
  // Git never tracks a .git, so a repository planted in a subfolder is in no diff; but git run in that folder (the
  // editor's Git extension does, for the repository of every file the diff opens) would run what its config names.
  const UNSET = 'env -u GIT_OBJECT_DIRECTORY -u GIT_ALTERNATE_OBJECT_DIRECTORIES -u GIT_DIR -u GIT_WORK_TREE -u GIT_COMMON_DIR';
  for (const sandboxed of [true, false]) {
    it(`a repository planted in a subfolder (a .git folder, a .git file) is moved aside: git there runs nothing${sandboxed ? '' : ' (unconfined)'}`, async () => {
      const root = makeRepo({ 'README.md': '# test repo\n', 'src/app.js': 'app\n', 'docs/guide.md': 'guide\n' });
      const folder = `(cd src && ${UNSET} git init -q . && git config core.fsmonitor "touch ${marker}")`;
      const file = `${UNSET} git init -q --bare .planted && git config -f .planted/config core.fsmonitor "touch ${marker}" && git config -f .planted/config core.bare false && echo "gitdir: ../.planted" > docs/.git`;
      const probes: Probe[] = [['plant src/.git', folder], ['plant docs/.git', file], ['change a file', 'echo changed >> src/app.js']];
      const { id } = await startFixture(root, {}, { ...probeAgent(probes), sandbox: { mode: sandboxed ? 'required' : 'off' } });
      const done = await waitForFinished(root, id);
      const worktree = done.state.worktree!;
      for (const label of ['plant src/.git', 'plant docs/.git']) assert.equal(probeResults(worktree).get(label), 'ok', label);
      for (const folderOf of ['src', 'docs']) userGitStatus(path.join(worktree, folderOf));
      assert.equal(existsSync(marker), false, 'the planted fsmonitor ran as the user');
      assert.equal(existsSync(path.join(worktree, 'src', '.git')) || existsSync(path.join(worktree, 'docs', '.git')), false);
      const finding = done.result.report.findings.find((f) => f.title === 'Nested repository moved aside');
      assert.ok(finding && finding.severity === 'high', JSON.stringify(done.result.report.findings));
      assert.match(finding.detail, /docs\/\.git, src\/\.git/);
      const kept = readdirSync(taskPaths(root, id).nestedGitMovedAside);
      assert.deepEqual(kept.sort(), ['0-docs__.git', '1-src__.git'], 'both kept in the task folder, for a look');
      assert.ok(done.result.diff?.files.some((f) => f.path === 'src/app.js'), 'the diff is the task\'s, src/ included');
    });
  }

  it('writing in place, a repository the agent plants in the checkout is moved aside; the checkout\'s own stay', async () => {
    const root = makeRepo({ 'README.md': '# test repo\n', 'src/app.js': 'app\n' });
    // The user's own nested repository (with a commit: the in-place snapshot's `git add -A` refuses one without).
    const lib = path.join(root, 'vendor', 'lib');
    execFileSync('git', ['init', '-q', lib]);
    execFileSync('git', ['-C', lib, '-c', 'user.name=u', '-c', 'user.email=u@example.invalid', 'commit', '-q', '--allow-empty', '-m', 'init']);
    const plant = `(cd src && ${UNSET} git init -q . && git config core.fsmonitor "touch ${marker}")`;
    const { id } = await startFixture(root, {}, { ...probeAgent([['plant src/.git', plant]]), isolation: 'inplace', allow_inplace_write: true, sandbox: { mode: 'required' } });
    const done = await waitForFinished(root, id);
    assert.equal(done.state.isolation, 'inplace', JSON.stringify(done.state));
    assert.equal(probeResults(root).get('plant src/.git'), 'ok', JSON.stringify(done.result.report));
    userGitStatus(path.join(root, 'src'));
    assert.equal(existsSync(marker), false, 'the planted fsmonitor ran as the user');
    assert.equal(existsSync(path.join(root, 'vendor', 'lib', '.git')), true, 'the checkout\'s own repository is kept');
    const finding = done.result.report.findings.find((f) => f.title === 'Nested repository moved aside');
    assert.ok(finding && /src\/\.git/.test(finding.detail) && !/vendor/.test(finding.detail), JSON.stringify(done.result.report.findings));
  });

  it('a repository the worktree setup made (a submodule\'s .git) is kept: only what the agent adds is moved aside', async () => {
    const root = makeRepo({ 'README.md': '# test repo\n' });
    const setup = { copy: [], link: [], setup: ['git init -q vendored'] };
    const { id } = await startFixture(root, {}, { ...probeAgent([['write', 'echo x > written.txt']]), sandbox: { mode: 'required' }, worktree_setup: setup });
    const done = await waitForFinished(root, id);
    assert.equal(existsSync(path.join(done.state.worktree!, 'vendored', '.git')), true, 'the setup\'s repository is still there');
    assert.equal(done.result.report.findings.some((f) => f.title === 'Nested repository moved aside'), false, JSON.stringify(done.result.report.findings));
  });
});

import { strict as assert } from 'node:assert';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
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

  /**
   * What a user does in a task's worktree after it ran (or the editor's git extension, opening one of its files).
   * Its exit and stderr are returned for the test to assert: a git that failed at once proves nothing about what it
   * would have run.
   */
  function userGitStatus(dir: string): { status: number; stderr: string } {
    const run = spawnSync('git', ['status', '--porcelain'], { cwd: dir, encoding: 'utf8' });
    if (run.error) throw run.error;
    return { status: run.status ?? -1, stderr: run.stderr };
  }

  /**
   * The control: the same plant in a worktree of a plain repository, by plain bash, and no Caesar after it: the
   * user's `git status` there (in `gitIn`) runs the planted program. Returns whether it ran (the marker is removed).
   */
  function firesWithoutCaesar(plant: string, options: { gitIn?: string; worktreeConfig?: boolean } = {}): boolean {
    const root = makeRepo({ 'README.md': '# test repo\n', 'src/app.js': 'app\n', 'docs/guide.md': 'guide\n' });
    if (options.worktreeConfig) git(root, 'config', 'extensions.worktreeConfig', 'true');
    const worktree = path.join(realpathSync(mkdtempSync(path.join(tmpdir(), 'caesar-after-run-control-'))), 'wt');
    git(root, 'worktree', 'add', '-q', '-b', 'control', worktree);
    execFileSync('bash', ['-c', plant], { cwd: worktree, stdio: 'pipe' });
    const status = userGitStatus(path.join(worktree, options.gitIn ?? '.'));
    assert.equal(status.status, 0, status.stderr);
    const fired = existsSync(marker);
    rmSync(marker, { force: true });
    return fired;
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
    // The control: in a worktree without its .git file (where Caesar puts them, inside the checkout), plain git climbs
    // to the user's checkout, and the old fallback (`read-tree`) run there drops what the user staged.
    const worktree = path.join(root, '.caesar', 'wt', 'control');
    git(root, 'worktree', 'add', '-q', '-b', 'control', worktree);
    rmSync(path.join(worktree, '.git'));
    execFileSync('git', ['read-tree', start], { cwd: worktree, stdio: 'pipe' });
    assert.equal(git(root, 'diff', '--cached', '--name-only'), '', 'the control: read-tree there reached the user\'s index');
  });

  it('a .git file naming another repository never makes Caesar write a ref there', async () => {
    const root = makeRepo({ 'README.md': '# test repo\n' });
    const other = makeRepo({ 'other.txt': 'another project of the user\n' });
    // Its objects reach the private store through an alternates file the agent writes there.
    const probe = `echo ${other}/.git/objects > "$GIT_OBJECT_DIRECTORY/info/alternates" && echo "gitdir: ${other}/.git" > .git`;
    const done = await run(root, [['point .git at another repository', `mkdir -p "$GIT_OBJECT_DIRECTORY/info" && ${probe}`]]);
    assert.equal(probeResults(done.state.worktree!).get('point .git at another repository'), 'ok');
    assert.equal(git(other, 'for-each-ref', '--format=%(refname)'), 'refs/heads/main', 'a ref was written in another repository');
    // The control: plain git in a worktree whose .git names the other repository writes its refs there.
    const worktree = path.join(realpathSync(mkdtempSync(path.join(tmpdir(), 'caesar-after-run-control-'))), 'wt');
    git(root, 'worktree', 'add', '-q', '-b', 'control', worktree);
    writeFileSync(path.join(worktree, '.git'), `gitdir: ${other}/.git\n`);
    execFileSync('git', ['update-ref', 'refs/heads/caesar/control', 'HEAD'], { cwd: worktree, stdio: 'pipe' });
    assert.match(git(other, 'for-each-ref', '--format=%(refname)'), /refs\/heads\/caesar\/control/, 'the control: git wrote no ref there');
  });

  it('a .git directory the agent planted in place of its .git file runs nothing when the user runs git there', async () => {
    const root = makeRepo({ 'README.md': '# test repo\n' });
    const plant = `rm .git && env -u GIT_OBJECT_DIRECTORY -u GIT_ALTERNATE_OBJECT_DIRECTORIES git init -q . && git config core.fsmonitor "touch ${marker}"`;
    const done = await run(root, [['plant a .git directory', plant]]);
    assert.equal(probeResults(done.state.worktree!).get('plant a .git directory'), 'ok');
    const status = userGitStatus(done.state.worktree!);
    assert.equal(existsSync(marker), false, 'the planted fsmonitor ran as the user');
    assert.equal(status.status, 0, status.stderr);
    assert.equal(firesWithoutCaesar(plant), true, 'the control: the planted fsmonitor did not run without Caesar either');
  });

  it('a config.worktree in the worktree\'s git entry runs nothing when the user runs git there', async () => {
    const root = makeRepo({ 'README.md': '# test repo\n' });
    git(root, 'config', 'extensions.worktreeConfig', 'true'); // set by sparse-checkout, for one
    const entry = '$(git rev-parse --absolute-git-dir)';
    const plant = `printf '[core]\\n\\tfsmonitor = touch ${marker}\\n' > "${entry}/config.worktree"`;
    const done = await run(root, [['plant config.worktree', plant]]);
    assert.equal(probeResults(done.state.worktree!).get('plant config.worktree'), 'ok');
    const status = userGitStatus(done.state.worktree!);
    assert.equal(existsSync(marker), false, 'the planted fsmonitor ran as the user');
    assert.equal(status.status, 0, status.stderr);
    assert.equal(firesWithoutCaesar(plant, { worktreeConfig: true }), true, 'the control: the planted fsmonitor did not run without Caesar either');
    assert.equal(done.state.status, 'succeeded');
  });

  it('a commondir rewritten in the worktree\'s git entry runs nothing when the user runs git there', async () => {
    const root = makeRepo({ 'README.md': '# test repo\n' });
    // A common dir of the agent's own (in its worktree) whose config names a program, its entry's commondir aimed there.
    const fake = `cp -r "$(git rev-parse --git-common-dir)" "$PWD/.fake-common" && git config -f "$PWD/.fake-common/config" core.fsmonitor "touch ${marker}"`;
    const plant = `${fake} && echo "$PWD/.fake-common" > "$(git rev-parse --absolute-git-dir)/commondir"`;
    const done = await run(root, [['rewrite commondir', plant]]);
    assert.equal(probeResults(done.state.worktree!).get('rewrite commondir'), 'ok');
    const status = userGitStatus(done.state.worktree!);
    assert.equal(existsSync(marker), false, 'the planted fsmonitor ran as the user');
    assert.equal(status.status, 0, status.stderr);
    assert.equal(firesWithoutCaesar(plant), true, 'the control: the planted fsmonitor did not run without Caesar either');
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
      for (const folderOf of ['src', 'docs']) {
        const status = userGitStatus(path.join(worktree, folderOf));
        assert.equal(status.status, 0, `${folderOf}: ${status.stderr}`);
      }
      assert.equal(existsSync(marker), false, 'the planted fsmonitor ran as the user');
      if (sandboxed) {
        assert.equal(firesWithoutCaesar(folder, { gitIn: 'src' }), true, 'the control: src/.git did not run its fsmonitor without Caesar either');
        assert.equal(firesWithoutCaesar(file, { gitIn: 'docs' }), true, 'the control: docs/.git did not run its fsmonitor without Caesar either');
      }
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
    const status = userGitStatus(path.join(root, 'src'));
    assert.equal(status.status, 0, status.stderr);
    assert.equal(existsSync(marker), false, 'the planted fsmonitor ran as the user');
    assert.equal(firesWithoutCaesar(plant, { gitIn: 'src' }), true, 'the control: the planted fsmonitor did not run without Caesar either');
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

import { strict as assert } from 'node:assert';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { worktreeDiff } from '../../src/engine/git/reconcile';
import { createWorktree } from '../../src/engine/git/worktree';
import { makeRepo, waitForFinished } from '../engine/runtime/helpers';
import { startHostile } from './helpers';
import { needs } from '../support/needs';

/** Item 5 of issue 13: isolation that is honest: git never diffs the user's checkout, writes into it are reported. */
describe('reliability: honest isolation', function () {
  this.timeout(60_000);

  it('an agent that removes its worktree .git: "diff could not be computed", never the checkout\'s files', async () => {
    const root = makeRepo({ 'README.md': 'hello\n' });
    writeFileSync(path.join(root, 'user-draft.txt'), 'uncommitted work of the user\n');
    writeFileSync(path.join(root, 'README.md'), 'hello, edited by the user\n');
    // Unconfined on purpose: what Caesar makes of a worktree whose .git is gone. Sandboxed, the worktree's .git is put
    // back after the run (sandbox/git-entry.ts; test/reliability/sandbox-after-run.test.ts), so the diff is the real one.
    const { id } = await startHostile(root, { mode: 'remove-dotgit' }, { sandbox: { mode: 'off' } });
    const { state, result } = await waitForFinished(root, id);
    const files = result.report.changes.map((c) => c.path);
    assert.ok(!files.includes('user-draft.txt') && !files.includes('README.md'), `the user's files were reported as the task's: ${files.join(', ')}`);
    assert.equal(result.diff, undefined, 'no diff is recorded');
    assert.equal(result.changes_verified_by, 'declaration');
    const finding = result.report.findings.find((f) => f.title === 'Diff could not be computed');
    assert.ok(finding, JSON.stringify(result.report.findings));
    assert.match(finding.detail, /no longer a git worktree/);
    assert.equal(state.status, 'succeeded');
    // The user's checkout is untouched and its files unchanged.
    assert.equal(readFileSync(path.join(root, 'user-draft.txt'), 'utf8'), 'uncommitted work of the user\n');
  });

  for (const mode of ['remove-dotgit', 'redirect-dotgit'] as const) {
    it(`sandboxed, an agent that ${mode === 'remove-dotgit' ? 'removes its worktree .git' : 'points its .git at the main repository'}: the .git is put back, the diff is its own work only`, async function () {
      await needs(this, 'bubblewrap');
      const root = makeRepo({ 'README.md': 'hello\n' });
      writeFileSync(path.join(root, 'user-draft.txt'), 'uncommitted work of the user\n');
      writeFileSync(path.join(root, 'README.md'), 'hello, edited by the user\n');
      const { id } = await startHostile(root, { mode, gitDir: path.join(root, '.git') }, { sandbox: { mode: 'required' } });
      const { state, result } = await waitForFinished(root, id);
      assert.deepEqual(state.sandbox, { confined: true });
      assert.deepEqual(result.diff?.files.map((f) => f.path), ['agent.txt'], JSON.stringify(result.report.findings));
      assert.equal(result.changes_verified_by, 'git');
      assert.equal(readFileSync(path.join(root, 'user-draft.txt'), 'utf8'), 'uncommitted work of the user\n');
    });
  }

  it('an agent that points its .git at the main repository: refused, not diffed against the user index', async () => {
    const root = makeRepo({ 'README.md': 'hello\n' });
    writeFileSync(path.join(root, 'user-draft.txt'), 'uncommitted work of the user\n');
    // Unconfined on purpose, as above: sandboxed, the worktree's .git is put back after the run.
    const { id } = await startHostile(root, { mode: 'redirect-dotgit', gitDir: path.join(root, '.git') }, { sandbox: { mode: 'off' } });
    const { result } = await waitForFinished(root, id);
    assert.equal(result.diff, undefined);
    const finding = result.report.findings.find((f) => f.title === 'Diff could not be computed');
    assert.ok(finding, JSON.stringify(result.report.findings));
    assert.match(finding.detail, /linked worktree|top level|point back/);
  });

  it('worktreeDiff on a worktree without .git, or with a .git of another repository, throws; a genuine one works', async () => {
    const repo = makeRepo({ 'a.txt': 'a\n' });
    writeFileSync(path.join(repo, 'dirty.txt'), 'user\n');
    const cases: Array<[string, (wt: string) => void]> = [
      ['.git removed', (wt) => rmSync(path.join(wt, '.git'))],
      ['.git emptied', (wt) => writeFileSync(path.join(wt, '.git'), '')],
      ['.git → main git dir', (wt) => writeFileSync(path.join(wt, '.git'), `gitdir: ${path.join(repo, '.git')}\n`)],
      ['.git → another repository', (wt) => writeFileSync(path.join(wt, '.git'), `gitdir: ${path.join(makeRepo(), '.git')}\n`)],
      ['.git → a sibling worktree', (wt) => writeFileSync(path.join(wt, '.git'), readFileSync(path.join(repo, '.caesar/wt/t_sibling/.git')))],
      ["git's registration → elsewhere", (wt) => writeFileSync(path.join(repo, '.git', 'worktrees', path.basename(wt), 'gitdir'), `${path.join(repo, '.git')}\n`)],
    ];
    await createWorktree({ gitRoot: repo, id: 't_sibling' });
    for (const [i, [what, spoil]] of cases.entries()) {
      const wt = await createWorktree({ gitRoot: repo, id: `t_case${i}` });
      writeFileSync(path.join(wt.path, 'agent.txt'), 'agent\n');
      assert.deepEqual((await worktreeDiff(wt.path, wt.base_ref, [])).files.map((f) => f.path), ['agent.txt'], `${what}: genuine first`);
      // The supervisor's way: the git dir read at creation, rechecked without a git process.
      assert.ok(wt.repo, 'createWorktree reads the git dir it registered');
      assert.deepEqual((await worktreeDiff(wt.path, wt.base_ref, [], {}, wt.repo)).files.map((f) => f.path), ['agent.txt'], `${what}: genuine first (known)`);
      spoil(wt.path);
      await assert.rejects(worktreeDiff(wt.path, wt.base_ref, []), /worktree|top level|registration/, what);
      await assert.rejects(worktreeDiff(wt.path, wt.base_ref, [], {}, wt.repo), /worktree|top level|registration/, `${what} (known)`);
    }
    assert.ok(existsSync(path.join(repo, 'dirty.txt')));
  });

  it('writes into the user checkout (../.., absolute) during a worktree task are reported as a high finding', async () => {
    const root = makeRepo({ 'README.md': 'hello\n', 'src/app.js': 'app\n' });
    const outside = { '../../../escaped.txt': 'escaped\n', [path.join(root, 'src/app.js')]: 'tampered\n' };
    // Unconfined on purpose: this is the after-the-fact detection that protects a task without the sandbox; sandboxed,
    // the checkout is read-only to the agent and these writes are refused (test/reliability/sandbox-hostile.test.ts).
    const { id } = await startHostile(root, { mode: 'write-outside', outside }, { sandbox: { mode: 'off' } });
    const { result } = await waitForFinished(root, id);
    assert.deepEqual(result.report.changes.map((c) => c.path), ['inside.txt'], 'the task diff is its worktree only');
    const finding = result.report.findings.find((f) => f.title === 'Your checkout changed during the task');
    assert.ok(finding, JSON.stringify(result.report.findings));
    assert.equal(finding.severity, 'high');
    assert.match(finding.detail, /escaped\.txt/);
    assert.match(finding.detail, /src\/app\.js/);
  });

  it('sandboxed, a [sandbox] read_write folder over the checkout brings the checkout guard back: the write is reported', async function () {
    await needs(this, 'bubblewrap');
    const root = makeRepo({ 'README.md': 'hello\n' });
    // Confined, the checkout is mounted read-only and its guard is not taken (nothing to detect); a read_write folder
    // that holds the checkout makes it writable again, so the supervisor takes the guard before the agent starts.
    const outside = { '../../../escaped.txt': 'escaped\n' };
    const { id } = await startHostile(root, { mode: 'write-outside', outside }, { sandbox: { mode: 'required', read_write: [path.dirname(root)] } });
    const { state, result } = await waitForFinished(root, id);
    assert.deepEqual(state.sandbox, { confined: true });
    assert.equal(readFileSync(path.join(root, 'escaped.txt'), 'utf8'), 'escaped\n', 'read_write let the write through');
    const finding = result.report.findings.find((f) => f.title === 'Your checkout changed during the task');
    assert.ok(finding, JSON.stringify(result.report.findings));
    assert.match(finding.detail, /escaped\.txt/);
  });

  it('a well-behaved worktree task gets no such finding (control)', async function () {
    await needs(this, 'bubblewrap'); // unconfined, the task's own "Not sandboxed" finding is high
    const root = makeRepo({ 'README.md': 'hello\n' });
    writeFileSync(path.join(root, 'user-draft.txt'), 'dirty before the task starts\n');
    const { id } = await startHostile(root, { mode: 'write-outside', outside: {} });
    const { result } = await waitForFinished(root, id);
    assert.deepEqual(result.report.changes.map((c) => c.path), ['inside.txt']);
    assert.equal(result.report.findings.filter((f) => f.severity === 'high').length, 0, JSON.stringify(result.report.findings));
  });

  it('no finding claims a sandbox: a read-only task moved to a worktree that writes into the checkout is told so, not reassured', async () => {
    const root = makeRepo({ 'README.md': 'hello\n' });
    // In place and read-only for an agent with no native read-only mode: Caesar runs it in a worktree instead.
    // Unconfined on purpose, as above: it is about what an unconfined task is told (sandboxed, the write is refused).
    const { id } = await startHostile(root, { mode: 'write-outside', outside: { '../../../escaped.txt': 'escaped\n' } }, { mode: 'read-only', isolation: 'inplace', sandbox: { mode: 'off' } });
    const { state, result } = await waitForFinished(root, id);
    assert.equal(state.isolation, 'worktree');
    assert.equal(readFileSync(path.join(root, 'escaped.txt'), 'utf8'), 'escaped\n', 'the worktree did not stop the write');
    const titles = result.report.findings.map((f) => f.title);
    assert.ok(titles.includes('Your checkout changed during the task'), JSON.stringify(titles));
    const degraded = result.report.findings.find((f) => f.title === 'Degraded isolation');
    assert.ok(degraded, JSON.stringify(titles));
    assert.match(degraded.detail, /no sandbox: writes outside it are detected afterwards, not prevented/);
    for (const finding of result.report.findings) assert.doesNotMatch(finding.detail, /nothing could touch|cannot touch|protected/i, finding.title);
  });
});

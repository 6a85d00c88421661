import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import { mkdirSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { baseRefPin, commonDirWithoutGit, parseConfigEntries, repositoryChanges, takeRepositorySnapshot, type RepositorySnapshot } from '../../../src/engine/git/repository-watch';
import { git, makeRepo } from '../runtime/helpers';

/** The repository watch's snapshot (issue 22, item 2) on real repositories: what it reads, what it refuses to. */
describe('engine/git/repository-watch: the shared git dir snapshot', () => {
  const repos: string[] = [];
  const repo = () => {
    const dir = makeRepo();
    repos.push(dir);
    return dir;
  };
  after(() => repos.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

  it('takes the same snapshot twice over an unchanged repository, and sees a one-byte edit of a hook', async () => {
    const r = repo();
    const first = await takeRepositorySnapshot(r, 't_a');
    assert.deepEqual(await takeRepositorySnapshot(r, 't_a'), first);
    assert.ok(first.files.config?.startsWith('sha256:'));
    assert.equal(first.refs['refs/heads/main'], git(r, 'rev-parse', 'HEAD'));
    writeFileSync(path.join(r, '.git/hooks/pre-push.sample'), 'x', { flag: 'a' });
    assert.deepEqual(repositoryChanges(first, await takeRepositorySnapshot(r, 't_a'), 't_a'), ['hooks/pre-push.sample changed']);
  });

  it('finds the common dir without git as git does (a checkout, a linked worktree), and gives up on a linked commondir', async () => {
    const r = repo();
    assert.equal(await commonDirWithoutGit(r), realpathSync(path.join(r, '.git')));
    const wt = path.join(r, '.caesar', 'wt-x');
    git(r, 'worktree', 'add', '-q', '--detach', wt, 'HEAD');
    assert.equal(await commonDirWithoutGit(wt), realpathSync(path.resolve(wt, git(wt, 'rev-parse', '--git-common-dir').trim())));
    // git follows a linked `commondir` to another common dir: that is git's to answer, never "no commondir".
    symlinkSync(path.join(wt, '..'), path.join(r, '.git', 'commondir'));
    assert.equal(await commonDirWithoutGit(r), undefined);
  });

  it('never follows a link or walks without bound: a symlinked hooks folder, a link to /dev/zero, 3,000 planted files', async () => {
    const r = repo();
    rmSync(path.join(r, '.git/hooks'), { recursive: true });
    symlinkSync('/usr', path.join(r, '.git/hooks'));
    mkdirSync(path.join(r, '.git/info/many'), { recursive: true });
    for (let i = 0; i < 3000; i++) writeFileSync(path.join(r, '.git/info/many', `f${i}`), '');
    symlinkSync('/dev/zero', path.join(r, '.git/config.worktree'));
    const snapshot = await takeRepositorySnapshot(r, 't_a');
    assert.equal(snapshot.files.hooks, 'symlink:/usr');
    assert.equal(snapshot.files['config.worktree'], 'symlink:/dev/zero');
    assert.equal(snapshot.files['info/many/…'], 'more entries than read');
    assert.ok(Object.keys(snapshot.files).length <= 2_010, String(Object.keys(snapshot.files).length));
  });

  it('names what changed in the shared config: an entry added, one removed, an escape sequence escaped', async () => {
    const r = repo();
    const before = await takeRepositorySnapshot(r, 't_a');
    git(r, 'config', 'filter.planted.clean', 'run-me \u001b[2J');
    git(r, 'config', '--unset', 'commit.gpgsign');
    assert.deepEqual(repositoryChanges(before, await takeRepositorySnapshot(r, 't_a'), 't_a'), [
      'config changed: + filter.planted.clean=run-me \\u001b[2J, - commit.gpgsign=false',
    ]);
  });

  it('parses git-config syntax enough to name entries', () => {
    assert.deepEqual(parseConfigEntries('[core]\n\tbare = false\n# c\n[remote "origin"]\n url = x\n[Alias.Sub] st\n; c\n[a] k = v\n'), [
      'core.bare=false',
      'remote.origin.url=x',
      'alias.sub.st',
      'a.k=v',
    ]);
  });

  it('task branches are not watched; other tasks\' pins only for a move; this task\'s pin must stay', () => {
    const base = (refs: Record<string, string>): RepositorySnapshot => ({ common_dir: '/r/.git', files: {}, refs });
    const before = base({ [baseRefPin('t_a')]: 'a'.repeat(40), [baseRefPin('t_b')]: 'b'.repeat(40), [baseRefPin('t_c')]: 'c'.repeat(40) });
    const after = base({ [baseRefPin('t_b')]: 'd'.repeat(40), [baseRefPin('t_d')]: 'e'.repeat(40) });
    assert.deepEqual(repositoryChanges(before, after, 't_a'), [
      `${baseRefPin('t_a')} deleted (was ${'a'.repeat(12)})`,
      `${baseRefPin('t_b')} moved from ${'b'.repeat(12)} to ${'d'.repeat(12)}`,
    ]);
  });

  it('leaves out every task branch of refs/heads/caesar/, its own and the others\'', async () => {
    const r = repo();
    execFileSync('git', ['branch', 'caesar/t_other'], { cwd: r });
    execFileSync('git', ['branch', 'caesar/t_a'], { cwd: r });
    const snapshot = await takeRepositorySnapshot(r, 't_a');
    assert.deepEqual(Object.keys(snapshot.refs), ['refs/heads/main']);
  });
});

describe('engine/git/repository-watch: names a planted file safely', () => {
  it('a hook whose name holds an escape sequence and a space is named quoted', async () => {
    const r = makeRepo();
    try {
      const before = await takeRepositorySnapshot(r, 't_a');
      writeFileSync(path.join(r, '.git/hooks', 'evil \u001b[2Jname'), '#!/bin/sh\n');
      const changes = repositoryChanges(before, await takeRepositorySnapshot(r, 't_a'), 't_a');
      assert.deepEqual(changes, ['"hooks/evil \\u001b[2Jname" added']);
    } finally {
      rmSync(r, { recursive: true, force: true });
    }
  });
});

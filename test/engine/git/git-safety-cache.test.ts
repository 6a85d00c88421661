import { strict as assert } from 'node:assert';
import { execFileSync, spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { appendFileSync, chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { createInterface } from 'node:readline';
import { runGit, verifiedWorktreeRepo, withTempIndex, worktreeGitArgs } from '../../../src/engine/git';
import { cleanupTemp, git, makeRepo, tempDir } from './helpers';

/*
 * Issue 27: git-safety's look-up (which filters git may run) is answered again without a process while no config
 * file changed. These tests plant a filter between two calls, as an agent whose process escaped its group could
 * while a task concludes, and check that the second call still refuses to run it: each looks up again, and the
 * planted program never runs. The look-ups are counted through a logging `git` first on PATH.
 */
describe('engine/git: the look-up is reused only while no config file changed', function () {
  this.timeout(30_000);
  let savedPath: string | undefined;
  let log = '';
  afterEach(() => {
    if (savedPath !== undefined) process.env.PATH = savedPath;
    savedPath = undefined;
    cleanupTemp();
  });

  /** From now on every git Caesar starts is logged; returns how many were the look-up. */
  function countGit(): () => number {
    const bin = tempDir('caesar-git-log-');
    log = path.join(bin, 'calls.log');
    writeFileSync(log, '');
    const real = execFileSync('sh', ['-c', 'command -v git'], { encoding: 'utf8' }).trim();
    writeFileSync(path.join(bin, 'git'), `#!/bin/sh\nprintf '%s\\n' "$*" >> '${log}'\nexec ${real} "$@"\n`);
    chmodSync(path.join(bin, 'git'), 0o755);
    savedPath = process.env.PATH;
    process.env.PATH = `${bin}:${savedPath ?? ''}`;
    return () => readFileSync(log, 'utf8').split('\n').filter((line) => line.includes(' config --show-scope --show-origin')).length;
  }

  /** A filter whose clean and smudge record that they ran; `required` so that git must run it. */
  function filterText(name: string, marker: string): string {
    return `[filter "${name}"]\n\tclean = echo clean >> '${marker}'; cat\n\tsmudge = echo smudge >> '${marker}'; cat\n\trequired = true\n`;
  }

  it("a worktree's conclusion: a filter planted in the shared config after the listing's look-up never runs in the add and the diff", async () => {
    const repo = makeRepo({ 'a.txt': 'one\n', '.gitattributes': '*.txt filter=late\n' });
    const marker = path.join(tempDir(), 'ran.log');
    const worktree = path.join(tempDir(), 'wt');
    git(repo, 'worktree', 'add', '-q', '-b', 'task', worktree, 'HEAD');
    const explicit = worktreeGitArgs(await verifiedWorktreeRepo(worktree));
    writeFileSync(path.join(worktree, 'a.txt'), 'one\ntwo\n');
    writeFileSync(path.join(worktree, 'new.txt'), 'new\n');
    const lookups = countGit();
    // The conclusion's calls (reconcile.ts worktreeDiff): the listing, then add -N and diff-index on a private index.
    const listing = () => runGit([...explicit, 'ls-files', '--others', '--modified', '--exclude-standard', '-t', '-z'], { cwd: worktree, env: { GIT_OPTIONAL_LOCKS: '0' } });
    await listing();
    await listing();
    assert.equal(lookups(), 1, 'nothing changed: the second call reuses the look-up');
    appendFileSync(path.join(repo, '.git', 'config'), filterText('late', marker));
    const diff = await withTempIndex(worktree, async (env) => {
      await runGit([...explicit, 'add', '--intent-to-add', '--', '.'], { cwd: worktree, env });
      return runGit([...explicit, 'diff-index', '-p', 'HEAD'], { cwd: worktree, env: { ...env, GIT_OPTIONAL_LOCKS: '0' } });
    }, path.join(repo, '.git', 'worktrees', 'wt', 'index'));
    assert.equal(existsSync(marker), false, existsSync(marker) ? readFileSync(marker, 'utf8') : '');
    assert.match(diff.stdout.toString('utf8'), /\+two/);
    assert.equal(lookups(), 2, 'the changed config was looked up again');
    git(worktree, 'diff', 'HEAD');
    assert.match(readFileSync(marker, 'utf8'), /clean/, "control: the user's own git runs the planted filter");
  });

  it("the checkout guard's calls: an include target that did not exist at the first look-up, created later, is read again", async () => {
    const repo = makeRepo({ 'a.txt': 'one\n', '.gitattributes': '*.txt filter=late\n' });
    const marker = path.join(tempDir(), 'ran.log');
    git(repo, 'config', 'include.path', 'late.cfg'); // .git/late.cfg, absent for now
    const lookups = countGit();
    const stay = { GIT_CEILING_DIRECTORIES: path.dirname(repo) };
    const listing = () => runGit(['ls-files', '--others', '--modified', '--exclude-standard', '-t', '-z'], { cwd: repo, env: stay });
    await listing();
    await listing();
    await listing();
    // The first look-up met a file it could not fingerprint beforehand (the include target): the second looks up
    // again with it fingerprinted before, and that answer is reused.
    assert.equal(lookups(), 2);
    writeFileSync(path.join(repo, '.git', 'late.cfg'), filterText('late', marker));
    writeFileSync(path.join(repo, 'a.txt'), 'one\ntwo\n');
    await withTempIndex(repo, (env) => runGit(['add', '-A', '--', '.'], { cwd: repo, env: { ...env, ...stay } }), path.join(repo, '.git', 'index'));
    assert.equal(existsSync(marker), false, existsSync(marker) ? readFileSync(marker, 'utf8') : '');
    assert.equal(lookups(), 3);
    git(repo, 'diff');
    assert.match(readFileSync(marker, 'utf8'), /clean/, "control: the user's own git runs the planted filter");
  });

  it('a filter written through a shared mapping (tmpfs: same size, mtime and ctime) is found by the content check', async () => {
    // On tmpfs the kernel updates a file's times on the first write fault of a shared mapping only: later writes
    // change the bytes and leave the identity (dev, ino, size, mtime, ctime) as it was.
    const shm = mkdtempSync('/dev/shm/caesar-git-test-');
    try {
      const repo = makeRepoIn(shm);
      const marker = path.join(shm, 'ran.log');
      const config = path.join(repo, '.git', 'config');
      const planted = filterText('late', marker);
      const start = statSync(config).size;
      appendFileSync(config, `#${'x'.repeat(planted.length - 2)}\n`); // a comment of the planted text's length
      const writer = await mappedWriter(config);
      await writer.send(`touch ${start}`); // the first write fault: the times are updated now, before any look-up
      const lookups = countGit();
      const listing = () => runGit(['ls-files', '--others', '--modified', '--exclude-standard', '-t', '-z'], { cwd: repo });
      await listing();
      await listing();
      assert.equal(lookups(), 1);
      const before = statSync(config, { bigint: true });
      await writer.send(`write ${start} ${Buffer.from(planted).toString('hex')}`);
      const after = statSync(config, { bigint: true });
      assert.deepEqual([after.ino, after.size, after.mtimeNs, after.ctimeNs], [before.ino, before.size, before.mtimeNs, before.ctimeNs], 'the identity did not change');
      assert.match(readFileSync(config, 'utf8'), /filter "late"/);
      writeFileSync(path.join(repo, 'a.txt'), 'one\ntwo\n');
      await runGit(['add', '-A'], { cwd: repo, env: { GIT_INDEX_FILE: path.join(shm, 'index.tmp') } });
      writer.end();
      assert.equal(existsSync(marker), false, existsSync(marker) ? readFileSync(marker, 'utf8') : '');
      assert.equal(lookups(), 2);
      git(repo, 'diff');
      assert.match(readFileSync(marker, 'utf8'), /clean/, "control: the user's own git runs the planted filter");
    } finally {
      rmSync(shm, { recursive: true, force: true });
    }
  });

  it('a call whose cwd holds a `.git` that is not a git dir (git looks upwards) is never answered from the cache', async () => {
    const repo = makeRepo({ 'a.txt': 'one\n', '.gitattributes': '*.txt filter=late\n' });
    const marker = path.join(tempDir(), 'ran.log');
    const sub = path.join(repo, 'sub');
    mkdirSync(path.join(sub, '.git'), { recursive: true }); // empty: git skips it and finds the repository above
    const lookups = countGit();
    await runGit(['ls-files', '-m'], { cwd: sub });
    appendFileSync(path.join(repo, '.git', 'config'), filterText('late', marker));
    writeFileSync(path.join(repo, 'a.txt'), 'one\ntwo\n');
    await runGit(['add', '--', ':(top)a.txt'], { cwd: sub, env: { GIT_INDEX_FILE: path.join(tempDir(), 'index') } });
    assert.equal(existsSync(marker), false, existsSync(marker) ? readFileSync(marker, 'utf8') : '');
    assert.equal(lookups(), 2);
  });

  it('GIT_CONFIG in the environment Caesar was given does not hide the repository\'s filters from the look-up', async () => {
    // GIT_CONFIG makes `git config`, and only it, read that one file: the look-up would see no planted filter while
    // the call it guards reads the repository's config.
    const repo = makeRepo({ 'a.txt': 'one\n', '.gitattributes': '*.txt filter=late\n' });
    const marker = path.join(tempDir(), 'ran.log');
    appendFileSync(path.join(repo, '.git', 'config'), filterText('late', marker));
    const user = path.join(tempDir(), 'user.gitconfig');
    writeFileSync(user, '[core]\n\tquotePath = false\n');
    process.env.GIT_CONFIG = user;
    try {
      writeFileSync(path.join(repo, 'a.txt'), 'one\ntwo\n');
      await runGit(['add', '-A'], { cwd: repo });
    } finally {
      delete process.env.GIT_CONFIG;
    }
    assert.equal(existsSync(marker), false, existsSync(marker) ? readFileSync(marker, 'utf8') : '');
  });

  function makeRepoIn(dir: string): string {
    const repo = path.join(dir, 'repo');
    git(dir, 'init', '-q', '-b', 'main', repo);
    writeFileSync(path.join(repo, 'a.txt'), 'one\n');
    writeFileSync(path.join(repo, '.gitattributes'), '*.txt filter=late\n');
    git(repo, 'add', '-A');
    git(repo, '-c', 'user.name=t', '-c', 'user.email=t@example.invalid', 'commit', '-q', '-m', 'init');
    return repo;
  }

  /** A process holding `file` in a shared writable mapping: `touch <at>` rewrites one byte, `write <at> <hex>` bytes. */
  async function mappedWriter(file: string): Promise<{ send(line: string): Promise<void>; end(): void }> {
    const script = [
      'import mmap, sys',
      `f = open(${JSON.stringify(file)}, 'r+b')`,
      'm = mmap.mmap(f.fileno(), 0)',
      'for line in sys.stdin:',
      '    parts = line.split()',
      '    at = int(parts[1])',
      "    if parts[0] == 'touch': m[at:at + 1] = m[at:at + 1]",
      '    else: data = bytes.fromhex(parts[2]); m[at:at + len(data)] = data',
      "    print('ok', flush=True)",
    ].join('\n');
    const child: ChildProcessWithoutNullStreams = spawn('python3', ['-c', script]);
    child.on('error', () => undefined); // no python3: the first send() fails saying so
    const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
    return {
      async send(line: string) {
        child.stdin.write(`${line}\n`);
        const answer = await lines.next();
        assert.equal(answer.value, 'ok', `the mapping's writer (python3 with mmap) failed: ${answer.value ?? 'no answer'}`);
      },
      end: () => child.stdin.end(),
    };
  }
});

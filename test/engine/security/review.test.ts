import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { createWorktree } from '../../../src/engine/git/worktree';
import { git, makeRepo } from '../runtime/helpers';
import { installVscodeStub, recorded, resetVscodeStub, Uri } from './vscode-stub';

/*
 * Issue 13 item 1: a cloned repository must never make the editor run a program or write a file. The subject is the
 * extension's review code itself (src/extension/review/: the base-version provider and "Open Changes"), run
 * under mocha with a stand-in `vscode` module, against real git repositories. Each hostile record below made the
 * previous review.ts write a file outside the repository or run a command; every git the code runs is logged by a
 * `git` wrapper first on PATH, so "no git at all" is observed, not assumed.
 */

installVscodeStub();
// eslint-disable-next-line @typescript-eslint/no-require-imports
const review = require('../../../src/extension/review/baseContent') as typeof import('../../../src/extension/review/baseContent');
// eslint-disable-next-line @typescript-eslint/no-require-imports
const opener = require('../../../src/extension/review/openChange') as typeof import('../../../src/extension/review/openChange');

interface Record {
  base_ref?: string;
  worktree?: string;
  workspace: string;
  root: string;
}

function fakeTasks(root: string, records: Map<string, Record>): Parameters<typeof opener.openChange>[0] {
  const tasks = {
    rootOf: () => root,
    get: (id: string) => (records.has(id) ? { id, state: records.get(id)! } : undefined),
  };
  return tasks as unknown as Parameters<typeof opener.openChange>[0];
}

describe('security: reviewing a task record from a cloned repository (issue 13.1)', function () {
  this.timeout(30_000);

  let victim: string;
  let base: string;
  let worktree: string;
  let bare: string;
  let hostileBase: string;
  let outside: string;
  let marker: string;
  let gitLog: string;
  let savedPath: string | undefined;
  const records = new Map<string, Record>();
  let provider: InstanceType<typeof review.BaseVersionProvider>;

  const gitRuns = () => (existsSync(gitLog) ? readFileSync(gitLog, 'utf8').split('\n').filter(Boolean) : []);
  // The base side's URI carries the task, its recorded base commit and the root: the provider reads nothing else.
  const baseText = (id: string, file: string) =>
    provider.provideTextDocumentContent(review.baseVersionUri({ taskId: id, commit: records.get(id)!.base_ref!, root: victim, file }) as never);
  const openChange = (id: string, file: string) => opener.openChange(fakeTasks(victim, records), id, file);

  before(async () => {
    victim = makeRepo({ 'README.md': 'base content\n' });
    base = git(victim, 'rev-parse', 'HEAD');
    // A real task worktree, made by the engine: the positive control.
    worktree = (await createWorktree({ gitRoot: victim, id: 'real-task', root: victim })).path;
    writeFileSync(path.join(worktree, 'README.md'), 'changed by the task\n');

    const scratch = realpathSync(mkdtempSync(path.join(tmpdir(), 'caesar-sec-review-')));
    outside = path.join(scratch, 'outside');
    mkdirSync(outside);
    marker = path.join(scratch, 'textconv-ran');
    // The hostile payload a clone can carry. In the cloned history: a commit whose README.md is a gitlink to another
    // commit, so `git show <it>:README.md` shows that commit with its patch, through any diff driver. Beside it, a
    // bare repository (committed files like any others) sitting where a worktree would, whose own config names a
    // textconv command for every path. The record's base_ref is a genuine 40-hex commit id.
    const env = { ...process.env, GIT_AUTHOR_NAME: 'x', GIT_AUTHOR_EMAIL: 'x@example.invalid', GIT_COMMITTER_NAME: 'x', GIT_COMMITTER_EMAIL: 'x@example.invalid' };
    const inVictim = (args: string[], input?: string) => execFileSync('git', args, { cwd: victim, env, encoding: 'utf8', ...(input !== undefined ? { input } : {}) }).trim();
    const blob = inVictim(['hash-object', '-w', '--stdin'], 'evil\n');
    const patched = inVictim(['commit-tree', inVictim(['mktree'], `100644 blob ${blob}\tREADME.md\n`), '-p', base, '-m', 'patched']);
    hostileBase = inVictim(['commit-tree', inVictim(['mktree'], `160000 commit ${patched}\tREADME.md\n`), '-p', base, '-m', 'gitlink']);
    inVictim(['update-ref', 'refs/heads/evil', hostileBase]);
    inVictim(['update-ref', 'refs/heads/patched', patched]); // a gitlink is not followed: keep its commit reachable
    writeFileSync(path.join(victim, '.gitattributes'), '* diff=evil\n');
    git(victim, 'add', '.gitattributes');
    git(victim, 'commit', '-q', '-m', 'attributes');
    bare = path.join(victim, '.caesar', 'wt', 'evil-task');
    execFileSync('git', ['clone', '-q', '--bare', '--no-local', victim, bare]);
    execFileSync('git', ['config', '-f', path.join(bare, 'config'), 'diff.evil.textconv', `touch '${marker}'; cat`]);
    mkdirSync(path.join(bare, 'info'), { recursive: true });
    writeFileSync(path.join(bare, 'info', 'attributes'), '* diff=evil\n');

    // Every git run from here on is logged, then handed to the real git.
    const realGit = execFileSync('sh', ['-c', 'command -v git'], { encoding: 'utf8' }).trim();
    const bin = path.join(scratch, 'bin');
    mkdirSync(bin);
    gitLog = path.join(scratch, 'git-runs.log');
    writeFileSync(path.join(bin, 'git'), `#!/bin/sh\nprintf '%s\\n' "$*" >> '${gitLog}'\nexec '${realGit}' "$@"\n`);
    chmodSync(path.join(bin, 'git'), 0o755);
    savedPath = process.env.PATH;
    process.env.PATH = `${bin}${path.delimiter}${process.env.PATH}`;

    records.set('real-task', { base_ref: base, worktree, workspace: victim, root: victim });
    records.set('output-task', { base_ref: `--output=${path.join(outside, 'pwned')}`, worktree, workspace: victim, root: victim });
    records.set('evil-task', { base_ref: hostileBase, worktree: bare, workspace: victim, root: victim });
    records.set('dotdot-task', { base_ref: base, worktree, workspace: victim, root: victim });
    provider = new review.BaseVersionProvider(() => [victim]);
  });

  after(() => {
    process.env.PATH = savedPath;
  });

  beforeEach(() => {
    resetVscodeStub(true);
    writeFileSync(gitLog, '');
  });

  it('the hostile repository is live: git itself runs its textconv when asked the old way', () => {
    execFileSync('git', ['show', `${hostileBase}:README.md`], { cwd: bare, stdio: 'pipe' });
    assert.ok(existsSync(marker), 'the fixture would not prove anything');
    execFileSync('rm', ['-f', marker]);
  });

  it('the other hostile records are live too: git given the "--output=…" base_ref writes the file, and the ".." path reaches outside', () => {
    const { base_ref } = records.get('output-task')!;
    execFileSync('git', ['show', `${base_ref}:README.md`], { cwd: victim, stdio: 'pipe' });
    assert.deepEqual(readdirSync(outside), ['pwned:README.md'], 'the option is harmless to git: the test would not prove anything');
    execFileSync('rm', ['-f', path.join(outside, 'pwned:README.md')]);
    const escape = path.relative(worktree, path.join(outside, 'secret.txt'));
    assert.equal(path.resolve(worktree, escape), path.join(outside, 'secret.txt'));
  });

  it('serves the base version and opens the diff of a genuine task (trusted workspace)', async () => {
    assert.equal(await baseText('real-task', 'README.md'), 'base content\n');
    assert.equal(await baseText('real-task', 'created-by-task.txt'), '', 'a file the task created has an empty base');
    await openChange('real-task', 'README.md');
    assert.equal(recorded.commands.length, 1);
    const [command, left, right] = recorded.commands[0]! as [string, Uri, Uri];
    assert.equal(command, 'vscode.diff');
    assert.equal(left.scheme, review.BASE_SCHEME);
    assert.equal(right.fsPath, path.join(worktree, 'README.md'));
    assert.ok(gitRuns().length > 0, 'the wrapper logged no git: "no git at all" below would prove nothing');
  });

  it('base_ref "--output=…" writes no file and is refused', async () => {
    const text = await baseText('output-task', 'README.md');
    assert.deepEqual(readdirSync(outside), [], 'git wrote a file outside the repository');
    assert.match(text, /refused.*base_ref/);
    assert.ok(!gitRuns().some((run) => run.includes('--output')), 'the option reached git');
  });

  it('a worktree pointing at a committed bare repository runs no textconv and is refused', async () => {
    const text = await baseText('evil-task', 'README.md');
    assert.ok(!existsSync(marker), "the repository's textconv command ran");
    // Read from this root's own repository with `cat-file blob`: a gitlink is no blob, so the base is empty.
    assert.equal(text, '');
    assert.ok(!gitRuns().some((run) => run.split(' ').includes('show')), 'git show ran');
    assert.ok(gitRuns().every((run) => !run.includes(bare)), 'git ran in the directory the record names');
    await assert.rejects(openChange('evil-task', 'README.md'), /not a worktree of this repository/);
    assert.deepEqual(recorded.commands, [], 'a diff was opened on the bare repository');
    assert.ok(!existsSync(marker));
  });

  it('a path with ".." is refused: nothing outside the worktree is opened', async () => {
    const escape = path.relative(worktree, path.join(outside, 'secret.txt'));
    writeFileSync(path.join(outside, 'secret.txt'), 'not the task\'s\n');
    await assert.rejects(openChange('dotdot-task', escape), /not a normalized relative path/);
    assert.deepEqual(recorded.commands, [], 'a file outside the worktree was opened');
    assert.match(await baseText('dotdot-task', escape), /refused/);
    assert.deepEqual(gitRuns(), [], 'git ran for a refused path');
    execFileSync('rm', ['-f', path.join(outside, 'secret.txt')]);
  });

  it('in an untrusted workspace runs no git at all and explains why, for every record', async () => {
    resetVscodeStub(false);
    for (const id of ['real-task', 'output-task', 'evil-task', 'dotdot-task']) {
      assert.equal(await baseText(id, 'README.md'), review.UNTRUSTED_REVIEW, id);
      await openChange(id, 'README.md');
    }
    assert.deepEqual(gitRuns(), [], 'git ran in an untrusted workspace');
    assert.deepEqual(recorded.commands, [], 'a file was opened on a record\'s say-so');
    assert.equal(recorded.warnings.length, 4);
    assert.match(recorded.warnings[0]!, /not trusted/);
    assert.ok(!existsSync(marker));
    assert.deepEqual(readdirSync(outside), []);
  });
});

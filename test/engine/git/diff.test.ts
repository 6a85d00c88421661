import { strict as assert } from 'node:assert';
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { ReportSchema, type Report } from '../../../src/protocol';
import { reconcileReport, worktreeDiff, type DiffResult } from '../../../src/engine/git/reconcile';
import { createWorktree } from '../../../src/engine/git/worktree';
import { cleanupTemp, commitAll, git, makeRepo, tempDir, writeFiles } from './helpers';

async function worktreeOf(files: Record<string, string | Buffer> = { 'a.txt': 'one\ntwo\n', 'b.txt': 'bee\n' }) {
  const repo = makeRepo(files);
  const wt = await createWorktree({ gitRoot: repo, id: `t_${Math.random().toString(16).slice(2, 10)}` });
  return { repo, wt };
}

function byPath(diff: DiffResult) {
  return Object.fromEntries(diff.files.map((f) => [f.path, f]));
}

/** Runs `fn` with GIT_TRACE on, and counts the `git diff-index` processes it started. */
async function countingDiffs<T>(fn: () => Promise<T>): Promise<{ result: T; diffs: number }> {
  const trace = path.join(tempDir(), 'trace');
  const previous = process.env.GIT_TRACE;
  process.env.GIT_TRACE = trace;
  try {
    const result = await fn();
    const log = existsSync(trace) ? readFileSync(trace, 'utf8') : '';
    return { result, diffs: log.split('\n').filter((l) => l.includes('built-in: git diff-index')).length };
  } finally {
    if (previous === undefined) delete process.env.GIT_TRACE;
    else process.env.GIT_TRACE = previous;
  }
}

describe('engine/git/git: worktree diff against base_ref', () => {
  afterEach(cleanupTemp);

  it('shows a created file without any commit or git add, and leaves the worktree index untouched', async () => {
    const { wt } = await worktreeOf();
    writeFiles(wt.path, { 'new.txt': 'fresh\nline\n' });
    const indexBefore = git(wt.path, 'ls-files', '-s');
    const diff = await worktreeDiff(wt.path, wt.base_ref, []);
    assert.deepEqual(diff.files, [{ path: 'new.txt', action: 'created', additions: 2, deletions: 0, binary: false }]);
    assert.match(diff.patch, /\+fresh/);
    assert.equal(diff.is_empty, false);
    assert.equal(git(wt.path, 'ls-files', '-s'), indexBefore);
    assert.equal(git(wt.path, 'status', '--porcelain'), '?? new.txt\n');
  });

  it('reports a deletion and a modification with +/- counts', async () => {
    const { wt } = await worktreeOf();
    rmSync(path.join(wt.path, 'b.txt'));
    writeFiles(wt.path, { 'a.txt': 'one\nTWO\nthree\n' });
    const files = byPath(await worktreeDiff(wt.path, wt.base_ref, []));
    assert.deepEqual(files['b.txt'], { path: 'b.txt', action: 'deleted', additions: 0, deletions: 1, binary: false });
    assert.deepEqual(files['a.txt'], { path: 'a.txt', action: 'modified', additions: 2, deletions: 1, binary: false });
  });

  it('sees a same-size edit made in the same second as the checkout (racy stat data)', async () => {
    const { wt } = await worktreeOf({ 'a.txt': 'one\n' });
    const file = path.join(wt.path, 'a.txt');
    const checkedOut = statSync(file);
    writeFiles(wt.path, { 'a.txt': 'two\n' });
    // Same size and same mtime as the index entry: only git's racy-timestamp check can notice the edit, and only
    // if our private index copy does not look newer than the real one (it is read well after the checkout).
    utimesSync(file, checkedOut.atime, checkedOut.mtime);
    await new Promise((resolve) => setTimeout(resolve, 1100));
    const diff = await worktreeDiff(wt.path, wt.base_ref, []);
    assert.deepEqual(diff.files.map((f) => [f.path, f.action]), [['a.txt', 'modified']]);
  });

  it('reports a rename with its old path', async () => {
    const { wt } = await worktreeOf({ 'old name.txt': 'same content\nlong enough to be similar\n' });
    renameSync(path.join(wt.path, 'old name.txt'), path.join(wt.path, 'new name.txt'));
    const diff = await worktreeDiff(wt.path, wt.base_ref, []);
    assert.deepEqual(diff.files, [{ path: 'new name.txt', old_path: 'old name.txt', action: 'renamed', additions: 0, deletions: 0, binary: false }]);
  });

  it('gives the same diff whether the agent commits everything, some of it, or nothing', async () => {
    const work = (dir: string) => {
      writeFiles(dir, { 'a.txt': 'one\nchanged\n', 'c.txt': 'sea\n' });
      rmSync(path.join(dir, 'b.txt'));
    };
    const none = await worktreeOf();
    work(none.wt.path);
    const all = await worktreeOf();
    work(all.wt.path);
    commitAll(all.wt.path, 'agent commit');
    const mixed = await worktreeOf();
    writeFiles(mixed.wt.path, { 'a.txt': 'one\nchanged\n' });
    commitAll(mixed.wt.path, 'first half');
    writeFiles(mixed.wt.path, { 'c.txt': 'sea\n' });
    rmSync(path.join(mixed.wt.path, 'b.txt'));

    const diffs = await Promise.all([none, all, mixed].map(({ wt }) => worktreeDiff(wt.path, wt.base_ref, [])));
    const [d0, d1, d2] = diffs as [DiffResult, DiffResult, DiffResult];
    assert.equal(d0.files.length, 3);
    assert.deepEqual(d1.files, d0.files);
    assert.deepEqual(d2.files, d0.files);
    assert.equal(d1.patch, d0.patch);
    assert.equal(d2.patch_digest, d0.patch_digest);
    // Against HEAD the committed variant would look clean: the base is what makes them equal.
    assert.equal(git(all.wt.path, 'status', '--porcelain'), '');
  });

  it('marks a binary file as binary with zero counts and carries it in the patch (--binary)', async () => {
    const { wt } = await worktreeOf();
    const bytes = Buffer.concat([Buffer.from([0, 1, 2, 0, 255]), randomBytes(251)]);
    writeFiles(wt.path, { 'bin/blob.dat': bytes });
    const diff = await worktreeDiff(wt.path, wt.base_ref, []);
    assert.deepEqual(diff.files, [{ path: 'bin/blob.dat', action: 'created', additions: 0, deletions: 0, binary: true }]);
    assert.match(diff.patch, /GIT binary patch/);
    assert.ok(diff.patch_bytes.includes('GIT binary patch'));
    assert.equal(JSON.stringify(diff).includes('patch_bytes'), false, 'bytes stay out of JSON output');
    assert.doesNotMatch(diff.patch, /Binary files .* differ/);
  });

  it('stores non-ASCII and spaced paths unquoted', async () => {
    const { wt } = await worktreeOf();
    writeFiles(wt.path, { 'é new.txt': 'accent\n', 'dir with space/ü.txt': 'umlaut\n' });
    const paths = (await worktreeDiff(wt.path, wt.base_ref, [])).files.map((f) => f.path).sort();
    assert.deepEqual(paths, ['dir with space/ü.txt', 'é new.txt']);
  });

  it('excludes paths with prefix semantics by segment, in the files AND the patch', async () => {
    const { wt } = await worktreeOf();
    writeFiles(wt.path, {
      'node_modules/x/index.js': 'x\n',
      'node_modules-old/y.js': 'y\n',
      'vendor/cache/z': 'z\n',
      'src/main.ts': 'main\n',
    });
    const diff = await worktreeDiff(wt.path, wt.base_ref, ['node_modules', './vendor/cache/', '']);
    assert.deepEqual(diff.files.map((f) => f.path).sort(), ['node_modules-old/y.js', 'src/main.ts']);
    assert.doesNotMatch(diff.patch, /node_modules\/x/);
    assert.doesNotMatch(diff.patch, /vendor\/cache/);
    assert.match(diff.patch, /node_modules-old\/y\.js/);
  });

  it('is empty when nothing changed, and when the only change is excluded', async () => {
    const { wt } = await worktreeOf();
    const clean = await worktreeDiff(wt.path, wt.base_ref, []);
    assert.equal(clean.is_empty, true);
    assert.equal(clean.patch, '');
    mkdirSync(path.join(wt.path, 'cache'));
    writeFileSync(path.join(wt.path, 'cache', 'f'), 'x');
    assert.equal((await worktreeDiff(wt.path, wt.base_ref, ['cache'])).is_empty, true);
  });

  it('restricts to chosen files and keeps a chosen rename whole', async () => {
    const { wt } = await worktreeOf({ 'a.txt': 'a\n', 'b.txt': 'b\n', 'r-old.txt': 'rename me please\nsecond line\n' });
    writeFiles(wt.path, { 'a.txt': 'A\n', 'b.txt': 'B\n' });
    renameSync(path.join(wt.path, 'r-old.txt'), path.join(wt.path, 'r-new.txt'));
    const diff = await worktreeDiff(wt.path, wt.base_ref, [], { only: ['b.txt', 'r-new.txt'] });
    assert.deepEqual(diff.files.map((f) => [f.path, f.action]), [['b.txt', 'modified'], ['r-new.txt', 'renamed']]);
    await assert.rejects(worktreeDiff(wt.path, wt.base_ref, [], { only: ['nope.txt'] }), /Not in the task's diff: nope\.txt/);
  });

  it('a symlink pointing into the main repository is reported as a created link, not followed', async () => {
    const { repo, wt } = await worktreeOf();
    symlinkSync(path.join(repo, 'a.txt'), path.join(wt.path, 'link-to-main'));
    const diff = await worktreeDiff(wt.path, wt.base_ref, []);
    assert.deepEqual(diff.files.map((f) => [f.path, f.action]), [['link-to-main', 'created']]);
    assert.match(diff.patch, /new file mode 120000/);
  });

  it('parses names that look like diff syntax (leading colon, tabs, newlines) beside a rename, with counts', async () => {
    const { wt } = await worktreeOf({ 'a.txt': 'one\ntwo\n', 'tab\there.txt': 'moved content\nlong enough to match\n' });
    writeFiles(wt.path, { ':colon.txt': 'c\n', 'ends with tab\t': 't\nt\n', 'line\nbreak.txt': 'l\n', 'a.txt': 'one\n' });
    renameSync(path.join(wt.path, 'tab\there.txt'), path.join(wt.path, ':renamed\t.txt'));
    const diff = await worktreeDiff(wt.path, wt.base_ref, []);
    assert.deepEqual(byPath(diff), {
      ':colon.txt': { path: ':colon.txt', action: 'created', additions: 1, deletions: 0, binary: false },
      ':renamed\t.txt': { path: ':renamed\t.txt', old_path: 'tab\there.txt', action: 'renamed', additions: 0, deletions: 0, binary: false },
      'a.txt': { path: 'a.txt', action: 'modified', additions: 0, deletions: 1, binary: false },
      'ends with tab\t': { path: 'ends with tab\t', action: 'created', additions: 2, deletions: 0, binary: false },
      'line\nbreak.txt': { path: 'line\nbreak.txt', action: 'created', additions: 1, deletions: 0, binary: false },
    });
    assert.match(diff.patch, /^diff --git /);
  });

  it('without untracked files reads the worktree index in place and never rewrites it (racy entries included)', async () => {
    const { wt } = await worktreeOf({ 'a.txt': 'one\n', 'b.txt': 'bee\n' });
    writeFiles(wt.path, { 'a.txt': 'two\n' }); // same size, same second as the checkout: git must re-read it
    const index = git(wt.path, 'rev-parse', '--git-path', 'index').trim();
    const indexFile = path.resolve(wt.path, index);
    const before = { bytes: readFileSync(indexFile), mtime: statSync(indexFile).mtimeMs };
    const diff = await worktreeDiff(wt.path, wt.base_ref, []);
    assert.deepEqual(diff.files.map((f) => [f.path, f.action]), [['a.txt', 'modified']]);
    assert.deepEqual({ bytes: readFileSync(indexFile), mtime: statSync(indexFile).mtimeMs }, before);
  });

  it('a touched or identically rewritten file is no change; a mode change is one', async () => {
    const { wt } = await worktreeOf({ 'a.txt': 'one\n', 'b.txt': 'bee\n', 'run.sh': 'echo hi\n' });
    await new Promise((resolve) => setTimeout(resolve, 1100)); // out of the checkout's second: stat data now differ
    const later = new Date();
    utimesSync(path.join(wt.path, 'a.txt'), later, later);
    writeFiles(wt.path, { 'b.txt': 'bee\n' });
    for (const options of [{}, { patch: false }]) {
      const clean = await worktreeDiff(wt.path, wt.base_ref, [], options);
      assert.deepEqual(clean.files, []);
      assert.equal(clean.is_empty, true);
    }
    chmodSync(path.join(wt.path, 'run.sh'), 0o755);
    const diff = await worktreeDiff(wt.path, wt.base_ref, []);
    assert.deepEqual(diff.files, [{ path: 'run.sh', action: 'modified', additions: 0, deletions: 0, binary: false }]);
    assert.match(diff.patch, /new mode 100755/);
  });

  it('counts read off the patch equal git numstat for every kind of change', async () => {
    const { wt } = await worktreeOf({
      'a.txt': 'one\ntwo\nthree\n',
      'gone.txt': 'bye\n',
      'moved.txt': 'a line that stays\nanother that stays\n',
      'run.sh': 'echo hi\n',
      'touched.txt': 'same\n',
      'becomes-link': 'was a file\n',
      'q"uote\\d.txt': 'x\n',
      'bin.dat': Buffer.from([0, 1, 2, 3]),
    });
    await new Promise((resolve) => setTimeout(resolve, 1100));
    writeFiles(wt.path, {
      'a.txt': 'one\nTWO\nthree\nfour\n',
      'new\ttab.txt': 'n\n',
      'touched.txt': 'same\n',
      'q"uote\\d.txt': 'y\n',
      'bin.dat': Buffer.from([0, 9, 9, 9, 9]),
      'dir/é.txt': '+++ looks like a header\n--- and another\n@@ not a hunk\n',
    });
    rmSync(path.join(wt.path, 'gone.txt'));
    renameSync(path.join(wt.path, 'moved.txt'), path.join(wt.path, 'moved-to.txt'));
    chmodSync(path.join(wt.path, 'run.sh'), 0o755);
    const withPatch = await countingDiffs(() => worktreeDiff(wt.path, wt.base_ref, []));
    assert.equal(withPatch.diffs, 1, 'one git diff gives files, counts and patch');
    const listOnly = await worktreeDiff(wt.path, wt.base_ref, [], { patch: false });
    assert.deepEqual(withPatch.result.files, listOnly.files);
    const files = byPath(withPatch.result);
    assert.deepEqual(files['dir/é.txt'], { path: 'dir/é.txt', action: 'created', additions: 3, deletions: 0, binary: false });
    assert.deepEqual(files['bin.dat']?.binary, true);
    assert.equal(files['touched.txt'], undefined);
    assert.equal(withPatch.result.files.length, 8);

    // A file replaced by a symlink is two patch sections for one entry: the counts then come from git's numstat.
    rmSync(path.join(wt.path, 'becomes-link'));
    symlinkSync('a.txt', path.join(wt.path, 'becomes-link'));
    const typeChange = await worktreeDiff(wt.path, wt.base_ref, []);
    assert.deepEqual(typeChange.files, (await worktreeDiff(wt.path, wt.base_ref, [], { patch: false })).files);
    assert.deepEqual(byPath(typeChange)['becomes-link']?.action, 'modified');
  });

  it('patch: false gives the same files without a patch', async () => {
    const { wt } = await worktreeOf();
    writeFiles(wt.path, { 'a.txt': 'one\nTWO\n', 'new.txt': 'n\n' });
    const full = await worktreeDiff(wt.path, wt.base_ref, []);
    const list = await worktreeDiff(wt.path, wt.base_ref, [], { patch: false });
    assert.deepEqual(list.files, full.files);
    assert.equal(list.is_empty, false);
    assert.equal(list.patch, '');
    assert.equal(list.patch_bytes.length, 0);
    const clean = await worktreeOf();
    assert.equal((await worktreeDiff(clean.wt.path, clean.wt.base_ref, [], { patch: false })).is_empty, true);
  });
});

describe('engine/git/git: reconcileReport', () => {
  const report = (changes: Report['changes'], findings: Report['findings'] = []): Report =>
    ReportSchema.parse({ protocol: 'caesar.report/v1', status: 'success', summary: 'done', changes, findings });
  const diff = {
    is_empty: false,
    files: [
      { path: 'a.txt', action: 'modified' as const, additions: 1, deletions: 1, binary: false },
      { path: 'new.txt', old_path: 'old.txt', action: 'renamed' as const, additions: 0, deletions: 0, binary: false },
      { path: 'undeclared.txt', action: 'created' as const, additions: 1, deletions: 0, binary: false },
    ],
  };

  it('without a diff keeps the declaration', () => {
    const input = report([{ path: 'x', action: 'created', summary: 's' }]);
    const out = reconcileReport(input, undefined, 'write');
    assert.equal(out.changes_verified_by, 'declaration');
    assert.deepEqual(out.report, input);
  });

  it('replaces changes with the diff, flags undeclared and declared-but-absent files, keeps existing findings', () => {
    const existing = { severity: 'info' as const, title: 'agent note', detail: '' };
    const input = report(
      [
        { path: './a.txt', action: 'modified', summary: 'tweaked a' },
        { path: 'old.txt', action: 'deleted', summary: '' },
        { path: 'ghost.txt', action: 'created', summary: 'never written' },
      ],
      [existing],
    );
    const out = reconcileReport(input, diff, 'write');
    assert.equal(out.changes_verified_by, 'git');
    assert.deepEqual(out.report.changes, [
      { path: 'a.txt', action: 'modified', summary: 'tweaked a' },
      { path: 'new.txt', action: 'renamed', summary: 'renamed from old.txt' },
      { path: 'undeclared.txt', action: 'created', summary: '' },
    ]);
    assert.deepEqual(out.report.findings[0], existing);
    const titles = out.report.findings.slice(1).map((f) => [f.severity, f.title, f.file]);
    assert.deepEqual(titles, [
      ['medium', 'Undeclared change', 'undeclared.txt'],
      ['medium', 'Change declared but not found in the diff', 'ghost.txt'],
    ]);
  });

  it('maps absolute declared paths under a repository root and a workspace prefix', () => {
    const input = report([
      { path: '/wt/abs/a.txt', action: 'modified', summary: '' },
      { path: 'b.txt', action: 'modified', summary: '' },
    ]);
    const out = reconcileReport(
      input,
      { is_empty: false, files: [
        { path: 'abs/a.txt', action: 'modified', additions: 1, deletions: 0, binary: false },
        { path: 'pkg/b.txt', action: 'modified', additions: 1, deletions: 0, binary: false },
      ] },
      'write',
      { roots: ['/wt'], prefix: 'pkg' },
    );
    assert.deepEqual(out.report.findings, []);
  });

  it('a read-only task with a non-empty diff gets a high finding listing the paths', () => {
    const out = reconcileReport(report([]), diff, 'read-only');
    const high = out.report.findings.find((f) => f.severity === 'high');
    assert.equal(high?.title, 'Write detected during a read-only task');
    assert.match(high?.detail ?? '', /a\.txt, new\.txt, undeclared\.txt/);
    const clean = reconcileReport(report([]), { files: [], is_empty: true }, 'read-only');
    assert.deepEqual(clean.report.findings, []);
    assert.equal(clean.changes_verified_by, 'git');
  });
});

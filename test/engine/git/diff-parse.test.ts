import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import { countsFromPatch, parseDiffOutput, parseNameStatus, parseNumstat, withoutUnchanged } from '../../../src/engine/git/diff-parse';
import { cleanupTemp, makeRepo, writeFiles } from './helpers';

/** Real `git diff-index` output of a repository with a modification, a creation, a deletion and a rename. */
function realDiffOutput(formats: string[]): Buffer {
  const repo = makeRepo({ 'a.txt': 'one\ntwo\n', 'gone.txt': 'bye\n', 'old name.txt': 'same\ncontent\nhere\n' });
  writeFiles(repo, { 'a.txt': 'one\nTWO\nthree\n', 'new\tfile.txt': 'fresh\n', 'renamed.txt': 'same\ncontent\nhere\n' });
  execFileSync('git', ['rm', '-q', 'gone.txt', 'old name.txt'], { cwd: repo });
  execFileSync('git', ['add', '-A'], { cwd: repo });
  return execFileSync('git', ['-c', 'core.quotePath=false', 'diff-index', '--cached', '--find-renames', '--no-color', ...formats, '-z', 'HEAD'], { cwd: repo });
}

describe('engine/git/diff-parse: git -z diff output parsers (no git run by the parser)', () => {
  afterEach(cleanupTemp);

  it('parseDiffOutput reads raw + numstat records of real git output', () => {
    const raw = parseDiffOutput(realDiffOutput(['--raw', '--numstat']));
    const byPath = Object.fromEntries(raw.entries.map((e) => [e.path, e]));
    assert.deepEqual(byPath['a.txt'], { path: 'a.txt', action: 'modified' });
    assert.deepEqual(byPath['gone.txt'], { path: 'gone.txt', action: 'deleted' });
    assert.deepEqual(byPath['new\tfile.txt'], { path: 'new\tfile.txt', action: 'created' });
    assert.deepEqual(byPath['renamed.txt'], { path: 'renamed.txt', old_path: 'old name.txt', action: 'renamed' });
    assert.deepEqual(raw.counts.get('a.txt'), { additions: 2, deletions: 1, binary: false });
    assert.deepEqual(raw.counts.get('renamed.txt'), { additions: 0, deletions: 0, binary: false });
    assert.equal(raw.patch.length, 0);
  });

  it('countsFromPatch agrees with numstat on the same real diff', () => {
    const withPatch = parseDiffOutput(realDiffOutput(['--raw', '-p', '--binary', '--full-index']));
    assert.ok(withPatch.patch.length > 0);
    const fromPatch = countsFromPatch(withPatch.entries, withPatch.unhashed, withPatch.patch);
    assert.ok(fromPatch, 'the patch lines up with the listing');
    const numstat = parseDiffOutput(realDiffOutput(['--raw', '--numstat'])).counts;
    for (const [file, counts] of numstat) assert.deepEqual(fromPatch.counts.get(file), counts, file);
  });

  it('countsFromPatch gives up (undefined) on a patch that does not line up', () => {
    const withPatch = parseDiffOutput(realDiffOutput(['--raw', '-p']));
    assert.equal(countsFromPatch(withPatch.entries, withPatch.unhashed, Buffer.from('not a patch')), undefined);
    assert.equal(countsFromPatch(withPatch.entries.slice(1), withPatch.unhashed, withPatch.patch), undefined);
  });

  it('parseNameStatus maps statuses and skips unknown letters', () => {
    const out = Buffer.from('M\0a\0R100\0old\0new\0C050\0src\0copy\0A\0b\0D\0c\0X\0weird\0T\0t\0');
    assert.deepEqual(parseNameStatus(out), [
      { path: 'a', action: 'modified' },
      { path: 'new', old_path: 'old', action: 'renamed' },
      { path: 'copy', action: 'created' },
      { path: 'b', action: 'created' },
      { path: 'c', action: 'deleted' },
      { path: 't', action: 'modified' },
    ]);
  });

  it('parseNumstat reads plain, binary and rename records', () => {
    const counts = parseNumstat(Buffer.from('3\t1\ta.txt\0-\t-\tpic.png\0' + '0\t0\t\0old\0new\0'));
    assert.deepEqual(counts.get('a.txt'), { additions: 3, deletions: 1, binary: false });
    assert.deepEqual(counts.get('pic.png'), { additions: 0, deletions: 0, binary: true });
    assert.deepEqual(counts.get('new'), { additions: 0, deletions: 0, binary: false });
  });

  it('withoutUnchanged drops a touched file (unhashed, no numstat record) and keeps real changes', () => {
    const out = Buffer.from(
      ':100644 100644 1111111111111111111111111111111111111111 0000000000000000000000000000000000000000 M\0touched\0' +
        ':100644 100644 1111111111111111111111111111111111111111 0000000000000000000000000000000000000000 M\0edited\0' +
        '1\t1\tedited\0',
    );
    const raw = parseDiffOutput(out);
    assert.equal(raw.unhashed.size, 2);
    assert.deepEqual(withoutUnchanged(raw).entries.map((e) => e.path), ['edited']);
  });
});

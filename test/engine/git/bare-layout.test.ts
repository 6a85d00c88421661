import { strict as assert } from 'node:assert';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { bareRepositoryLayouts, validHead } from '../../../src/engine/git/bare-layout';
import { gitlinkPaths, mayHoldGitlink } from '../../../src/engine/git/gitlinks';
import { git, makeRepo } from '../runtime/helpers';

/** What makes a folder of a diff a repository to git (bare-layout.ts), and the gitlinks of an index (gitlinks.ts). */
describe('engine/git: repository layouts in a diff, gitlinks in an index', () => {
  let base: string;
  beforeEach(() => {
    base = mkdtempSync(path.join(tmpdir(), 'caesar-bare-layout-'));
  });
  afterEach(() => rmSync(base, { recursive: true, force: true }));

  const write = (rel: string, content: string) => {
    mkdirSync(path.dirname(path.join(base, rel)), { recursive: true });
    writeFileSync(path.join(base, rel), content);
  };

  it('a HEAD is valid as git\'s validate_headref says: a symbolic ref under refs/, an object id, a link to refs/', async () => {
    write('a/HEAD', 'ref: refs/heads/main\n');
    write('b/HEAD', 'ref:   refs/x\n');
    write('c/HEAD', `${'0123456789abcdef'.repeat(3).slice(0, 40)}\n`);
    write('d/HEAD', 'ref: heads/main\n');
    write('e/HEAD', 'the head of the document\n');
    mkdirSync(path.join(base, 'f'));
    symlinkSync('refs/heads/main', path.join(base, 'f', 'HEAD'));
    const valid = await Promise.all(['a', 'b', 'c', 'd', 'e', 'f', 'missing'].map((d) => validHead(path.join(base, d, 'HEAD'))));
    assert.deepEqual(valid, [true, true, true, false, false, true, false]);
  });

  it('lists the folders of the diff\'s valid HEADs, not deleted ones, nor files merely ending in HEAD', async () => {
    write('HEAD', 'ref: refs/heads/main\n');
    write('x/HEAD', 'ref: refs/heads/main\n');
    write('y/ORIG_HEAD', 'ref: refs/heads/main\n');
    write('z/HEAD', 'notes\n');
    const files = ['HEAD', 'x/HEAD', 'y/ORIG_HEAD', 'z/HEAD'].map((p) => ({ path: p, action: 'created' }));
    assert.deepEqual(await bareRepositoryLayouts(base, [...files, { path: 'gone/HEAD', action: 'deleted' }]), ['.', 'x']);
  });

  it('an index holds a gitlink only when its bytes say it may; the listing names its path', async () => {
    const repo = makeRepo({ 'a.txt': 'a\n' });
    try {
      assert.equal(await mayHoldGitlink(path.join(repo, '.git', 'index')), false);
      assert.equal(await mayHoldGitlink(path.join(repo, 'no-index')), false);
      const sub = path.join(repo, 'sub');
      mkdirSync(sub);
      git(sub, 'init', '-q');
      git(sub, '-c', 'user.name=A', '-c', 'user.email=a@b', 'commit', '-q', '--allow-empty', '-m', 'x');
      git(repo, 'add', 'sub');
      assert.equal(await mayHoldGitlink(path.join(repo, '.git', 'index')), true);
      const listing = Buffer.from(git(repo, 'ls-files', '--stage', '-z'));
      assert.deepEqual(gitlinkPaths(listing), ['sub']);
    } finally {
      rmSync(repo, { recursive: true, force: true });
    }
  });
});

import { strict as assert } from 'node:assert';
import { existsSync, mkdirSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { recoverInterruptedApply } from '../../src/engine/git/apply-recovery';
import { applyStateDir } from '../../src/engine/git/apply-lock';
import { makeRepoIn, fastScratch } from './apply-helpers';

/**
 * A journal is acted on only when it is this checkout's own: one copied from another checkout (or planted by a
 * cloned repository or an agent) that names another checkout, or a path outside this one, changes nothing.
 */
function plantJournal(repo: string, doc: Record<string, unknown>, backup?: string): string {
  const dir = path.join(applyStateDir(repo), 'journal');
  mkdirSync(path.join(dir, 'backup'), { recursive: true });
  writeFileSync(path.join(dir, 'patch'), '');
  if (backup !== undefined) writeFileSync(path.join(dir, 'backup', '0'), backup);
  writeFileSync(path.join(dir, 'journal.json'), JSON.stringify(doc));
  return dir;
}

function journalDoc(repo: string, entries: unknown[], over: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    version: 1,
    token: 'planted',
    task_id: 't_0123456789abcdef0123456789abcdef',
    task_root: repo,
    checkout: realpathSync(repo),
    created_at: new Date().toISOString(),
    pid: 1,
    host: 'elsewhere',
    entries,
    created_dirs: [],
    record: { applied_at: 'x', patch_digest: 'y', files: [] },
    ...over,
  };
}

describe('reliability: planted apply journals', () => {
  let repo: string;
  beforeEach(() => (repo = makeRepoIn(fastScratch())));
  afterEach(() => rmSync(repo, { recursive: true, force: true }));

  const cases: Array<[string, (repo: string) => Record<string, unknown>, RegExp]> = [
    ['names another checkout', (r) => journalDoc(r, [{ path: 'README.md', kind: 'file', mode: 0o644, size: 6, backup: '0', mtime_ms: 0 }], { checkout: '/somewhere/else' }), /belongs to \/somewhere\/else/],
    ['restores a path outside the checkout', (r) => journalDoc(r, [{ path: '../outside.txt', kind: 'file', mode: 0o644, size: 6, backup: '0', mtime_ms: 0 }]), /not a plain path/],
    ['writes into .git', (r) => journalDoc(r, [{ path: '.git/hooks/pre-commit', kind: 'file', mode: 0o755, size: 6, backup: '0', mtime_ms: 0 }]), /not a plain path/],
    ['removes an absolute path', (r) => journalDoc(r, [{ path: '/etc/hostname', kind: 'absent' }]), /not a plain path/],
  ];
  for (const [what, doc, why] of cases) {
    it(`a journal that ${what} is refused and changes nothing`, async () => {
      const before = readFileSync(path.join(repo, 'README.md'), 'utf8');
      const dir = plantJournal(repo, doc(repo), 'owned\n');
      const report = await recoverInterruptedApply(repo);
      assert.equal(report?.action, 'failed');
      assert.match(report?.message ?? '', why);
      assert.equal(readFileSync(path.join(repo, 'README.md'), 'utf8'), before);
      assert.ok(!existsSync(path.join(path.dirname(repo), 'outside.txt')));
      assert.ok(existsSync(dir), 'the journal is left for the user to inspect');
    });
  }

  it('a symlinked parent folder in the checkout is never written through on rollback', async () => {
    const outside = realpathSync(makeRepoIn(fastScratch()));
    try {
      // `linked` points outside; the journal says linked/x.txt "did not exist" before, so a rollback would remove it.
      symlinkSync(outside, path.join(repo, 'linked'));
      writeFileSync(path.join(outside, 'x.txt'), 'keep me\n');
      plantJournal(repo, journalDoc(repo, [{ path: 'linked/x.txt', kind: 'absent' }]));
      const report = await recoverInterruptedApply(repo);
      assert.equal(report?.action, 'failed', report?.message);
      assert.match(report?.message ?? '', /symbolic link/);
      assert.equal(readFileSync(path.join(outside, 'x.txt'), 'utf8'), 'keep me\n');
    } finally {
      rmSync(outside, { recursive: true, force: true });
    }
  });
});

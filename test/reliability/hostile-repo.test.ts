import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, ftruncateSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { checkoutWritesFinding, guardCheckout } from '../../src/engine/git/checkout-guard';
import { worktreeDiff } from '../../src/engine/git/reconcile';
import { createWorktree } from '../../src/engine/git/worktree';
import { cleanupTemp, makeRepo } from '../engine/git/helpers';
import { within } from '../engine/security/helpers';

/**
 * Hostile repositories: what an agent (or a cloned repository) can leave in a folder that caesar then diffs. The
 * readers of task files and records are covered in test/engine/security (task-files, safe-read, record-checks,
 * review: symlinks to /dev/zero, FIFOs, crafted records) and are run with this suite; these cases are the git side.
 */
describe('reliability: hostile repositories (the git side)', function () {
  this.timeout(60_000);
  afterEach(cleanupTemp);

  function plant(dir: string): void {
    execFileSync('mkfifo', [path.join(dir, 'pipe')]);
    if (process.getuid?.() === 0) execFileSync('mknod', [path.join(dir, 'zero-device'), 'c', '1', '5']);
    symlinkSync('/etc/passwd', path.join(dir, 'outside-link'));
    symlinkSync('/dev/zero', path.join(dir, 'zero-link'));
    // 64 MiB of zeros, sparse: git hashes it once and reports it as binary, it is never read into memory whole.
    const fd = openSync(path.join(dir, 'huge.bin'), 'w');
    ftruncateSync(fd, 64 * 1024 * 1024);
    closeSync(fd);
    writeFileSync(path.join(dir, 'ok.txt'), 'fine\n');
  }

  it('a worktree holding a FIFO, a device, symlinks out and a 64 MiB file: the diff completes, links stay links', async () => {
    const repo = makeRepo();
    const wt = await createWorktree({ gitRoot: repo, id: 't_hostile' });
    plant(wt.path);
    const diff = await within(30_000, 'worktreeDiff', worktreeDiff(wt.path, wt.base_ref, []));
    const byPath = Object.fromEntries(diff.files.map((f) => [f.path, f]));
    assert.deepEqual(Object.keys(byPath).sort(), ['huge.bin', 'ok.txt', 'outside-link', 'zero-link'], 'FIFOs and devices are not content');
    assert.equal(byPath['huge.bin']!.binary, true);
    assert.match(diff.patch, /new file mode 120000/, 'a symlink is diffed as a link, its target never read');
    assert.doesNotMatch(diff.patch, /root:x:0:0/, 'the content of /etc/passwd never enters the patch');
  });

  it('the same planted in the user checkout during a worktree task: the guard completes and names them', async () => {
    const repo = makeRepo();
    const before = await guardCheckout(repo, undefined, mkdtempSync(path.join(tmpdir(), 'caesar-guard-')));
    assert.ok(before);
    plant(repo);
    const finding = await within(30_000, 'checkoutWritesFinding', checkoutWritesFinding(before));
    assert.ok(finding);
    for (const name of ['huge.bin', 'ok.txt', 'outside-link', 'zero-link']) assert.match(finding.detail, new RegExp(name));
    assert.doesNotMatch(finding.detail, /pipe|zero-device/);
  });
});

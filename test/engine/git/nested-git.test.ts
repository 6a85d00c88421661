import { strict as assert } from 'node:assert';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { CAESAR_FOLDERS, moveAsideNestedGit, nestedGitEntries, uncheckedNestedRepositories } from '../../../src/engine/git/nested-git';

/** The walk that finds repositories an agent planted below its worktree's top level (engine/git/nested-git.ts). */
describe('engine/git: nested repositories in a worktree', () => {
  let base: string;
  beforeEach(() => {
    base = mkdtempSync(path.join(tmpdir(), 'caesar-nested-git-'));
  });
  afterEach(() => rmSync(base, { recursive: true, force: true }));

  function worktree(): string {
    const wt = path.join(base, 'wt');
    mkdirSync(path.join(wt, 'src', 'deep', '.git', 'objects'), { recursive: true }); // a folder, not walked into
    writeFileSync(path.join(wt, '.git'), 'gitdir: elsewhere\n'); // the worktree's own: never listed
    mkdirSync(path.join(wt, 'docs'));
    writeFileSync(path.join(wt, 'docs', '.git'), 'gitdir: ../.planted\n'); // a file
    mkdirSync(path.join(wt, 'lib'));
    symlinkSync(path.join(base, 'outside'), path.join(wt, 'lib', '.git')); // a link, even a dangling one
    mkdirSync(path.join(base, 'outside', 'pkg', '.git'), { recursive: true });
    symlinkSync(path.join(base, 'outside'), path.join(wt, 'linked')); // a linked folder is not followed
    return wt;
  }

  it('lists every .git below the top level (folder, file, link), not the worktree\'s own, not through links', () => {
    assert.deepEqual(nestedGitEntries(worktree()), { entries: ['docs/.git', 'lib/.git', 'src/deep/.git'], truncated: false });
  });

  it('in a checkout, Caesar\'s own folders are not walked (other tasks\' worktrees come and go there)', () => {
    const checkout = path.join(base, 'checkout');
    mkdirSync(path.join(checkout, '.caesar', 'wt', 't1'), { recursive: true });
    writeFileSync(path.join(checkout, '.caesar', 'wt', 't1', '.git'), 'gitdir: x\n');
    mkdirSync(path.join(checkout, 'src', '.git'), { recursive: true });
    assert.deepEqual(nestedGitEntries(checkout).entries, ['.caesar/wt/t1/.git', 'src/.git']);
    assert.deepEqual(nestedGitEntries(checkout, CAESAR_FOLDERS).entries, ['src/.git']);
  });

  it('moves aside what the task did not start with, keeps the rest, and says so', async () => {
    const wt = worktree();
    const quarantine = path.join(base, 'task', 'moved');
    const findings = await moveAsideNestedGit(wt, quarantine, new Set(['src/deep/.git']));
    assert.equal(findings.length, 1);
    assert.equal(findings[0]!.severity, 'high');
    assert.match(findings[0]!.detail, /docs\/\.git, lib\/\.git/);
    assert.deepEqual(readdirSync(quarantine).sort(), ['0-docs__.git', '1-lib__.git']);
    assert.equal(existsSync(path.join(wt, 'src', 'deep', '.git')), true, 'kept: the task started with it');
    assert.deepEqual(nestedGitEntries(wt).entries, ['src/deep/.git']);
    assert.deepEqual(await moveAsideNestedGit(wt, quarantine, new Set(['src/deep/.git'])), [], 'nothing more to say');
  });

  it('past its limit the walk refuses the result (a critical finding that apply and land honour), having moved aside what it found', async () => {
    const wt = worktree();
    for (let i = 0; i < 5; i++) mkdirSync(path.join(wt, `empty-${i}`));
    const quarantine = path.join(base, 'task', 'moved');
    const findings = await moveAsideNestedGit(wt, quarantine, new Set(), new Set(), 4);
    const unchecked = findings.find((f) => f.title === 'Nested repositories not checked');
    assert.equal(unchecked?.severity, 'critical');
    assert.match(unchecked!.detail, /more than 4 folders/);
    assert.deepEqual(uncheckedNestedRepositories(findings), [`nested repositories not checked: ${unchecked!.detail}`]);
    // Within the limit: nothing refused.
    assert.deepEqual(uncheckedNestedRepositories(await moveAsideNestedGit(wt, quarantine)), []);
  });
});

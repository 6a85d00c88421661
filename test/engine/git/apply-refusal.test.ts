import { strict as assert } from 'node:assert';
import { existsSync, lstatSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import * as path from 'node:path';
import { applyTask } from '../../../src/engine/git/apply';
import { createWorktree } from '../../../src/engine/git/worktree';
import { cleanupTemp, makeRepo, writeFiles, writeState } from './helpers';

let counter = 0;
async function task(repo: string) {
  const id = `t_refusal${++counter}`;
  const wt = await createWorktree({ gitRoot: repo, id });
  const state = writeState(repo, { id, root: repo, workspace: repo, worktree: wt.path, branch: wt.branch, base_ref: wt.base_ref });
  return { wt, state };
}

/*
 * Issue 34: a change the journal refuses to take on (a folder the task turns into a symbolic link) was reported as
 * "the copy of the files it would change could not be written … Free some disk space and retry": the person was sent
 * to free disk space for a refusal that has nothing to do with it. The refusal now says what it is.
 */
describe('engine/git: an apply refused before writing says why, not "free some disk space"', () => {
  afterEach(cleanupTemp);

  it('a folder replaced by a symbolic link: refused, the folder named, nothing written, no word of disk space', async () => {
    const repo = makeRepo({ 'lib/a.txt': 'a\n', 'keep.txt': 'one\n' });
    const { wt, state } = await task(repo);
    rmSync(path.join(wt.path, 'lib'), { recursive: true });
    symlinkSync('/etc', path.join(wt.path, 'lib'));
    writeFiles(wt.path, { 'keep.txt': 'two\n' });
    const outcome = await applyTask({ root: repo, state });
    assert.equal(outcome.applied, false);
    assert.doesNotMatch(outcome.message, /disk space/i);
    assert.match(outcome.message, /lib/);
    assert.ok(lstatSync(path.join(repo, 'lib')).isDirectory(), 'the folder is still a folder');
    assert.equal(readFileSync(path.join(repo, 'lib', 'a.txt'), 'utf8'), 'a\n');
    assert.equal(readFileSync(path.join(repo, 'keep.txt'), 'utf8'), 'one\n');
    assert.ok(existsSync(repo));
  });
});

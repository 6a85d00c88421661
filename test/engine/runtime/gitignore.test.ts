import { strict as assert } from 'node:assert';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { ensureCaesarGitignore } from '../../../src/engine/launch/delegate';
import { worktreeIgnoreFinding } from '../../../src/engine/git/worktree';
import { git, makeRepo } from './helpers';

/** makeRepo() ignores .caesar/ itself; these tests need a repository that does not. */
function bareRepo(): string {
  const repo = makeRepo();
  git(repo, 'rm', '-q', '--cached', '.gitignore');
  git(repo, 'commit', '-q', '-m', 'no ignore file');
  rmSync(path.join(repo, '.gitignore'));
  return repo;
}

describe('engine: .caesar/.gitignore on first delegation', () => {
  it('keeps task state and worktrees out of git status, and config.toml committable', async () => {
    const repo = bareRepo();
    assert.ok((await worktreeIgnoreFinding(repo, 't_1')) !== undefined, 'precondition: .caesar/ not ignored');
    await ensureCaesarGitignore(repo);
    mkdirSync(path.join(repo, '.caesar/tasks/t_1'), { recursive: true });
    writeFileSync(path.join(repo, '.caesar/tasks/t_1/state.json'), '{}');
    mkdirSync(path.join(repo, '.caesar/wt/t_1'), { recursive: true });
    writeFileSync(path.join(repo, '.caesar/wt/t_1/x'), 'x');
    assert.equal(git(repo, 'status', '--porcelain'), '', 'nothing of Caesar shows as untracked');
    assert.equal(await worktreeIgnoreFinding(repo, 't_1'), undefined, 'no "Worktrees not ignored" finding');
    writeFileSync(path.join(repo, '.caesar/config.toml'), '[policy]\n');
    assert.equal(git(repo, 'status', '--porcelain', '--untracked-files=all'), '?? .caesar/config.toml');
  });

  it('never overwrites a .caesar/.gitignore the user wrote', async () => {
    const repo = makeRepo();
    mkdirSync(path.join(repo, '.caesar'));
    writeFileSync(path.join(repo, '.caesar/.gitignore'), 'mine\n');
    await ensureCaesarGitignore(repo);
    assert.equal(readFileSync(path.join(repo, '.caesar/.gitignore'), 'utf8'), 'mine\n');
  });
});

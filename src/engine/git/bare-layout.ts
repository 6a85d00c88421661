import { lstat, open, readlink } from 'node:fs/promises';
import * as path from 'node:path';
import type { Finding } from '../../protocol';

/*
 * A task's diff can lay out a bare repository: a folder with a HEAD, a config naming core.fsmonitor (and
 * core.worktree), objects/ and refs/. Git never tracks a `.git`, but these are plain files: once applied, the user's
 * own `git status` in that folder finds it as a repository (git's discovery tries every folder as a bare one) and
 * runs the program its config names (measured on git 2.39.5). A HEAD is what every such layout needs: git takes a
 * folder for a git dir only when its HEAD is valid (validate_headref: `ref: refs/...`, an object id, or a link to
 * refs/...); objects/ and refs/ can even come from elsewhere (a `commondir` file). So any HEAD of the diff that git
 * would call valid refuses the apply and the land until the person accepts it, like a changed repository.
 */

/** The title of the finding (the task's conclusion) and the start of the refusal's reason (apply, land). */
export const BARE_LAYOUT = 'Repository layout in the diff';

/** git's own test of a HEAD (setup.c validate_headref), on what is in the work tree at `file`. */
export async function validHead(file: string): Promise<boolean> {
  const info = await lstat(file).catch(() => undefined);
  if (!info) return false;
  if (info.isSymbolicLink()) return (await readlink(file).catch(() => '')).startsWith('refs/');
  if (!info.isFile()) return false;
  const handle = await open(file, 'r');
  try {
    const buffer = Buffer.alloc(256);
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    const text = buffer.subarray(0, bytesRead).toString('latin1');
    if (text.startsWith('ref:')) return text.slice(4).trimStart().startsWith('refs/');
    return /^[0-9a-f]{40}/.test(text);
  } finally {
    await handle.close();
  }
}

/** The folders (repository-relative, '.' for the top) where the diff's files leave a HEAD git would take as valid. */
export async function bareRepositoryLayouts(workTree: string, files: ReadonlyArray<{ path: string; action: string }>): Promise<string[]> {
  const heads = files.filter((f) => f.action !== 'deleted' && path.posix.basename(f.path) === 'HEAD');
  const layouts: string[] = [];
  for (const head of heads) if (await validHead(path.join(workTree, ...head.path.split('/')))) layouts.push(path.posix.dirname(head.path));
  return layouts;
}

/** The refusal's reasons (repository_changes' wording), one per folder. */
export function bareLayoutReasons(layouts: readonly string[]): string[] {
  return layouts.map((folder) => `${BARE_LAYOUT}: ${folder}/HEAD makes ${folder === '.' ? 'the top folder' : folder} a git repository to git, whose config can name programs your own git runs there`);
}

/** The conclusion's finding for those folders, if any. */
export function bareLayoutFinding(layouts: readonly string[]): Finding[] {
  if (!layouts.length) return [];
  return [{
    severity: 'high',
    title: BARE_LAYOUT,
    detail: `The diff lays out ${layouts.length === 1 ? 'a git repository' : 'git repositories'} (${layouts.map((f) => `${f}/HEAD`).join(', ')}): once applied, git run in ${layouts.length === 1 ? 'that folder' : 'those folders'} (your editor's Git extension too) would take it for a repository and run what its config names. Apply and land refuse it until you accept it (--accept-repository-changes).`,
  }];
}

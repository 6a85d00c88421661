import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { CAESAR_DIR, isSafeId, worktreesDir } from '../../protocol';
import { readRegularFileBounded } from '../../base/safe-read';
import { runGitNeutral } from './git';

/*
 * A task record (state.json, result.json) may come from a cloned repository: every field a reader acts on is untrusted
 * input (DESIGN.md principle 6). Before a reader runs git or opens a file on a record's say-so it checks, here:
 *  - base_ref is a full hex object id (never an option such as "--output=…", never a revision expression);
 *  - a file path is relative, normalized, without "..", ".", empty or NUL segments;
 *  - the worktree is a real directory directly under this repository's `.caesar/wt/`, registered by git in THIS
 *    repository (its `.git` file points into our git dir's `worktrees/`, and that admin dir points back at it): a bare
 *    repository committed at `.caesar/wt/<id>` fails, whatever config it carries;
 *  - the workspace lies inside this root.
 * Git then runs in this root's own repository (never in a directory the record names), through runGitNeutral, with
 * `cat-file blob`, which applies no textconv and no filter. In an untrusted workspace the editor runs none of it.
 */

export class RecordRefused extends Error {
  override readonly name = 'RecordRefused';
}

const OBJECT_ID = /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/;

/** A full SHA-1 or SHA-256 object id in lower-case hex, as the engine records it. */
export function checkObjectId(value: unknown, field = 'base_ref'): string {
  if (typeof value !== 'string' || !OBJECT_ID.test(value)) {
    throw new RecordRefused(`The task record's ${field} ${JSON.stringify(value)} is not a full hex object id.`);
  }
  return value;
}

/** A repository-relative path with '/' separators: not absolute, normalized, no '..', '.', empty or NUL segment. */
export function checkRecordPath(value: unknown, field = 'path'): string {
  const refuse = (why: string) => new RecordRefused(`The task record's ${field} ${JSON.stringify(value)} is refused: ${why}.`);
  if (typeof value !== 'string' || value.length === 0) throw refuse('not a non-empty string');
  if (value.length > 4096) throw refuse('too long');
  if (value.includes('\0')) throw refuse('it contains a NUL byte');
  if (value.includes('\\')) throw refuse('it contains a backslash');
  if (value.startsWith('/') || path.isAbsolute(value) || /^[A-Za-z]:/.test(value)) throw refuse('it is absolute');
  for (const segment of value.split('/')) {
    if (segment === '' || segment === '.' || segment === '..') throw refuse('it is not a normalized relative path');
  }
  return value;
}

/** This root's repository, as git itself (run neutrally, in the root) names it. */
export interface RootRepository {
  /** realpath of the work tree's top level. */
  gitRoot: string;
  /** realpath of the common git dir (`.git`), which holds `worktrees/<name>/` for each linked worktree. */
  commonDir: string;
}

export async function rootRepository(root: string): Promise<RootRepository | undefined> {
  const result = await runGitNeutral(['rev-parse', '--show-toplevel', '--git-common-dir'], { cwd: root, okCodes: [0, 128] }).catch(() => undefined);
  if (!result || result.code !== 0) return undefined;
  const [top, common] = result.stdout.toString('utf8').split('\n');
  if (!top || !common) return undefined;
  return { gitRoot: await fs.realpath(top), commonDir: await fs.realpath(path.resolve(root, common)) };
}

async function realDirectory(dir: string, what: string): Promise<void> {
  const stats = await fs.lstat(dir).catch(() => undefined);
  if (!stats) throw new RecordRefused(`${what} ${dir} does not exist.`);
  if (!stats.isDirectory()) throw new RecordRefused(`${what} ${dir} is not a real directory${stats.isSymbolicLink() ? ' (a symbolic link)' : ''}.`);
}

/** `gitdir: <path>` of a `.git` file, resolved against the directory holding it. */
async function gitdirOf(dotGit: string): Promise<string> {
  const text = (await readRegularFileBounded(dotGit, 4096)).toString('utf8');
  const match = /^gitdir: (.+?)\r?\n?$/.exec(text);
  if (!match) throw new RecordRefused(`${dotGit} is not a git worktree link.`);
  return path.resolve(path.dirname(dotGit), match[1]!);
}

/**
 * The record's worktree, when it is one of this repository's caesar worktrees: directly under `<gitRoot>/.caesar/wt/`
 * through real directories, and registered by git in this repository, both ways. Returns its real path.
 */
export async function checkWorktree(repo: RootRepository, worktree: unknown): Promise<string> {
  if (typeof worktree !== 'string' || !path.isAbsolute(worktree) || path.normalize(worktree) !== worktree || worktree.endsWith(path.sep)) {
    throw new RecordRefused(`The task record's worktree ${JSON.stringify(worktree)} is not a normalized absolute path.`);
  }
  const container = worktreesDir(repo.gitRoot);
  const name = path.basename(worktree);
  if (!isSafeId(name)) throw new RecordRefused(`The task record's worktree ${worktree} does not end in a task id.`);
  await realDirectory(path.join(repo.gitRoot, CAESAR_DIR), 'The folder');
  await realDirectory(container, 'The worktrees folder');
  // The record may name the root through a symlinked spelling: compare the container by its real path.
  const parent = await fs.realpath(path.dirname(worktree)).catch(() => undefined);
  if (parent !== container) {
    throw new RecordRefused(`The task record's worktree ${worktree} is not under this repository's ${CAESAR_DIR}/wt/ (${container}).`);
  }
  const target = path.join(container, name);
  await realDirectory(target, "The task's worktree");
  const dotGit = path.join(target, '.git');
  let admin: string;
  try {
    admin = await fs.realpath(await gitdirOf(dotGit));
  } catch (err) {
    if (err instanceof RecordRefused) throw err;
    throw new RecordRefused(`${target} is not a worktree of this repository: ${(err as Error).message}`);
  }
  if (path.dirname(admin) !== path.join(repo.commonDir, 'worktrees')) {
    throw new RecordRefused(`${target} is not a worktree of this repository: its .git points outside ${path.join(repo.commonDir, 'worktrees')}.`);
  }
  const back = (await readRegularFileBounded(path.join(admin, 'gitdir'), 4096).catch(() => undefined))?.toString('utf8').trim();
  const backReal = back ? await fs.realpath(path.resolve(admin, back)).catch(() => undefined) : undefined;
  if (backReal !== dotGit) {
    throw new RecordRefused(`${target} is not a worktree of this repository: git's registration does not point back at it.`);
  }
  return target;
}

/** The record's workspace, when it is this root or a folder inside it (through its real path). */
export async function checkWorkspace(root: string, workspace: unknown): Promise<string> {
  if (typeof workspace !== 'string' || !path.isAbsolute(workspace)) {
    throw new RecordRefused(`The task record's workspace ${JSON.stringify(workspace)} is not an absolute path.`);
  }
  const realRoot = await fs.realpath(root);
  const real = await fs.realpath(workspace).catch(() => undefined);
  const relative = real === undefined ? '..' : path.relative(realRoot, real);
  if (relative.startsWith('..') || path.isAbsolute(relative)) {
    throw new RecordRefused(`The task record's workspace ${workspace} is not inside ${root}.`);
  }
  return real!;
}

/** Upper bound for a base version served to the editor. */
const MAX_BASE_BLOB = 64 * 1024 * 1024;

/**
 * The content of `file` at the record's base commit, read from this root's repository with `git cat-file blob`
 * (no textconv, no filter, neutral config, `--end-of-options`). undefined when the file is not in the base (the task
 * created it). Throws RecordRefused when a field is refused or the base commit is not in this repository.
 */
export async function readBaseVersion(root: string, record: { base_ref?: unknown }, file: unknown): Promise<Buffer | undefined> {
  const baseRef = checkObjectId(record.base_ref);
  const rel = checkRecordPath(file, 'file');
  const repo = await rootRepository(root);
  if (!repo) throw new RecordRefused(`${root} is not inside a git repository: there is no base version to show.`);
  const gitDir = ['--git-dir', repo.commonDir];
  const commit = await runGitNeutral([...gitDir, 'rev-parse', '--verify', '--quiet', '--end-of-options', `${baseRef}^{commit}`], {
    cwd: repo.gitRoot,
    okCodes: [0, 1, 128],
  });
  if (commit.code !== 0) throw new RecordRefused(`The task's base commit ${baseRef} is not in this repository.`);
  const blob = await runGitNeutral([...gitDir, 'cat-file', 'blob', '--end-of-options', `${baseRef}:${rel}`], {
    cwd: repo.gitRoot,
    okCodes: [0, 128],
    maxBytes: MAX_BASE_BLOB,
  });
  return blob.code === 0 ? blob.stdout : undefined;
}

/**
 * Where the task's version of `file` lives on disk: in its worktree (checked to be this repository's) or, for a task
 * that ran in place, in its workspace (checked to be inside this root).
 */
export async function taskVersionPath(root: string, record: { worktree?: unknown; workspace?: unknown }, file: unknown): Promise<string> {
  const rel = checkRecordPath(file, 'file');
  let base: string;
  if (record.worktree !== undefined) {
    const repo = await rootRepository(root);
    if (!repo) throw new RecordRefused(`${root} is not inside a git repository: the task's worktree cannot be checked.`);
    base = await checkWorktree(repo, record.worktree);
  } else {
    base = await checkWorkspace(root, record.workspace);
  }
  return path.join(base, ...rel.split('/'));
}

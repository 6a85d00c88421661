import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { copyFile, mkdtemp, readFile, realpath, rm, stat, utimes } from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { SAFE_GIT_ENV, SAFE_GIT_OPTIONS, configEnv, repositoryOverrides, subcommandIndex, withoutDiffPrograms, withoutSubmoduleVisits } from './git-safety';
import { gitlinkPaths, mayHoldGitlink, namedIndexFile } from './gitlinks';

/*
 * Git is driven through child_process.spawn with argv arrays, not simple-git, because this layer needs:
 *  - raw Buffers: `-z` output is NUL-separated and patches may carry non-UTF-8 bytes that a string decode would corrupt;
 *  - a per-call environment (GIT_INDEX_FILE for temporary indexes, GIT_OPTIONAL_LOCKS=0 for read-only inspection);
 *  - stdin input and exit codes as data (`check-ignore` answers with exit 1, `apply --check` with 1 on conflict).
 * simple-git decodes output to strings and wraps exit codes in exceptions, which makes all three awkward.
 * No shell is ever involved, so paths are never interpolated into a command line.
 */

/** Variables that would redirect git away from the repository we name with `cwd` (e.g. when run from a git hook). */
const REPO_REDIRECTING_ENV = [
  'GIT_DIR',
  'GIT_WORK_TREE',
  'GIT_INDEX_FILE',
  'GIT_PREFIX',
  'GIT_COMMON_DIR',
  'GIT_OBJECT_DIRECTORY',
  'GIT_ALTERNATE_OBJECT_DIRECTORIES',
  'GIT_NAMESPACE',
];

/** Output formats we parse must not depend on the user's config (quoting, prefixes, colour, external diff). */
export const NEUTRAL_CONFIG = [
  '-c', 'core.quotePath=false',
  '-c', 'color.ui=never',
  '-c', 'diff.noprefix=false',
  '-c', 'diff.mnemonicPrefix=false',
  '-c', 'diff.renames=true',
  '-c', 'diff.relative=false',
];

export interface GitRunOptions {
  cwd: string;
  /** Extra environment (e.g. GIT_INDEX_FILE). */
  env?: Record<string, string>;
  input?: Buffer | string;
  /** Exit codes that are answers rather than failures (default: only 0). */
  okCodes?: number[];
  /** Upper bound for stdout, so a runaway output cannot exhaust memory. */
  maxBytes?: number;
}

export interface GitRunResult {
  code: number;
  stdout: Buffer;
  stderr: string;
}

export class GitError extends Error {
  override readonly name = 'GitError';
  constructor(
    readonly args: readonly string[],
    readonly code: number | null,
    readonly stderr: string,
    readonly cwd: string,
  ) {
    super(`git ${withoutConfig(args).join(' ')} failed (exit ${code}) in ${cwd}: ${stderr.trim() || '(no output)'}`);
  }
}

/** The command as a user would type it: the `-c key=value` pairs we add for stable parsing are noise in a message. */
function withoutConfig(args: readonly string[]): string[] {
  const shown: string[] = [];
  for (let i = 0; i < args.length; i++) {
    if (args[i] === '-c') i++;
    else shown.push(args[i] as string);
  }
  return shown;
}

const DEFAULT_MAX_BYTES = 256 * 1024 * 1024;

export function gitEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of REPO_REDIRECTING_ENV) delete env[name];
  env.GIT_TERMINAL_PROMPT = '0';
  return { ...env, ...SAFE_GIT_ENV, ...extra };
}

/**
 * Runs git with argv (never a shell), with git-safety's options: no hook, fsmonitor, pager, external diff or
 * filter driver the repository planted runs. Rejects with GitError on an exit code not listed in okCodes. This is
 * the one place Caesar starts git (test/unit/git-bypass.test.ts fails on any other).
 */
export async function runGit(args: string[], options: GitRunOptions): Promise<GitRunResult> {
  const env = gitEnv(options.env);
  const overrides = await repositoryOverrides(args, options.cwd, env);
  // A caller's own GIT_NO_LAZY_FETCH (runGitNeutral's) stands.
  if (!overrides.lazyFetch && options.env?.GIT_NO_LAZY_FETCH === undefined) env.GIT_NO_LAZY_FETCH = '1';
  const argv = withoutSubmoduleVisits(withoutDiffPrograms(await withoutGitlinkVisits(args, options, env)));
  return spawnGit([...SAFE_GIT_OPTIONS, ...argv], args, configEnv(overrides.pairs, env), options);
}

/** An `add` with the index's gitlinks excluded from its pathspec (gitlinks.ts): git never looks inside one. */
async function withoutGitlinkVisits(args: string[], options: GitRunOptions, env: NodeJS.ProcessEnv): Promise<string[]> {
  const at = subcommandIndex(args);
  if (args[at] !== 'add') return args;
  const index = namedIndexFile(options.cwd, env);
  if (index && !(await mayHoldGitlink(index))) return args;
  const listing = await runGit([...args.slice(0, at), 'ls-files', '--stage', '-z'], { cwd: options.cwd, ...(options.env ? { env: options.env } : {}) });
  const excluded = gitlinkPaths(listing.stdout).map(excludePathspec);
  if (!excluded.length) return args;
  return [...args, ...(args.includes('--') ? [] : ['--']), ...excluded];
}

function spawnGit(argv: string[], args: string[], env: NodeJS.ProcessEnv, options: GitRunOptions): Promise<GitRunResult> {
  const okCodes = options.okCodes ?? [0];
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
  return new Promise((resolve, reject) => {
    const child = spawn('git', argv, { cwd: options.cwd, env, stdio: ['pipe', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let outBytes = 0;
    let overflow = false;
    child.stdout.on('data', (chunk: Buffer) => {
      outBytes += chunk.length;
      if (outBytes > maxBytes) {
        overflow = true;
        child.kill('SIGKILL');
        return;
      }
      out.push(chunk);
    });
    child.stderr.on('data', (chunk: Buffer) => err.push(chunk));
    child.on('error', (error) => {
      // spawn reports a missing cwd as ENOENT too, which would read as "git is not installed".
      const why = existsSync(options.cwd) ? `cannot run git: ${error.message}` : 'the directory does not exist';
      reject(new GitError(args, null, why, options.cwd));
    });
    child.on('close', (code) => {
      const stderr = Buffer.concat(err).toString('utf8');
      if (overflow) {
        reject(new GitError(args, code, `output exceeded ${maxBytes} bytes`, options.cwd));
      } else if (code !== null && okCodes.includes(code)) {
        resolve({ code, stdout: Buffer.concat(out), stderr });
      } else {
        reject(new GitError(args, code, stderr, options.cwd));
      }
    });
    // A git that exits before reading stdin makes the write fail with EPIPE; the exit code tells the real story.
    child.stdin.on('error', () => undefined);
    child.stdin.end(options.input ?? '');
  });
}

/** stdout of a successful git command as trimmed text. */
export async function gitText(args: string[], cwd: string, env?: Record<string, string>): Promise<string> {
  const result = await runGit(args, { cwd, ...(env ? { env } : {}) });
  return result.stdout.toString('utf8').trim();
}

/** Absolute toplevel of the repository containing `dir`, or undefined when dir is not inside a work tree. */
export async function gitToplevel(dir: string): Promise<string | undefined> {
  try {
    const top = await gitText(['rev-parse', '--show-toplevel'], dir);
    return top || undefined;
  } catch {
    return undefined;
  }
}

export type RepoState =
  | { kind: 'usable'; gitRoot: string; head: string; /** Absolute path of the work tree's index. */ indexFile: string }
  | { kind: 'not-a-repo' | 'no-commits'; message: string; remedy: string; gitRoot?: string };

/**
 * "Usable" = inside a git work tree that has at least one commit (worktrees branch from HEAD). One git call: the
 * toplevel, the index's path and HEAD come from the same `rev-parse` (exit 1 = a work tree without commits, 128 = no
 * work tree), so a task's start learns what its snapshots need without a process of their own (issue 14).
 */
export async function repoState(dir: string): Promise<RepoState> {
  let answer: GitRunResult | undefined;
  try {
    answer = await runGit(['rev-parse', '--show-toplevel', '--git-path', 'index', '--verify', '--quiet', 'HEAD^{commit}'], {
      cwd: dir,
      okCodes: [0, 1, 128],
    });
  } catch {
    answer = undefined; // the directory is missing or git cannot run: not a repository we can use
  }
  // The options answer in order, whether or not HEAD resolves: toplevel, index (relative to dir), then the sha.
  const [gitRoot = '', index = '', sha = ''] = answer && answer.code !== 128 ? answer.stdout.toString('utf8').split('\n') : [];
  if (!gitRoot) {
    return {
      kind: 'not-a-repo',
      message: `${dir} is not inside a git repository.`,
      remedy: 'Run `git init` and make a first commit (`git commit --allow-empty -m init`).',
    };
  }
  if (answer?.code !== 0 || !sha) {
    return {
      kind: 'no-commits',
      gitRoot,
      message: `The git repository at ${gitRoot} has no commits yet, so there is nothing to branch a worktree from.`,
      remedy: 'Make a first commit: `git commit --allow-empty -m init`.',
    };
  }
  return { kind: 'usable', gitRoot, head: sha, indexFile: path.resolve(dir, index) };
}

/** The toplevel of the work tree containing `dir` and the absolute path of its index file, in one git call. */
export async function workTreePaths(dir: string): Promise<{ gitRoot: string; indexFile: string } | undefined> {
  let lines: string[];
  try {
    lines = (await gitText(['rev-parse', '--show-toplevel', '--git-path', 'index'], dir)).split('\n');
  } catch {
    return undefined;
  }
  const [gitRoot = '', index = ''] = lines;
  if (!gitRoot || !index) return undefined;
  return { gitRoot, indexFile: path.resolve(dir, index) };
}

/** A linked worktree and its own git dir, both checked: every git command on it names them explicitly. */
export interface WorktreeRepo {
  /** realpath of the worktree. */
  workTree: string;
  /** Absolute git dir of the worktree (`<common dir>/worktrees/<name>`). */
  gitDir: string;
}

/** The worktree is not (any more) the linked worktree git registered: its diff cannot be computed honestly. */
export class WorktreeUnverifiable extends Error {
  override readonly name = 'WorktreeUnverifiable';
}

/**
 * The git dir of a linked worktree, verified: git must see `worktree` itself as the top level (discovery may not
 * climb past it, so a deleted `.git` file never makes git fall back to the user's checkout above), the git dir must
 * be a registration under the common dir's `worktrees/`, and that registration must point back at this worktree.
 * An agent works inside the worktree and can remove or rewrite its `.git` file: anything else is refused.
 */
export async function verifiedWorktreeRepo(worktree: string): Promise<WorktreeRepo> {
  const workTree = await realpath(worktree).catch(() => {
    throw new WorktreeUnverifiable(`the worktree ${worktree} does not exist`);
  });
  const answer = await runGit(['rev-parse', '--show-toplevel', '--absolute-git-dir', '--git-common-dir'], {
    cwd: workTree,
    env: { GIT_CEILING_DIRECTORIES: path.dirname(workTree) },
    okCodes: [0, 128],
  });
  const [top = '', gitDirText = '', common = ''] = answer.code === 0 ? answer.stdout.toString('utf8').split('\n') : [];
  if (!top || !gitDirText || !common) {
    throw new WorktreeUnverifiable(`${workTree} is no longer a git worktree (its .git file is missing or unreadable)`);
  }
  if ((await realpath(top).catch(() => top)) !== workTree) {
    throw new WorktreeUnverifiable(`git sees ${top}, not the worktree ${workTree}, as the top level`);
  }
  const gitDir = await realpath(gitDirText);
  const commonDir = await realpath(path.resolve(workTree, common));
  if (path.dirname(gitDir) !== path.join(commonDir, 'worktrees')) {
    throw new WorktreeUnverifiable(`the .git file of ${workTree} does not point at a linked worktree's registration (${gitDir})`);
  }
  await assertRegisteredAt(gitDir, workTree);
  return { workTree, gitDir };
}

/**
 * verifiedWorktreeRepo's guarantee without a git process, for a worktree whose git dir was read when it was created,
 * before any agent ran in it (every later git command names that git dir and the folder explicitly): the folder is
 * still the same directory, its `.git` file still names that git dir, and git's registration still points back at
 * the folder. The same refusals as verifiedWorktreeRepo: an agent that removed or redirected its `.git` file, or
 * moved its worktree, gets no diff.
 */
export async function recheckedWorktreeRepo(worktree: string, known: WorktreeRepo): Promise<WorktreeRepo> {
  // Read together (this is on the path to a task's result); judged in order below.
  const [workTree, dotGit, registered] = await Promise.all([
    realpath(worktree).catch(() => undefined),
    readFile(path.join(worktree, '.git'), 'utf8').catch(() => ''),
    pathNamedIn(path.join(known.gitDir, 'gitdir'), known.gitDir),
  ]);
  if (!workTree) throw new WorktreeUnverifiable(`the worktree ${worktree} does not exist`);
  if (workTree !== known.workTree) {
    throw new WorktreeUnverifiable(`git sees ${workTree}, not the worktree ${known.workTree}, as the top level`);
  }
  const named = gitdirOfDotGitFile(dotGit);
  if (!named) {
    throw new WorktreeUnverifiable(`${workTree} is no longer a git worktree (its .git file is missing or unreadable)`);
  }
  if ((await realpath(path.resolve(workTree, named)).catch(() => undefined)) !== known.gitDir) {
    throw new WorktreeUnverifiable(`the .git file of ${workTree} does not point at its linked worktree's registration (${known.gitDir})`);
  }
  if (registered !== path.join(workTree, '.git')) {
    throw new WorktreeUnverifiable(`git's registration ${known.gitDir} does not point back at ${workTree}`);
  }
  return known;
}

/** realpath of the path a file holds (relative to `base`), or undefined when the file or that path is missing. */
async function pathNamedIn(file: string, base: string): Promise<string | undefined> {
  const text = (await readFile(file, 'utf8').catch(() => '')).trim();
  return text ? realpath(path.resolve(base, text)).catch(() => undefined) : undefined;
}

/** The path a `.git` file names (`gitdir: <path>`), or undefined. */
export function gitdirOfDotGitFile(text: string): string | undefined {
  return /^gitdir: (.+)$/m.exec(text)?.[1]?.trim() || undefined;
}

/** The registration's `gitdir` file must name `<workTree>/.git`. */
async function assertRegisteredAt(gitDir: string, workTree: string): Promise<void> {
  if ((await pathNamedIn(path.join(gitDir, 'gitdir'), gitDir)) !== path.join(workTree, '.git')) {
    throw new WorktreeUnverifiable(`git's registration ${gitDir} does not point back at ${workTree}`);
  }
}

/** `--git-dir`/`--work-tree` for a verified worktree: no discovery, whatever the agent left in the folder. */
export function worktreeGitArgs(repo: WorktreeRepo): string[] {
  return [`--git-dir=${repo.gitDir}`, `--work-tree=${repo.workTree}`];
}

/** Splits NUL-terminated git output (`-z`) into fields, decoding each as UTF-8 (git stores paths as bytes; UTF-8 is the norm). */
export function splitNul(output: Buffer): string[] {
  const fields = output.toString('utf8').split('\0');
  if (fields.length && fields[fields.length - 1] === '') fields.pop();
  return fields;
}

/** `:(literal,top)` pathspec: the path is matched verbatim (no glob), from the repository root. */
export function literalPathspec(relPath: string): string {
  return `:(literal,top)${relPath}`;
}

export function excludePathspec(relPath: string): string {
  return `:(exclude,literal,top)${relPath}`;
}

/**
 * Runs `fn` with GIT_INDEX_FILE pointing at a private copy of the index of the work tree `cwd` (or an empty index).
 * The real index is only read (copied), never written, never locked: the user's staging area and an agent's
 * concurrent `git commit` in a worktree are both left alone. `realIndex`, when the caller knows it, saves a git call.
 */
export async function withTempIndex<T>(cwd: string, fn: (env: Record<string, string>) => Promise<T>, realIndex?: string): Promise<T> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'caesar-index-'));
  const indexFile = path.join(dir, 'index');
  try {
    await copyIndex(realIndex ?? path.resolve(cwd, await gitText(['rev-parse', '--git-path', 'index'], cwd)), indexFile);
    return await fn({ GIT_INDEX_FILE: indexFile });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * Copying keeps git's stat cache, so only files changed since the last real index write get re-hashed. The copy
 * must not look NEWER than the original: git trusts an entry's stat data only when the file is older than the
 * index file ("racy git"), so a fresh mtime would hide a same-size edit made in the same second. The copy gets the
 * original's mtime minus one second, which only makes git re-check a few more recent files.
 */
async function copyIndex(realIndex: string, copy: string): Promise<void> {
  let original;
  try {
    original = await stat(realIndex);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return; // no index yet: start empty
    throw error;
  }
  await copyFile(realIndex, copy);
  const seconds = original.mtimeMs / 1000 - 1;
  await utimes(copy, seconds, seconds);
}

/**
 * Settings that stop git from running anything a repository, or a task record pointing at one, chose: the
 * fsmonitor hook, hooks, pagers, the user's global attributes file, lazy fetches from a promisor remote, and the
 * discovery of a bare repository committed inside a work tree (whose own config could name any command). Command-line `-c` wins over
 * every config file, including a planted repository's own `config`.
 */
export const UNTRUSTED_REPO_CONFIG = [
  '-c', 'core.fsmonitor=',
  '-c', 'core.hooksPath=/dev/null',
  '-c', 'core.attributesFile=/dev/null',
  '-c', 'core.pager=cat',
  '-c', 'protocol.allow=never',
  '-c', 'safe.bareRepository=explicit',
];

/**
 * runGit for reading a repository nothing vouches for (a task record from a cloned repository): no system config,
 * no pager, no prompts, and UNTRUSTED_REPO_CONFIG. Commands that could run a diff driver must still say so
 * themselves (`--no-ext-diff --no-textconv`: an empty `diff.external` would make git try to run ""; prefer
 * `cat-file blob`, which applies neither), and arguments built from a record must follow `--end-of-options`.
 */
export function runGitNeutral(args: string[], options: GitRunOptions): Promise<GitRunResult> {
  return runGit(['--no-pager', ...UNTRUSTED_REPO_CONFIG, ...NEUTRAL_CONFIG, ...args], {
    ...options,
    env: { GIT_CONFIG_NOSYSTEM: '1', GIT_ATTR_NOSYSTEM: '1', GIT_NO_LAZY_FETCH: '1', GIT_PAGER: 'cat', ...options.env },
  });
}

import { createHash } from 'node:crypto';
import { closeSync, constants, fstatSync, openSync, readSync, realpathSync } from 'node:fs';
import * as path from 'node:path';

/*
 * Which config files one git call reads, and a fingerprint of each, so that git-safety's look-up (one `git config`
 * process) can be answered again without a process while none of them changed (issue 27).
 *
 * The answer decides which filter and merge-driver programs git may run, so reusing it is safe only if the config git
 * will read is byte for byte the config the look-up read. What decides that:
 *  - the files: system, global (XDG and ~/.gitconfig, or GIT_CONFIG_GLOBAL), the repository's `config` (in the common
 *    dir), `config.worktree`, and every file an include names (include.path, includeIf.*.path, whatever the
 *    condition: a condition that did not hold may hold later). Files that do not exist count too: "absent" is part of
 *    the fingerprint, so creating one (a planted include target, a new config.worktree) is a change;
 *  - what leads git to them: the `.git` file or folder of the work tree, the git dir's `commondir` and `HEAD`
 *    (includeIf "onbranch:"; and discovery skips a git dir whose HEAD is not valid), and, when git discovers the
 *    repository, the git dir and common dir folders themselves (their entries: discovery also needs `objects/`,
 *    `refs/`; a git dir that stops being one sends git looking elsewhere);
 *  - the call itself: its cwd, global options and environment (the cache key, lookupKey).
 * Each file's fingerprint is its identity (dev, ino, size, mtime, ctime, in ns) AND a digest of its content. The
 * identity alone does not suffice: measured on tmpfs, a write through a shared mapping (mmap) that was already
 * written once changes the bytes and leaves mtime and ctime as they were (the kernel updates them on the first write
 * fault only, and tmpfs never writes back), and a write within one timestamp tick does too on any file system. The
 * digest is what holds: equal content, equal config. Config files are small; reading them is a few system calls,
 * against a process.
 *
 * What is not covered, and why it is no weaker than a look-up before every call: a process that rewrites a config
 * file between the moment git-safety checks (or looks up) and the moment the git call itself reads it. That window
 * existed before the cache (between the look-up and its call) and is the same size now; git offers no way to pin the
 * config it reads. A system config at a compiled-in path other than /etc/gitconfig that does not exist yet is not
 * watched: git reports its path only once it exists, and only its owner (root, normally) can create it; its entries
 * are the user's own scope anyway.
 */

/** Bigger than any config a person writes; a larger file is never cached (looked up every time). */
const MAX_CONFIG_BYTES = 1024 * 1024;

/** `-c` settings that only shape output: they neither name a program nor include a file, so they do not key the cache. */
const OUTPUT_ONLY = new Set(['core.quotepath', 'color.ui', 'diff.noprefix', 'diff.mnemonicprefix', 'diff.renames', 'diff.relative']);
/** Variables git reads that do not change which config it reads (the index, locking, lazy fetching). */
const KEY_NEUTRAL_ENV = new Set(['GIT_INDEX_FILE', 'GIT_OPTIONAL_LOCKS', 'GIT_NO_LAZY_FETCH']);

/** One entry of `git config --show-scope --show-origin -z --list`. */
export interface OriginEntry {
  scope: string;
  /** `file:<path>`, `command line:`, `blob:…`, `standard input:`… as git prints it. */
  origin: string;
  key: string;
  value: string;
}

/** Parses `scope\0origin\0key\nvalue\0` per entry. */
export function parseOriginEntries(output: string): OriginEntry[] {
  const fields = output.split('\0');
  const entries: OriginEntry[] = [];
  for (let i = 0; i + 2 < fields.length; i += 3) entries.push({ scope: fields[i] as string, origin: fields[i + 1] as string, ...keyAndValue(fields[i + 2] as string) });
  return entries;
}

/** `key\nvalue` as `git config -z` prints an entry (a key alone: a value-less boolean). */
export function keyAndValue(pair: string): { key: string; value: string } {
  const newline = pair.indexOf('\n');
  return { key: newline < 0 ? pair : pair.slice(0, newline), value: newline < 0 ? '' : pair.slice(newline + 1) };
}

/**
 * The cache key of a call's look-up: its cwd, its global options (but output-only `-c`) and its environment (but
 * the index and locking variables), or undefined when the call is not one whose config files we can name
 * (`-C`, a relative or separate `--git-dir`).
 */
export function lookupKey(globalOptions: readonly string[], cwd: string, env: NodeJS.ProcessEnv): string | undefined {
  const kept: string[] = [];
  for (let i = 0; i < globalOptions.length; i++) {
    const option = globalOptions[i] as string;
    if (option === '-C' || option === '--git-dir' || (option.startsWith('--git-dir=') && !path.isAbsolute(option.slice(10)))) return undefined;
    if (option === '-c' && OUTPUT_ONLY.has((globalOptions[i + 1] ?? '').split('=')[0]!.toLowerCase())) {
      i++;
      continue;
    }
    kept.push(option);
  }
  const variables = Object.entries(env).filter(([name]) => !KEY_NEUTRAL_ENV.has(name)).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return JSON.stringify([cwd, kept, variables]);
}

/**
 * The files the call reads config from whatever the config says (above), or undefined when the repository is not
 * found the way git would (no `.git` in cwd: git would search upwards) and the call is better looked up every time.
 */
export function standardConfigFiles(globalOptions: readonly string[], cwd: string, env: NodeJS.ProcessEnv): string[] | undefined {
  const explicit = globalOptions.find((o) => o.startsWith('--git-dir='))?.slice(10);
  const located = explicit ? { gitDir: explicit, pointers: [] } : discoveredGitDir(cwd);
  if (!located) return undefined;
  const { gitDir } = located;
  const commondir = readSmall(path.join(gitDir, 'commondir'))?.toString('utf8').trim();
  const commonDir = commondir ? physical(path.resolve(gitDir, commondir)) : gitDir;
  // Explicit: git uses that git dir or fails; discovered: one that stopped being a git dir sends git elsewhere.
  const folders = explicit ? [] : [gitDir, commonDir];
  return [
    ...located.pointers,
    ...folders,
    path.join(gitDir, 'HEAD'),
    path.join(gitDir, 'commondir'),
    path.join(commonDir, 'config'),
    path.join(gitDir, 'config.worktree'),
    ...userConfigFiles(env),
  ];
}

/**
 * `<cwd>/.git`: the git dir itself, or a file naming it (a linked worktree's), if git would take it for one; anything
 * else (git would look upwards, and print its files relative to a toplevel that is not cwd) is not named.
 */
function discoveredGitDir(cwd: string): { gitDir: string; pointers: string[] } | undefined {
  const dotGit = path.join(cwd, '.git');
  const content = readSmall(dotGit);
  const named = content && content !== 'folder' ? /^gitdir: (.+)$/m.exec(content.toString('utf8'))?.[1]?.trim() : undefined;
  const gitDir = content === 'folder' ? dotGit : named ? path.resolve(cwd, named) : undefined;
  return gitDir && isGitDirectory(gitDir) ? { gitDir, pointers: [dotGit] } : undefined;
}

/** setup.c's is_git_directory: `objects/` and `refs/` in the common dir, and a HEAD that is a ref or an object id. */
function isGitDirectory(gitDir: string): boolean {
  const commondir = readSmall(path.join(gitDir, 'commondir'));
  if (commondir === 'folder') return false;
  const common = commondir ? path.resolve(gitDir, commondir.toString('utf8').trim()) : gitDir;
  const head = readSmall(path.join(gitDir, 'HEAD'));
  const headValid = head !== undefined && head !== 'folder' && /^(ref: refs\/|[0-9a-f]{40}\b|[0-9a-f]{64}\b)/.test(head.toString('utf8'));
  return headValid && readSmall(path.join(common, 'objects')) === 'folder' && readSmall(path.join(common, 'refs')) === 'folder';
}

/** The global and system files git reads (present or not) under this environment. */
function userConfigFiles(env: NodeJS.ProcessEnv): string[] {
  const files: string[] = [];
  const home = env.HOME;
  if (env.GIT_CONFIG_GLOBAL) files.push(env.GIT_CONFIG_GLOBAL);
  else {
    const xdg = env.XDG_CONFIG_HOME ? path.join(env.XDG_CONFIG_HOME, 'git', 'config') : home ? path.join(home, '.config', 'git', 'config') : undefined;
    if (xdg) files.push(xdg);
    if (home) files.push(path.join(home, '.gitconfig'));
  }
  if (!/^(1|true|yes|on)$/i.test(env.GIT_CONFIG_NOSYSTEM ?? '')) files.push(env.GIT_CONFIG_SYSTEM || '/etc/gitconfig');
  return files;
}

/**
 * The files the look-up's answer shows git read (each entry's origin) and every file an include names, resolved as
 * git resolves them; undefined when one cannot be named (`~user/`, `%(prefix)/`, an origin that is not a file), or
 * when the repository's own entries (local, worktree scope) came from a file that is neither one of `expected` (the
 * repository's files standardConfigFiles named) nor an include's: git found another repository than the one we
 * watch (a `.git` in cwd that is not a git dir sends git upwards), and its file could change unseen.
 */
export function filesNamedBy(entries: readonly OriginEntry[], cwd: string, env: NodeJS.ProcessEnv, expected: readonly string[]): string[] | undefined {
  const files = new Set<string>();
  const includes = new Set<string>();
  for (const entry of entries) {
    const origin = originFile(entry.origin, cwd);
    if (origin === undefined) return undefined;
    if (origin) files.add(origin);
    if (entry.key === 'include.path' || /^includeif\..+\.path$/.test(entry.key)) {
      const target = includeTarget(entry.value, origin, env);
      if (!target) return undefined;
      includes.add(target);
    }
  }
  const repositoryOwn = entries.filter((e) => e.scope === 'local' || e.scope === 'worktree').map((e) => originFile(e.origin, cwd) as string);
  if (repositoryOwn.some((file) => !expected.includes(file) && !includes.has(file))) return undefined;
  return [...new Set([...files, ...includes])];
}

/** The file an origin names ('' for the command line), or undefined for any other origin. */
function originFile(origin: string, cwd: string): string | undefined {
  if (origin === 'command line:') return '';
  if (!origin.startsWith('file:')) return undefined;
  return path.resolve(cwd, origin.slice('file:'.length));
}

/** config.c's handle_path_include: `~/` is $HOME, a relative path is relative to the including file's folder. */
function includeTarget(value: string, origin: string, env: NodeJS.ProcessEnv): string | undefined {
  if (value.startsWith('~/')) return env.HOME ? path.join(env.HOME, value.slice(2)) : undefined;
  if (value.startsWith('~') || value.startsWith('%(') || !value) return undefined;
  if (path.isAbsolute(value)) return value;
  return origin ? path.resolve(path.dirname(origin), value) : undefined;
}

/**
 * One fingerprint per file, in order: `absent`, a folder's identity, or a regular file's identity and content
 * digest. Undefined when one of them cannot be vouched for (a FIFO, a device, unreadable, too large): no caching.
 */
export function fingerprints(files: readonly string[]): string[] | undefined {
  const prints: string[] = [];
  for (const file of files) {
    const print = fingerprint(file);
    if (print === undefined) return undefined;
    prints.push(print);
  }
  return prints;
}

function fingerprint(file: string): string | undefined {
  let fd: number;
  try {
    // Followed like git follows it (a symlinked config is read through its link); O_NONBLOCK: a FIFO never blocks.
    fd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    return code === 'ENOENT' || code === 'ENOTDIR' ? 'absent' : undefined;
  }
  try {
    const s = fstatSync(fd, { bigint: true });
    const identity = `${s.dev}:${s.ino}:${s.mode}:${s.size}:${s.mtimeNs}:${s.ctimeNs}`;
    if (s.isDirectory()) return `folder:${identity}`;
    if (!s.isFile() || s.size > BigInt(MAX_CONFIG_BYTES)) return undefined;
    const content = readAll(fd, Number(s.size));
    return content ? `file:${identity}:${createHash('sha256').update(content).digest('hex')}` : undefined;
  } finally {
    closeSync(fd);
  }
}

/** The whole file from an open descriptor of `size` bytes (fstat's); undefined when it grew while read. */
function readAll(fd: number, size: number): Buffer | undefined {
  const buffer = Buffer.alloc(size + 1);
  let length = 0;
  for (;;) {
    const read = readSync(fd, buffer, length, buffer.length - length, null);
    if (read === 0) return buffer.subarray(0, length);
    length += read;
    if (length > size) return undefined;
  }
}

/** A small regular file's content, 'folder' for a folder, undefined for anything else or absent. */
function readSmall(file: string): Buffer | 'folder' | undefined {
  let fd: number;
  try {
    fd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch {
    return undefined;
  }
  try {
    const s = fstatSync(fd);
    if (s.isDirectory()) return 'folder';
    return s.isFile() && s.size <= MAX_CONFIG_BYTES ? readAll(fd, s.size) : undefined;
  } finally {
    closeSync(fd);
  }
}

/** The path as the kernel resolves it (a `..` after a symlink), or as written when it does not exist. */
function physical(file: string): string {
  try {
    return realpathSync(file);
  } catch {
    return file;
  }
}

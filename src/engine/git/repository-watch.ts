import { createHash } from 'node:crypto';
import { existsSync, promises as fs } from 'node:fs';
import * as path from 'node:path';
import { readRegularFileBounded } from '../../base/safe-read';
import { readJsonFile } from '../store/atomic';
import { gitText, gitdirOfDotGitFile, runGit } from './git';
import { defaultBranch, worktreePath } from './worktree';
import { isSafeId, type Finding } from '../../protocol';

/*
 * The repository is watched, not trusted (issue 22): an agent running without a sandbox (macOS, `mode = "off"`) can
 * write the shared git dir its worktree points at. What it could plant there to run later (hooks, config, attributes)
 * or take away (the user's branches and tags) is recorded at the task's start and compared at its end; every change
 * is a critical finding, and apply refuses until the user accepts them. Only the supervisor writes the snapshot.
 *
 * Reads are bounded and never follow a link: a symlink is recorded as its target, a FIFO or device by its kind, a
 * file over the limit by its size, so a planted /dev/zero or FIFO costs nothing.
 */

/** What a task's start saw of its repository's shared git dir. */
export interface RepositorySnapshot {
  /** realpath of the common git dir. */
  common_dir: string;
  /** Git-dir-relative path → digest (`sha256:…`, `symlink:…`, `size:…`, or the kind of a non-regular file). */
  files: Record<string, string>;
  /** Ref name → object id, for every ref but Caesar's task branches. */
  refs: Record<string, string>;
  /** The shared `config`'s entries (`section.key=value`), to say what changed in it; absent when it is not readable. */
  config_entries?: string[];
}

/** The ref that keeps a task's base_ref reachable, whatever happens to its branch or the user's: no prune takes it. */
export function baseRefPin(id: string): string {
  return `refs/caesar/base/${id}`;
}

export async function pinBaseRef(gitRoot: string, id: string, baseRef: string): Promise<void> {
  await runGit(['update-ref', baseRefPin(id), baseRef], { cwd: gitRoot });
}

/** Drops the pin (the task's worktree is gone: nothing will diff against its base any more). Absent is fine. */
export async function unpinBaseRef(gitRoot: string, id: string): Promise<void> {
  await runGit(['update-ref', '-d', baseRefPin(id)], { cwd: gitRoot, okCodes: [0, 1] });
}

/** Single files of the common git dir that decide what git runs or sees; `hooks/` and `info/` are walked whole. */
const WATCHED_FILES = ['config', 'config.worktree', 'objects/info/alternates'];
const WATCHED_FOLDERS = ['hooks', 'info'];
/** Bounds on the walk: a planted tree of a million files must not stall a task's start. */
const MAX_ENTRIES = 2_000;
const MAX_DEPTH = 4;
const MAX_FILE_BYTES = 4 * 1024 * 1024;

/** `common`: the common dir when the caller has found it already (commonDirWithoutGit); otherwise git is asked. */
export async function takeRepositorySnapshot(gitRoot: string, taskId: string, common?: string): Promise<RepositorySnapshot> {
  common ??= await fs.realpath(path.resolve(gitRoot, await gitText(['rev-parse', '--git-common-dir'], gitRoot)));
  const [files, refs, config] = await Promise.all([watchedFiles(common), watchedRefs(gitRoot, taskId), configEntries(path.join(common, 'config'))]);
  return { common_dir: common, files, refs, ...(config ? { config_entries: config } : {}) };
}

async function watchedFiles(common: string): Promise<Record<string, string>> {
  const files: Record<string, string> = {};
  const budget = { left: MAX_ENTRIES };
  for (const name of WATCHED_FILES) {
    const digest = await entryDigest(path.join(common, name));
    if (digest) files[name] = digest;
  }
  for (const folder of WATCHED_FOLDERS) await walk(common, folder, 0, files, budget);
  return files;
}

async function walk(common: string, relative: string, depth: number, files: Record<string, string>, budget: { left: number }): Promise<void> {
  const stats = await fs.lstat(path.join(common, relative)).catch(() => undefined);
  if (!stats) return;
  if (!stats.isDirectory()) {
    files[relative] = await entryDigest(path.join(common, relative)) ?? 'gone';
    return;
  }
  if (depth >= MAX_DEPTH) {
    files[relative] = 'folder (too deep to read)';
    return;
  }
  const names = (await fs.readdir(path.join(common, relative)).catch(() => [] as string[])).sort();
  for (const name of names) {
    if (budget.left-- <= 0) {
      files[`${relative}/…`] = 'more entries than read';
      return;
    }
    await walk(common, `${relative}/${name}`, depth + 1, files, budget);
  }
}

/** A digest that changes when the entry does, read without following a link or blocking; undefined when absent. */
async function entryDigest(file: string): Promise<string | undefined> {
  const stats = await fs.lstat(file).catch(() => undefined);
  if (!stats) return undefined;
  if (stats.isSymbolicLink()) return `symlink:${await fs.readlink(file).catch(() => '?')}`;
  if (stats.isDirectory()) return 'folder';
  if (!stats.isFile()) return 'not a regular file';
  if (stats.size > MAX_FILE_BYTES) return `size:${stats.size}:${stats.mtimeMs}`;
  const content = await readRegularFileBounded(file, MAX_FILE_BYTES).catch((err: unknown) => `unreadable:${(err as Error).message}`);
  const mode = (stats.mode & 0o111) !== 0 ? 'x' : '-';
  return `sha256:${createHash('sha256').update(content).digest('hex')}:${mode}`;
}

/** Bounded, never following a link: what a finding quotes; the digest above is what decides that it changed. */
async function configEntries(file: string): Promise<string[] | undefined> {
  const text = await readRegularFileBounded(file, MAX_CONFIG_BYTES).then((b) => b.toString('utf8')).catch(() => undefined);
  return text === undefined ? undefined : parseConfigEntries(text);
}

const MAX_CONFIG_BYTES = 256 * 1024;

/**
 * git-config's syntax, enough to name an entry (`core.editor=vi`, `filter.x.clean=…`): sections `[a]`, `[a "b"]`,
 * `[a.b]`, a key on the header's line, comments. Quoting and continuation lines are kept as written: the entry is
 * shown to a person, never used.
 */
export function parseConfigEntries(text: string): string[] {
  const entries: string[] = [];
  let section = '';
  for (const raw of text.split('\n')) {
    let line = raw.trim();
    const header = /^\[([^\]"\s]+)(?:\s+"((?:[^"\\]|\\.)*)")?\]/.exec(line);
    if (header) {
      section = header[2] !== undefined ? `${header[1]!.toLowerCase()}.${header[2]}` : header[1]!.toLowerCase();
      line = line.slice(header[0].length).trim();
    }
    if (!line || line.startsWith('#') || line.startsWith(';')) continue;
    const equals = line.indexOf('=');
    const key = (equals < 0 ? line : line.slice(0, equals)).trim().toLowerCase();
    entries.push(equals < 0 ? `${section}.${key}` : `${section}.${key}=${line.slice(equals + 1).trim()}`);
  }
  return entries;
}

/**
 * Every ref with its object id, but the task branches `refs/heads/caesar/*`: this task's agent commits on its own,
 * and other tasks create, move and delete theirs while this one runs. Their pins stay: a pin never moves.
 */
async function watchedRefs(gitRoot: string, taskId: string): Promise<Record<string, string>> {
  const out = await runGit(['for-each-ref', '--format=%(objectname) %(refname)'], { cwd: gitRoot, maxBytes: 64 * 1024 * 1024 });
  const refs: Record<string, string> = {};
  const ownBranch = `refs/heads/${defaultBranch(taskId)}`;
  for (const line of out.stdout.toString('utf8').split('\n')) {
    const space = line.indexOf(' ');
    if (space < 0) continue;
    const name = line.slice(space + 1);
    if (name === ownBranch || name.startsWith('refs/heads/caesar/')) continue;
    refs[name] = line.slice(0, space);
  }
  return refs;
}

/**
 * The changes between two snapshots, one line each, named: "hooks/pre-commit added", "refs/heads/main moved from
 * abc1234 to def5678". Pins of other tasks come and go with their tasks: only a pin that moved is a change, and
 * this task's own pin must stay as it was.
 */
export function repositoryChanges(before: RepositorySnapshot, after: RepositorySnapshot, taskId: string): string[] {
  const changes: string[] = [];
  for (const name of union(before.files, after.files)) {
    const was = before.files[name];
    const now = after.files[name];
    if (was === now) continue;
    const what = was === undefined ? 'added' : now === undefined ? 'deleted' : 'changed';
    changes.push(`${shown(name)} ${what}${name === 'config' && what === 'changed' ? configDelta(before.config_entries, after.config_entries) : ''}`);
  }
  const ownPin = baseRefPin(taskId);
  for (const name of union(before.refs, after.refs)) {
    const was = before.refs[name];
    const now = after.refs[name];
    if (was === now) continue;
    const otherPin = name.startsWith('refs/caesar/') && name !== ownPin;
    if (otherPin && (was === undefined || now === undefined)) continue;
    if (was === undefined) changes.push(`${name} created at ${short(now)}`);
    else if (now === undefined) changes.push(`${name} deleted (was ${short(was)})`);
    else changes.push(`${name} moved from ${short(was)} to ${short(now)}`);
  }
  return changes;
}

/** `: + core.editor=x, - core.bare=false` (at most 5, each at most 120 characters), or '' when either side is unknown. */
function configDelta(was: string[] | undefined, now: string[] | undefined): string {
  if (!was || !now) return '';
  const before = new Set(was);
  const after = new Set(now);
  const delta = [...now.filter((e) => !before.has(e)).map((e) => `+ ${e}`), ...was.filter((e) => !after.has(e)).map((e) => `- ${e}`)];
  if (!delta.length) return '';
  const listed = delta.slice(0, 5).map((e) => escaped(e.length > 120 ? `${e.slice(0, 120)}...` : e));
  return `: ${listed.join(', ')}${delta.length > 5 ? `, … ${delta.length - 5} more` : ''}`;
}

/** Printable ASCII as it is, anything else (an escape sequence, a newline) as its JSON escape. */
function escaped(text: string): string {
  return text.replace(/[^\x20-\x7e]/g, (c) => JSON.stringify(c).slice(1, -1));
}

/** A planted file's name as text that is safe to print: quoted (JSON) when it holds anything but printable ASCII. */
function shown(name: string): string {
  return /^[\x21-\x7e]+$/.test(name) ? name : JSON.stringify(name);
}

function union(a: Record<string, string>, b: Record<string, string>): string[] {
  return [...new Set([...Object.keys(a), ...Object.keys(b)])].sort();
}

function short(oid: string | undefined): string {
  return (oid ?? '').slice(0, 12);
}

/** The task's end: the git dir compared with its record, each change a critical finding (listed in one, at most 50). */
export async function repositoryChangeFindings(gitRoot: string, taskId: string, before: RepositorySnapshot): Promise<{ changes: string[]; findings: Finding[] }> {
  // The recorded common dir, when the checkout's `.git` still leads to it the plain way: one git process less at the
  // task's end. Anything else (a link, a redirected `.git`) is asked of git, as at the start.
  const common = await commonDirWithoutGit(gitRoot);
  const all = repositoryChanges(before, await takeRepositorySnapshot(gitRoot, taskId, common === before.common_dir ? common : undefined), taskId);
  // result.json keeps at most MAX_LISTED: an agent that made 100,000 refs must not make it huge.
  const changes = all.length > MAX_LISTED ? [...all.slice(0, MAX_LISTED), `… and ${all.length - MAX_LISTED} more changes`] : all;
  const shown = changes.slice(0, MAX_FINDINGS);
  const findings: Finding[] = shown.map((change) => ({
    severity: 'critical',
    title: `Repository changed during the task: ${change}`,
    detail: `${change} in ${before.common_dir}. The agent (or another process: your own commit or fetch meanwhile shows here too) changed the shared git dir, which Caesar and your git would read or run. Check it; apply refuses until you accept it (caesar apply --accept-repository-changes).`,
  }));
  if (changes.length > shown.length) {
    findings.push({ severity: 'critical', title: `Repository changed during the task: ${changes.length - shown.length} more changes`, detail: 'See repository_changes in the task\'s result.json for the whole list.' });
  }
  return { changes, findings };
}

const MAX_FINDINGS = 50;

/**
 * realpath of the common git dir as git finds it from a work tree's top without any GIT_* variable: `<top>/.git` is
 * the git dir or a file naming it, and the git dir's `commondir` names the common dir (a linked worktree's). Undefined
 * for anything else (a symlinked `.git`, an unreadable file), where git's own discovery must answer.
 */
export async function commonDirWithoutGit(gitRoot: string): Promise<string | undefined> {
  const dotGit = path.join(gitRoot, '.git');
  const stats = await fs.lstat(dotGit).catch(() => undefined);
  let gitDir: string | undefined;
  if (stats?.isDirectory()) gitDir = dotGit;
  else if (stats?.isFile()) {
    const named = gitdirOfDotGitFile((await readRegularFileBounded(dotGit, 64 * 1024).catch(() => Buffer.alloc(0))).toString('utf8'));
    gitDir = named ? path.resolve(gitRoot, named) : undefined;
  }
  if (!gitDir) return undefined;
  // Absent: the git dir is the common dir. Present but a link, a FIFO, unreadable: git's answer, not ours.
  const commondir = await readRegularFileBounded(path.join(gitDir, 'commondir'), 64 * 1024).then(
    (content) => content.toString('utf8').trim(),
    (err: NodeJS.ErrnoException) => (err.code === 'ENOENT' ? '' : undefined),
  );
  if (commondir === undefined) return undefined;
  return fs.realpath(commondir ? path.resolve(gitDir, commondir) : gitDir).catch(() => undefined);
}
const MAX_LISTED = 1_000;

/**
 * The snapshot the supervisor wrote at the task's start, for gc's conclusion of a task whose supervisor died; undefined
 * when absent or not of its shape. (The task folder is writable by an unsandboxed agent: this is the fallback path,
 * the supervisor compares with the copy it kept in memory.)
 */
export async function readRepositorySnapshot(file: string): Promise<RepositorySnapshot | undefined> {
  const value = await readJsonFile(file, undefined, 64 * 1024 * 1024).catch(() => undefined);
  const doc = value as Partial<RepositorySnapshot> | undefined;
  const strings = (o: unknown) => typeof o === 'object' && o !== null && Object.values(o).every((v) => typeof v === 'string');
  return doc && typeof doc.common_dir === 'string' && strings(doc.files) && strings(doc.refs) ? (doc as RepositorySnapshot) : undefined;
}

/**
 * Drops pins whose worktree folder is gone (removed by hand, or by a Caesar older than the pins): gc's sweep. A pin is
 * made only once its worktree exists, so a pin without one guards nothing any more.
 */
export async function dropStalePins(gitRoot: string): Promise<string[]> {
  const listing = await runGit(['for-each-ref', '--format=%(refname)', 'refs/caesar/base/'], { cwd: gitRoot });
  const dropped: string[] = [];
  for (const ref of listing.stdout.toString('utf8').split('\n').filter(Boolean)) {
    const id = ref.slice('refs/caesar/base/'.length);
    if (!isSafeId(id) || existsSync(worktreePath(gitRoot, id))) continue;
    await unpinBaseRef(gitRoot, id);
    dropped.push(id);
  }
  return dropped;
}

import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { cp, lstat, mkdir, stat, symlink } from 'node:fs/promises';
import * as path from 'node:path';
import type { Finding } from '../../protocol';
import { gitToplevel, runGit } from './git';
import { normalizeRelPath, workshopPathProblem } from './rel-path';

/*
 * The "workshop" of a worktree (reference §2.5): a fresh worktree has only tracked files, so dependencies, build
 * caches and .env files the agent needs are copied or linked in from the workspace, then setup commands run.
 */

export type WorkshopKind = 'copy' | 'link';
export type SkipReason = 'absent' | 'tracked' | 'not-ignored' | 'already-present';

export interface Placement {
  path: string;
  kind: WorkshopKind;
  /** clone = copy-on-write (macOS cp -c); copy = cp -R --reflink=auto or a recursive copy; link = absolute symlink. */
  how: 'clone' | 'copy' | 'link';
}

export interface MaterializeOptions {
  /** The user's directory the task was delegated from (inside a git repository). */
  workspace: string;
  /** The worktree ROOT. A workspace in a subfolder of its repository maps to the same subfolder of the worktree. */
  worktree: string;
  copy: readonly string[];
  link: readonly string[];
  setup: readonly string[];
  signal?: AbortSignal;
}

export interface MaterializeResult {
  /** Placed paths, repository-relative: excluded from every diff with prefix semantics. */
  excluded_paths: string[];
  findings: Finding[];
  placed: Placement[];
  skipped: { path: string; kind: WorkshopKind; reason: SkipReason }[];
}

const OUTPUT_TAIL = 4000;

/** A setup command failed (or was cancelled): the task fails with the command, its exit code and its output. */
export class SetupError extends Error {
  override readonly name = 'SetupError';
  constructor(
    readonly command: string,
    readonly exit_code: number | null,
    readonly signal: string | null,
    /** The last 4000 characters of stdout+stderr. */
    readonly output: string,
    readonly remedy: string,
    readonly cancelled = false,
  ) {
    super(
      cancelled
        ? `Worktree setup cancelled while running: ${command}`
        : `Worktree setup command failed (${exit_code === null ? `signal ${signal ?? 'unknown'}` : `exit code ${exit_code}`}): ${command}\n${output.trimEnd()}\nRemedy: ${remedy}`,
    );
  }
}

export class WorkshopPathError extends Error {
  override readonly name = 'WorkshopPathError';
}

/** Throws naming the first invalid entry; checked before anything is placed, so one bad entry places nothing. */
export function validateWorkshopPaths(copy: readonly string[], link: readonly string[]): void {
  for (const [kind, list] of [['copy', copy], ['link', link]] as const) {
    for (const entry of list) {
      const problem = workshopPathProblem(entry);
      if (problem) throw new WorkshopPathError(`Invalid [worktree] ${kind} entry ${JSON.stringify(entry)}: ${problem}.`);
    }
  }
}

export async function materialize(options: MaterializeOptions): Promise<MaterializeResult> {
  validateWorkshopPaths(options.copy, options.link);
  const gitRoot = await gitToplevel(options.workspace);
  if (!gitRoot) throw new Error(`Cannot prepare the worktree: ${options.workspace} is not inside a git repository.`);
  const prefix = normalizeRelPath(path.relative(gitRoot, options.workspace).split(path.sep).join('/'));
  const destBase = path.join(options.worktree, prefix);

  const result: MaterializeResult = { excluded_paths: [], findings: [], placed: [], skipped: [] };
  const queue: [WorkshopKind, string][] = [
    ...options.copy.map((p) => ['copy', normalizeRelPath(p)] as [WorkshopKind, string]),
    ...options.link.map((p) => ['link', normalizeRelPath(p)] as [WorkshopKind, string]),
  ];
  for (const [kind, rel] of queue) {
    options.signal?.throwIfAborted();
    const source = path.join(options.workspace, rel);
    const dest = path.join(destBase, rel);
    const reason = await skipReason(options.workspace, source, dest, rel);
    if (reason) {
      result.skipped.push({ path: rel, kind, reason });
      result.findings.push(skippedFinding(rel, kind, reason));
      continue;
    }
    await mkdir(path.dirname(dest), { recursive: true });
    const how = kind === 'copy' ? await copyTree(source, dest) : await linkPath(source, dest);
    result.placed.push({ path: rel, kind, how });
    result.excluded_paths.push(prefix ? `${prefix}/${rel}` : rel);
  }
  const linked = result.placed.filter((p) => p.kind === 'link').map((p) => p.path);
  if (linked.length) {
    result.findings.push({
      severity: 'info',
      title: 'Paths shared with the workspace',
      detail: `${linked.join(', ')} ${linked.length === 1 ? 'is' : 'are'} linked into the worktree, not copied: anything the agent changes there changes your workspace directly (not isolated).`,
    });
  }
  for (const command of options.setup) await runSetupCommand(command, destBase, options.signal);
  return result;
}

/** The first matching rule decides (reference §2.5.2): absent, tracked, not ignored, already present. */
async function skipReason(workspace: string, source: string, dest: string, rel: string): Promise<SkipReason | undefined> {
  if (!(await exists(source))) return 'absent';
  const tracked = await runGit(['ls-files', '-z', '--', `:(literal)${rel}`], { cwd: workspace });
  if (tracked.stdout.length > 0) return 'tracked';
  const ignored = await runGit(['check-ignore', '-q', '--', rel], { cwd: workspace, okCodes: [0, 1] });
  if (ignored.code !== 0) return 'not-ignored';
  if (await exists(dest)) return 'already-present';
  return undefined;
}

async function exists(p: string): Promise<boolean> {
  try {
    await lstat(p);
    return true;
  } catch {
    return false;
  }
}

function skippedFinding(rel: string, kind: WorkshopKind, reason: SkipReason): Finding {
  const remedy: Record<SkipReason, string> = {
    absent: `${rel} does not exist in the workspace, so there was nothing to ${kind}. Create it first (e.g. install dependencies) or remove it from [worktree] ${kind}.`,
    tracked: `${rel} is tracked by git, so the worktree already has it from the commit. Remove it from [worktree] ${kind}.`,
    'not-ignored': `${rel} is not ignored by git: placing it would make it part of the agent's diff. Add it to .gitignore or remove it from [worktree] ${kind}.`,
    'already-present': `${rel} already exists in the worktree (listed twice, or in both copy and link, where copy wins). Remove the duplicate from [worktree] ${kind}.`,
  };
  return { severity: 'low', title: 'Path not materialized in the worktree', file: rel, detail: remedy[reason] };
}

/** Copy-on-write where the platform offers it, a plain recursive copy otherwise or when cp fails. */
async function copyTree(source: string, dest: string): Promise<Placement['how']> {
  if (process.platform === 'darwin' && (await runProgram('cp', ['-Rc', source, dest]))) return 'clone';
  if (process.platform === 'linux' && (await runProgram('cp', ['-R', '--reflink=auto', source, dest]))) return 'copy';
  // verbatimSymlinks: symlinks inside the tree are copied as links, never followed.
  await cp(source, dest, { recursive: true, verbatimSymlinks: true, errorOnExist: false, force: true });
  return 'copy';
}

async function linkPath(source: string, dest: string): Promise<Placement['how']> {
  const isDir = (await stat(source).catch(() => undefined))?.isDirectory() ?? false;
  await symlink(path.resolve(source), dest, isDir ? 'junction' : 'file');
  return 'link';
}

function runProgram(command: string, args: string[]): Promise<boolean> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { stdio: 'ignore' });
    child.on('error', () => resolve(false));
    child.on('close', (code) => resolve(code === 0));
  });
}

/**
 * One setup command through the platform shell, in the worktree. The output is kept as a bounded tail. Run in its
 * own process group so a cancel stops `npm install` and everything it started, not only the shell.
 */
function runSetupCommand(command: string, cwd: string, signal?: AbortSignal): Promise<void> {
  const [shell, shellArgs] = process.platform === 'win32' ? ['cmd.exe', ['/d', '/s', '/c', command]] : ['/bin/sh', ['-c', command]];
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(new SetupError(command, null, null, '', 'Re-run the task.', true));
      return;
    }
    const child = spawn(shell, shellArgs, { cwd, stdio: ['ignore', 'pipe', 'pipe'], detached: process.platform !== 'win32', windowsVerbatimArguments: process.platform === 'win32' });
    let tail = '';
    const collect = (chunk: Buffer) => {
      tail = (tail + chunk.toString('utf8')).slice(-OUTPUT_TAIL * 4);
    };
    child.stdout?.on('data', collect);
    child.stderr?.on('data', collect);
    let killTimer: NodeJS.Timeout | undefined;
    const onAbort = () => {
      signalTree(child.pid, 'SIGTERM');
      killTimer = setTimeout(() => signalTree(child.pid, 'SIGKILL'), 5000);
      killTimer.unref();
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    child.on('error', (error) => {
      signal?.removeEventListener('abort', onAbort);
      reject(new SetupError(command, null, null, error.message, `Check that ${shell} exists.`));
    });
    child.on('close', (code, sig) => {
      signal?.removeEventListener('abort', onAbort);
      if (killTimer) clearTimeout(killTimer);
      const output = tail.slice(-OUTPUT_TAIL);
      if (signal?.aborted) reject(new SetupError(command, code, sig, output, 'Re-run the task.', true));
      else if (code === 0) resolve();
      else {
        reject(
          new SetupError(command, code, sig, output, `Fix the command in [worktree] setup (.caesar/config.toml), or run it by hand in ${cwd} to see why it fails.`),
        );
      }
    });
  });
}

function signalTree(pid: number | undefined, sig: NodeJS.Signals): void {
  if (pid === undefined) return;
  try {
    process.kill(process.platform === 'win32' ? pid : -pid, sig);
  } catch {
    // already gone
  }
}

export interface WorkshopSuggestion {
  /** The marker file that matched (e.g. pnpm-lock.yaml), if any. */
  marker?: string;
  copy: string[];
  setup: string[];
}

/** Reference §2.5.13: first matching marker, specific to general. */
const MARKERS: { marker: string; copy?: string; setup?: string }[] = [
  { marker: 'pnpm-lock.yaml', copy: 'node_modules', setup: 'pnpm install --frozen-lockfile --prefer-offline' },
  { marker: 'yarn.lock', copy: 'node_modules', setup: 'yarn install --immutable' },
  { marker: 'package-lock.json', copy: 'node_modules', setup: 'npm ci' },
  { marker: 'package.json', copy: 'node_modules', setup: 'npm install' },
  { marker: 'Cargo.toml', copy: 'target' },
  { marker: 'poetry.lock', copy: '.venv', setup: 'poetry install' },
  { marker: 'pyproject.toml', copy: '.venv' },
  { marker: 'requirements.txt', copy: '.venv' },
  { marker: 'go.mod' },
];

const ENV_FILES = ['.env', '.env.local'];

/**
 * What a worktree of this workspace probably needs (used by `caesar init` and the "Worktree without a workshop"
 * finding). Never proposes a link. Undefined for a bare project.
 */
export async function detectWorkshop(workspace: string): Promise<WorkshopSuggestion | undefined> {
  const suggestion: WorkshopSuggestion = { copy: [], setup: [] };
  const match = MARKERS.find((m) => existsSync(path.join(workspace, m.marker)));
  if (match) {
    suggestion.marker = match.marker;
    if (match.copy) suggestion.copy.push(match.copy);
    if (match.setup) suggestion.setup.push(match.setup);
  }
  // git is asked only about env files that exist: most workspaces have none, and a task's start waits for this.
  const envFiles = ENV_FILES.filter((file) => existsSync(path.join(workspace, file)));
  if (envFiles.length && (await gitToplevel(workspace))) {
    for (const file of envFiles) {
      const tracked = await runGit(['ls-files', '-z', '--', `:(literal)${file}`], { cwd: workspace });
      if (tracked.stdout.length > 0) continue;
      const ignored = await runGit(['check-ignore', '-q', '--', file], { cwd: workspace, okCodes: [0, 1] });
      if (ignored.code === 0) suggestion.copy.push(file);
    }
  }
  return suggestion.copy.length || suggestion.setup.length ? suggestion : undefined;
}

/** The low finding "Worktree without a workshop" for a suggestion (reference §2.5.12). */
export function workshopFinding(suggestion: WorkshopSuggestion): Finding {
  const lines = [
    suggestion.copy.length ? `copy = ${JSON.stringify(suggestion.copy)}` : undefined,
    suggestion.setup.length ? `setup = ${JSON.stringify(suggestion.setup)}` : undefined,
  ].filter(Boolean);
  return {
    severity: 'low',
    title: 'Worktree without a workshop',
    detail: `The worktree holds only tracked files${suggestion.marker ? ` (${suggestion.marker} found)` : ''}: ${suggestion.copy.join(', ') || 'dependencies'} ${suggestion.copy.length === 1 ? 'is' : 'are'} missing there. Consider adding to .caesar/config.toml: [worktree] ${lines.join(', ')}.`,
  };
}

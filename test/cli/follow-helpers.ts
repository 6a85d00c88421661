/*
 * Helpers for the follow/review/control CLI tests: real temp git repos, task directories laid out as the supervisor
 * writes them (contracts.md), and a captured CliIo for runCli in-process.
 */
import { bindingOf, sealDocument, sealEventLine } from '../../src/engine/store/record-seal';
import { randomBytes } from 'node:crypto';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { appendFileSync, mkdirSync, mkdtempSync, realpathSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { PassThrough } from 'node:stream';
import { taskPaths } from '../../src/protocol';
import type { TaskState } from '../../src/protocol';
import type { CliIo } from '../../src/cli/io';
import { runCli } from '../../src/cli/program';
import { ensureFreshDist } from '../support/dist-freshness.mjs';

export const REPO_ROOT = path.resolve(__dirname, '..', '..');
export const CAESAR_JS = path.join(REPO_ROOT, 'dist', 'caesar.js');

const cleanups: Array<() => void> = [];
export function cleanupAll(): void {
  for (const fn of cleanups.splice(0)) {
    try {
      fn();
    } catch {
      /* best effort */
    }
  }
}

export function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
}

/** A fresh repository with one commit (README.md, src/app.txt). */
export function makeRepo(): string {
  const dir = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'caesar-cli-')));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  git(dir, 'init', '-q', '-b', 'main');
  git(dir, 'config', 'user.email', 'test@example.invalid');
  git(dir, 'config', 'user.name', 'Test');
  git(dir, 'config', 'commit.gpgsign', 'false');
  writeFileSync(path.join(dir, 'README.md'), '# demo\n');
  mkdirSync(path.join(dir, 'src'));
  writeFileSync(path.join(dir, 'src', 'app.txt'), 'line 1\nline 2\nline 3\n');
  writeFileSync(path.join(dir, '.gitignore'), '.caesar/\n');
  git(dir, 'add', '-A');
  git(dir, 'commit', '-q', '-m', 'initial');
  return dir;
}

export function newId(): string {
  return `t_${randomBytes(16).toString('hex')}`;
}

export function writeState(root: string, state: TaskState): void {
  const paths = taskPaths(root, state.id);
  mkdirSync(paths.dir, { recursive: true });
  // Atomically, as the supervisor does: readers in other processes never see half a file.
  const temp = `${paths.state}.${process.pid}.tmp`;
  writeFileSync(temp, JSON.stringify(sealDocument('state', bindingOf(root, state.id), state), null, 2)); // sealed, as Caesar's writer
  renameSync(temp, paths.state);
}

export function baseState(root: string, id: string, over: Partial<TaskState> = {}): TaskState {
  return {
    id,
    status: 'running',
    agent: 'demo',
    objective: 'Add a line to src/app.txt',
    mode: 'write',
    isolation: 'worktree',
    network: false,
    timeout_ms: 600_000,
    depth: 1,
    created_at: new Date().toISOString(),
    started_at: new Date().toISOString(),
    root,
    workspace: root,
    excluded_paths: [],
    supervisor_pid: process.pid,
    ...over,
  };
}

/** Creates a task directory; the supervisor pid defaults to this test process (alive: the task reads as active). */
export function makeTask(root: string, over: Partial<TaskState> = {}): TaskState {
  const state = baseState(root, over.id ?? newId(), over);
  writeState(root, state);
  writeFileSync(taskPaths(root, state.id).events, '');
  return state;
}

/** A real worktree at .caesar/wt/<id> on branch caesar/<id>, as the supervisor creates it. */
export function addWorktree(repo: string, id: string): { worktree: string; branch: string; base_ref: string } {
  const worktree = path.join(repo, '.caesar', 'wt', id);
  mkdirSync(path.dirname(worktree), { recursive: true });
  git(repo, 'worktree', 'add', '-q', '-b', `caesar/${id}`, worktree, 'HEAD');
  return { worktree, branch: `caesar/${id}`, base_ref: git(worktree, 'rev-parse', 'HEAD') };
}

const seqs = new Map<string, number>();
export function event(taskId: string, fields: Record<string, unknown>, at = new Date()): Record<string, unknown> {
  const seq = seqs.get(taskId) ?? 0;
  seqs.set(taskId, seq + 1);
  return { protocol: 'caesar.event/v1', seq, at: at.toISOString(), task_id: taskId, ...fields };
}

export function appendEvents(root: string, taskId: string, ...events: Array<Record<string, unknown>>): void {
  // Sealed as Caesar's EventsWriter seals them (record-seal.ts): followers show only those. appendRaw writes as is.
  appendFileSync(taskPaths(root, taskId).events, events.map((e) => `${sealEventLine(bindingOf(root, taskId), JSON.stringify(e))}\n`).join(''));
}

export function appendRaw(root: string, taskId: string, text: string): void {
  appendFileSync(taskPaths(root, taskId).events, text);
}

export function writeQuestion(root: string, taskId: string, id: string, question: string, options: string[] = [], extra: Record<string, unknown> = {}): void {
  const dir = taskPaths(root, taskId).questionsDir;
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, `${id}.json`), JSON.stringify({ id, question, options, asked_at: new Date().toISOString(), ...extra }));
}

export interface Captured {
  io: CliIo;
  out: string[];
  err: string[];
  stdout(): string;
  stderr(): string;
  stdin: PassThrough & { isTTY?: boolean; setRawMode?(mode: boolean): unknown };
  abort: AbortController;
}

export function capture(cwd: string, options: { tty?: boolean; env?: NodeJS.ProcessEnv; columns?: number } = {}): Captured {
  const out: string[] = [];
  const err: string[] = [];
  const stdin = new PassThrough() as Captured['stdin'];
  const rawModes: boolean[] = [];
  if (options.tty) {
    stdin.isTTY = true;
    stdin.setRawMode = (mode: boolean) => rawModes.push(mode);
  }
  const abort = new AbortController();
  const io: CliIo = {
    out: (t) => out.push(t.endsWith('\n') ? t : `${t}\n`),
    err: (t) => err.push(t.endsWith('\n') ? t : `${t}\n`),
    stdoutIsTTY: Boolean(options.tty),
    cwd,
    env: options.env ?? {},
    stdin,
    columns: options.columns ?? 120,
    abort: abort.signal,
  };
  return { io, out, err, stdout: () => out.join(''), stderr: () => err.join(''), stdin, abort };
}

/** runCli in-process; returns the exit code and what was printed. */
export async function cli(cwd: string, argv: string[], options: Parameters<typeof capture>[1] = {}) {
  const c = capture(cwd, options);
  const code = await runCli(argv, c.io);
  return { code, stdout: c.stdout(), stderr: c.stderr() };
}

/** Runs `node dist/caesar.js …` as a separate process. */
export function spawnCaesar(cwd: string, args: string[], env: NodeJS.ProcessEnv = {}): ChildProcess & { output: () => string; errors: () => string; exited: Promise<number | null> } {
  const child = spawn(process.execPath, [CAESAR_JS, ...args], {
    cwd,
    env: { ...process.env, NO_COLOR: '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d) => (stdout += d));
  child.stderr!.on('data', (d) => (stderr += d));
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  cleanups.push(() => {
    if (child.exitCode === null) child.kill('SIGKILL');
  });
  return Object.assign(child, { output: () => stdout, errors: () => stderr, exited });
}

/** A process that stays alive until killed: stands in for a supervisor whose pid we can kill (for 'lost'). */
export function fakeSupervisor(): ChildProcess {
  const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
  cleanups.push(() => {
    if (child.exitCode === null) child.kill('SIGKILL');
  });
  return child;
}

export const ANSI = /\x1b\[/;

/** Runs `node dist/caesar.js …` to completion in a separate process. */
export async function caesarOnce(cwd: string, args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawnCaesar(cwd, args, env);
  const code = await child.exited;
  return { code, stdout: child.output(), stderr: child.errors() };
}

/**
 * Builds dist/ when it is missing or older than the sources (npm test builds first; a bare mocha run after an edit or
 * a branch switch would otherwise run the old CLI): test/support/dist-freshness.mjs.
 */
export function ensureBuilt(): void {
  ensureFreshDist(REPO_ROOT);
}

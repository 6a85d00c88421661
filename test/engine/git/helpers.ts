import { execFileSync } from 'node:child_process';
import { bindingOf, sealDocument } from '../../../src/engine/store/record-seal';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { taskPaths } from '../../../src/protocol';
import type { TaskState } from '../../../src/protocol';

const cleanups: string[] = [];

/** Removes every temp dir made by the helpers (call from a root-level afterEach/after). */
export function cleanupTemp(): void {
  for (const dir of cleanups.splice(0)) rmSync(dir, { recursive: true, force: true });
}

export function tempDir(prefix = 'caesar-git-test-'): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), prefix));
  cleanups.push(dir);
  return dir;
}

export function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, { cwd, encoding: 'utf8', env: { ...process.env, GIT_INDEX_FILE: undefined, GIT_DIR: undefined } as NodeJS.ProcessEnv });
}

/** A real repository with local identity, `.caesar/` ignored, and one commit holding `files`. */
export function makeRepo(files: Record<string, string | Buffer> = { 'README.md': 'hello\n' }, options: { ignoreCaesar?: boolean } = {}): string {
  const dir = tempDir();
  git(dir, 'init', '-q', '-b', 'main');
  git(dir, 'config', 'user.name', 'Caesar Test');
  git(dir, 'config', 'user.email', 'test@example.invalid');
  git(dir, 'config', 'commit.gpgsign', 'false');
  if (options.ignoreCaesar !== false) files = { '.gitignore': '.caesar/\n', ...files };
  writeFiles(dir, files);
  git(dir, 'add', '-A');
  git(dir, 'commit', '-q', '-m', 'init');
  return dir;
}

export function writeFiles(dir: string, files: Record<string, string | Buffer>): void {
  for (const [rel, content] of Object.entries(files)) {
    const file = path.join(dir, rel);
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, content);
  }
}

export function commitAll(dir: string, message = 'work'): void {
  git(dir, 'add', '-A');
  git(dir, 'commit', '-q', '-m', message);
}

/** A finished worktree task's state.json, written where the store and gc read it. */
export function writeState(root: string, state: Partial<TaskState> & Pick<TaskState, 'id'>): TaskState {
  const full: TaskState = {
    status: 'succeeded',
    agent: 'demo',
    objective: 'test',
    mode: 'write',
    isolation: 'worktree',
    network: false,
    timeout_ms: 60_000,
    depth: 1,
    created_at: new Date().toISOString(),
    root,
    workspace: root,
    excluded_paths: [],
    ...state,
  };
  const paths = taskPaths(root, state.id);
  mkdirSync(paths.dir, { recursive: true });
  writeFileSync(paths.state, JSON.stringify(sealDocument('state', bindingOf(root, state.id), full), null, 2)); // sealed, as Caesar's writer
  return full;
}

/** A pid that is certainly dead: a child that has already exited. */
export function deadPid(): number {
  const out = execFileSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
  return Number(out);
}

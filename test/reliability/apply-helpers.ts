import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, lstatSync, mkdirSync, mkdtempSync, realpathSync, rmSync, readdirSync, readFileSync, readlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import type { TaskState } from '../../src/protocol';
import { addWorktree, git, makeTask, writeState } from '../cli/follow-helpers';
import { buildCli } from '../engine/runtime/helpers';

/**
 * Helpers of the apply transaction tests: a checkout's exact state as one digest (every path, its kind, mode and
 * bytes, folders included, .git and .caesar excepted), and the CLI run as its own process group so a test can kill
 * the whole group as `kill -9 -<pgid>` would.
 */
export function snapshot(dir: string): string {
  const hash = createHash('sha256');
  const walk = (rel: string) => {
    for (const name of readdirSync(path.join(dir, rel)).sort()) {
      if (rel === '' && (name === '.git' || name === '.caesar')) continue;
      const relPath = rel ? `${rel}/${name}` : name;
      const stat = lstatSync(path.join(dir, relPath));
      if (stat.isDirectory()) {
        hash.update(`d ${relPath}\n`);
        walk(relPath);
      } else if (stat.isSymbolicLink()) {
        hash.update(`l ${relPath} ${readlinkSync(path.join(dir, relPath))}\n`);
      } else {
        hash.update(`f ${relPath} ${(stat.mode & 0o777).toString(8)} `);
        hash.update(readFileSync(path.join(dir, relPath)));
        hash.update('\n');
      }
    }
  };
  walk('');
  return hash.digest('hex');
}

/**
 * A finished worktree task whose change touches `count` files of `repo`: a half modified, a fifth deleted, the rest
 * created in new folders (one of them executable). The repository gets its files committed first.
 */
export function bigChangeTask(repo: string, count: number): TaskState {
  const modified = Math.floor(count / 2);
  const deleted = Math.floor(count / 5);
  const created = count - modified - deleted;
  const tracked = (i: number) => `d${String(Math.floor(i / 100)).padStart(3, '0')}/f${i}.txt`;
  for (let i = 0; i < modified + deleted; i++) {
    mkdirSync(path.join(repo, path.dirname(tracked(i))), { recursive: true });
    writeFileSync(path.join(repo, tracked(i)), `file ${i}\nline two\nline three\n`);
  }
  git(repo, 'add', '-A');
  git(repo, 'commit', '-q', '-m', 'many files');
  const task = makeTask(repo, { status: 'succeeded', report_status: 'success', ended_at: new Date().toISOString() });
  const state = { ...task, ...addWorktree(repo, task.id) };
  writeState(repo, state);
  const wt = state.worktree;
  for (let i = 0; i < modified; i++) writeFileSync(path.join(wt, tracked(i)), `file ${i}\nline two, changed by the agent\nline three\n`);
  for (let i = modified; i < modified + deleted; i++) rmSync(path.join(wt, tracked(i)));
  for (let i = 0; i < created; i++) {
    const rel = `new${String(Math.floor(i / 100)).padStart(3, '0')}/sub/n${i}.txt`;
    mkdirSync(path.join(wt, path.dirname(rel)), { recursive: true });
    writeFileSync(path.join(wt, rel), `new file ${i}\n`, { mode: i === 0 ? 0o755 : 0o644 });
  }
  return state;
}

/**
 * A repository like follow-helpers' makeRepo (README.md, src/app.txt, `.caesar/` ignored), under `parent`. The crash
 * tests put theirs in /dev/shm when there is one: a 5,000-file git apply on this shared machine's disk takes 8 s,
 * on tmpfs well under one, and what is tested (the order of writes, the recovery) does not depend on the medium.
 */
export function makeRepoIn(parent: string): string {
  const dir = realpathSync(mkdtempSync(path.join(parent, 'caesar-apply-')));
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

export function fastScratch(): string {
  return existsSync('/dev/shm') ? '/dev/shm' : tmpdir();
}

export interface Ran {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Runs the bundled CLI as a process-group leader; `killAfterMs` SIGKILLs the whole group at that moment. */
export async function caesarGroup(cwd: string, args: string[], options: { env?: NodeJS.ProcessEnv; killAfterMs?: number; killDuringGitMs?: number; timeoutMs?: number } = {}): Promise<Ran> {
  const cli = await buildCli();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [cli, ...args], { cwd, env: { ...process.env, ...options.env }, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const killGroup = () => {
      try {
        process.kill(-(child.pid as number), 'SIGKILL');
      } catch {
        /* already gone */
      }
    };
    const killer = options.killAfterMs === undefined ? undefined : setTimeout(killGroup, options.killAfterMs);
    // `killDuringGitMs`: poll for the group's writing `git apply` (not a --check) and kill that long after it started.
    const watcher =
      options.killDuringGitMs === undefined
        ? undefined
        : setInterval(() => {
            if (!writingGitApplyOf(child.pid as number)) return;
            clearInterval(watcher);
            setTimeout(killGroup, options.killDuringGitMs);
          }, 2);
    const timeout = setTimeout(() => {
      killGroup();
      reject(new Error(`caesar ${args.join(' ')} did not exit within ${options.timeoutMs ?? 60_000} ms`));
    }, options.timeoutMs ?? 60_000);
    child.on('close', (code, signal) => {
      clearTimeout(timeout);
      if (killer) clearTimeout(killer);
      if (watcher) clearInterval(watcher);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

/** True when a child of `parent` is a `git apply` that writes (neither --check nor --reverse): Linux /proc. */
function writingGitApplyOf(parent: number): boolean {
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid !== parent) continue;
      const argv = readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0');
      if (argv.includes('apply') && !argv.includes('--check') && !argv.includes('--reverse')) return true;
    } catch {
      /* gone meanwhile */
    }
  }
  return false;
}

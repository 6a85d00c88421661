import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

/** A fresh project root and home directory per test; removed by the returned cleanup. */
export interface Sandbox {
  root: string;
  home: string;
  write(relative: string, text: string): string;
  read(relative: string): string;
  cleanup(): void;
  /** `.caesar/config.toml` etc. */
  projectFile: string;
  localFile: string;
  globalFile: string;
}

export function sandbox(options: { git?: boolean; commit?: boolean } = {}): Sandbox {
  const base = fs.mkdtempSync(path.join(os.tmpdir(), 'caesar-config-'));
  const root = path.join(base, 'repo');
  const home = path.join(base, 'home');
  fs.mkdirSync(root);
  fs.mkdirSync(home);
  if (options.git) {
    git(root, 'init', '-q');
    if (options.commit) {
      fs.writeFileSync(path.join(root, 'README.md'), 'hello\n');
      git(root, 'add', '.');
      git(root, '-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-q', '-m', 'init');
    }
  }
  const write = (relative: string, text: string) => {
    const file = path.isAbsolute(relative) ? relative : path.join(root, relative);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, text);
    return file;
  };
  return {
    root,
    home,
    write,
    read: (relative) => fs.readFileSync(path.isAbsolute(relative) ? relative : path.join(root, relative), 'utf8'),
    cleanup: () => fs.rmSync(base, { recursive: true, force: true }),
    projectFile: path.join(root, '.caesar', 'config.toml'),
    localFile: path.join(root, '.caesar', 'config.local.toml'),
    globalFile: path.join(home, '.config', 'caesar', 'config.toml'),
  };
}

export function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, { cwd, encoding: 'utf8', env: { ...process.env, GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1' } });
}

/** Creates an executable shell script `name` in `dir` (a fake agent CLI that prints a version). */
export function fakeProgram(dir: string, name: string, output = `${name} 1.2.3`): string {
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, name);
  fs.writeFileSync(file, `#!/bin/sh\necho "${output}"\n`, { mode: 0o755 });
  return file;
}

export async function rejects(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (err) {
    return err as Error;
  }
  throw new Error('expected a rejection, got a result');
}

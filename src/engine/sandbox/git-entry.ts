import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { readRegularFileBounded } from '../../base/safe-read';

/**
 * The files that tell git where a linked worktree's repository is, and how to run in it, that a sandboxed agent may
 * write: the worktree's own `.git` file (its worktree is writable) and, in its git entry (`<common>/worktrees/<name>`,
 * writable so its git can keep an index and HEAD), `commondir`, `gitdir` and `config.worktree`. Outside the sandbox,
 * git trusts them: a `.git` removed or aimed at another repository, a `commondir` aimed at a copy of the repository
 * whose config names a program, a `config.worktree` with `core.fsmonitor` (read when the repository sets
 * `extensions.worktreeConfig`) would steer Caesar's git after the run, and run that program as the user the next time
 * they (or their editor's git extension) run git in the worktree. Caesar reads them before the run and writes them
 * back after it, whatever the agent left there (a directory, a link, a FIFO).
 */
export interface PinnedRegistration {
  restore(): Promise<void>;
}

/** Large enough for any real one (a path, or a short config); a bigger file is treated as absent. */
const MAX_BYTES = 1024 * 1024;

export async function pinRegistration(worktree: string, entry: string): Promise<PinnedRegistration> {
  const files = [path.join(worktree, '.git'), ...['commondir', 'gitdir', 'config.worktree'].map((name) => path.join(entry, name))];
  const before = await Promise.all(files.map(async (file) => ({ file, content: await readIfRegular(file) })));
  return {
    restore: async () => {
      for (const { file, content } of before) await putBack(file, content);
    },
  };
}

async function readIfRegular(file: string): Promise<Buffer | undefined> {
  try {
    return await readRegularFileBounded(file, MAX_BYTES);
  } catch {
    return undefined;
  }
}

/** The file as it was (or absent, as it was), through a fresh name: nothing the agent left there is followed. */
async function putBack(file: string, content: Buffer | undefined): Promise<void> {
  const current = await readIfRegular(file);
  if (content === undefined ? current === undefined && !(await present(file)) : current?.equals(content)) return;
  await fs.rm(file, { recursive: true, force: true });
  if (content !== undefined) await fs.writeFile(file, content, { flag: 'wx' });
}

async function present(file: string): Promise<boolean> {
  return fs.lstat(file).then(
    () => true,
    () => false,
  );
}

import { readFile } from 'node:fs/promises';
import * as path from 'node:path';

/*
 * `git add` starts a `git status` inside every nested repository its index holds as a gitlink (a submodule, or a
 * repository an agent planted and committed) whose commit matches, to learn whether its work tree is dirty; that
 * process reads the nested repository's own config, and a clean filter planted there ran as the user (measured on
 * git 2.39.5: `add -A` and `add --intent-to-add` both). `add` has no `--ignore-submodules`, so Caesar's own adds name
 * the index's gitlinks as exclusions: a gitlink keeps its entry as it was, and git never looks inside it (a nested
 * repository's new commit is in a diff once the agent stages it in its worktree, not before).
 */

/** A gitlink's mode (0o160000) as every index version stores it: a 32-bit big-endian word of its entry. */
const GITLINK_MODE = Buffer.from([0x00, 0x00, 0xe0, 0x00]);
/** The split-index extension: the entries live in another file, which this quick look does not read. */
const SPLIT_INDEX = Buffer.from('link');

/**
 * Whether the index file `indexFile` may hold a gitlink: false only when it surely holds none (no entry can have
 * the gitlink mode without those four bytes appearing), so the listing is skipped for nearly every repository.
 */
export async function mayHoldGitlink(indexFile: string): Promise<boolean> {
  let bytes: Buffer;
  try {
    bytes = await readFile(indexFile);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code !== 'ENOENT'; // no index: no entry; unreadable: ask git
  }
  return bytes.includes(GITLINK_MODE) || bytes.includes(SPLIT_INDEX);
}

/** The index file an `add` with this environment writes, when the environment names one (Caesar's private copies). */
export function namedIndexFile(cwd: string, env: NodeJS.ProcessEnv): string | undefined {
  return env.GIT_INDEX_FILE ? path.resolve(cwd, env.GIT_INDEX_FILE) : undefined;
}

/** The paths of the gitlinks in `ls-files --stage -z` output (`<mode> <object> <stage>\t<path>\0` per entry). */
export function gitlinkPaths(output: Buffer): string[] {
  const paths: string[] = [];
  for (const record of output.toString('utf8').split('\0')) {
    const tab = record.indexOf('\t');
    if (tab > 0 && record.startsWith('160000 ')) paths.push(record.slice(tab + 1));
  }
  return paths;
}

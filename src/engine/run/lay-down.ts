import { randomUUID } from 'node:crypto';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import type { SpawnPlan } from '../../agents/types';
import { UnsafeFileError, checkComponents, kindOf } from '../../base/safe-read';
import { replaceFile } from '../../base/safe-write';

/*
 * The files an adapter writes before the agent starts (an MCP configuration, an instruction file), and the restore of
 * what was at their names afterwards. Those names lie in the task folder or the agent's workspace, where a cloned
 * repository or an earlier agent may have planted anything: a symlink (to /dev/zero, to a file outside the tree), a
 * FIFO, a file of gigabytes, a symlinked parent folder. So nothing here reads the previous content or follows a link:
 *  - every folder between the root (task folder or workspace) and the file must be a real directory;
 *  - the previous entry, whatever its kind, is renamed aside (never opened), ours is written to a fresh temp file and
 *    renamed into place (a link there is replaced, not written through), and the restore renames the previous entry
 *    back, or removes ours when there was none;
 *  - the restore checks the folders again: the agent may have swapped one for a symlink while it ran, and then the
 *    restore is skipped (logged) rather than done through it.
 * A refusal throws: the supervisor concludes the task `failed` with the reason.
 */

type PlannedFile = NonNullable<SpawnPlan['files']>[number];

/** Writes the plan's files; the returned function puts back what was at their names (never throws, logs instead). */
export async function layDownFiles(
  files: readonly PlannedFile[],
  roots: readonly string[],
  log: (message: string) => void = () => {},
): Promise<() => Promise<void>> {
  const restores: Array<() => Promise<void>> = [];
  const restoreAll = async () => {
    for (const restore of restores.reverse()) {
      await restore().catch((err: unknown) => log(`restoring a laid-down file: ${(err as Error)?.message ?? String(err)}`));
    }
  };
  try {
    for (const file of files) restores.push(await layDown(file, rootOf(file.path, roots), log));
  } catch (err) {
    await restoreAll();
    throw err;
  }
  return restoreAll;
}

function rootOf(file: string, roots: readonly string[]): string {
  const root = roots.find((candidate) => {
    const relative = path.relative(path.resolve(candidate), path.resolve(file));
    return relative !== '' && !relative.startsWith('..') && !path.isAbsolute(relative);
  });
  if (root === undefined) throw new UnsafeFileError(file, 'EOUTSIDE', `Refusing to write ${file}: it is outside the task folder and the workspace`);
  return root;
}

async function layDown(file: PlannedFile, root: string, log: (message: string) => void): Promise<() => Promise<void>> {
  await fs.mkdir(path.dirname(file.path), { recursive: true });
  await checkComponents(file.path, root);
  const aside = file.restore ? await setAside(file.path) : undefined;
  try {
    await replaceFile(file.path, file.content);
  } catch (err) {
    if (aside) await fs.rename(aside, file.path).catch(() => undefined);
    throw err;
  }
  if (!file.restore) return async () => {};
  return async () => {
    try {
      await checkComponents(file.path, root);
    } catch (err) {
      log(`not restoring ${file.path}: ${(err as Error).message}`);
      return;
    }
    if (aside) await fs.rename(aside, file.path);
    else await fs.rm(file.path, { force: true }); // rm removes a link itself, never its target
  };
}

/** Moves whatever is at `file` (any kind but a directory) to a hidden name beside it; undefined when nothing is there. */
async function setAside(file: string): Promise<string | undefined> {
  const stats = await fs.lstat(file).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return undefined;
    throw err;
  });
  if (!stats) return undefined;
  if (stats.isDirectory()) throw new UnsafeFileError(file, 'ENOTREG', `Refusing to replace ${file}: it is ${kindOf(stats)}`);
  const aside = path.join(path.dirname(file), `.${path.basename(file)}.${randomUUID()}.caesar-aside`);
  await fs.rename(file, aside);
  return aside;
}

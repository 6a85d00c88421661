import { constants, promises as fs, type Dirent, type Stats } from 'node:fs';
import * as path from 'node:path';

/*
 * The one way to read a file another process (an agent, a cloned repository) may have planted (DESIGN.md principle 6).
 * A task directory can hold anything: a symlink to /dev/zero (an endless read), a FIFO (an open that never returns,
 * which also pins one of libuv's four pool threads for good), a device, a multi-gigabyte file. So every read:
 *  - lstat first: a symlink, a FIFO, a device or a directory is refused before it is opened;
 *  - opens with O_NOFOLLOW | O_NONBLOCK, so a symlink swapped in after the lstat fails the open and a FIFO never
 *    blocks it, then fstat's the descriptor and refuses anything that is not a regular file;
 *  - reads at most limit + 1 bytes, so "too big" is known without pulling the whole file into memory.
 * With `within`, every directory between `within` and the file must be a real directory too: a symlinked task
 * folder or questions/ folder cannot lead the read out of the tree.
 */

/** Why a file was refused. `code` lets callers test for it beside ENOENT. */
export class UnsafeFileError extends Error {
  override readonly name = 'UnsafeFileError';
  constructor(
    readonly file: string,
    readonly code: 'ESYMLINK' | 'ENOTREG' | 'ETOOBIG' | 'EOUTSIDE',
    message: string,
    /** For ETOOBIG: the size seen (the fstat size, or limit + 1 when the file grew while read). */
    readonly size?: number,
  ) {
    super(message);
  }
}

export interface SafeReadOptions {
  /** A directory the file must lie inside, reached through real directories only (no symlinked component). */
  within?: string;
  /**
   * The file was listed as a regular file by listFolder(), whose check of the folder stands for the per-file one: no
   * component check and no lstat before the open. The open still refuses a symlink swapped in since (O_NOFOLLOW) and
   * the fstat anything else that is not a regular file.
   */
  listed?: boolean;
}

// Absent on Windows (where FIFOs and symlinks of this kind do not arise the same way): 0 leaves the flag out.
const OPEN_FLAGS = constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0);

/** What a non-regular file is, for a refusal's message ("a FIFO", "a symbolic link"…). */
export function kindOf(stats: Stats): string {
  if (stats.isSymbolicLink()) return 'a symbolic link';
  if (stats.isDirectory()) return 'a directory';
  if (stats.isFIFO()) return 'a FIFO';
  if (stats.isCharacterDevice() || stats.isBlockDevice()) return 'a device';
  if (stats.isSocket()) return 'a socket';
  return 'not a regular file';
}

/**
 * Throws an UnsafeFileError unless `file` lies inside `within` and every directory between them is a real directory
 * (no symlinked component), ENOENT when one is missing. The file itself is not looked at.
 */
export async function checkComponents(file: string, within: string): Promise<void> {
  const base = path.resolve(within);
  const relative = path.relative(base, path.resolve(file));
  if (!relative || relative.startsWith('..') || path.isAbsolute(relative)) {
    throw new UnsafeFileError(file, 'EOUTSIDE', `${file} is not inside ${base}`);
  }
  const parts = relative.split(path.sep);
  let dir = base;
  for (const part of parts.slice(0, -1)) {
    dir = path.join(dir, part);
    const stats = await fs.lstat(dir); // ENOENT propagates: the file is simply not there
    if (!stats.isDirectory()) {
      throw new UnsafeFileError(file, stats.isSymbolicLink() ? 'ESYMLINK' : 'ENOTREG', `${dir} is ${kindOf(stats)}, not a directory`);
    }
  }
}

/**
 * Opens a regular file for reading without following a symlink and without blocking, or throws: ENOENT (the native
 * error, so `code === 'ENOENT'` checks keep working) or an UnsafeFileError. The caller closes the handle.
 */
export async function openRegularFile(file: string, options: SafeReadOptions = {}): Promise<fs.FileHandle> {
  return (await openRegularFileWithStats(file, options)).handle;
}

/** openRegularFile, with the opened file's own stats (taken from the descriptor): callers need not stat it again. */
export async function openRegularFileWithStats(file: string, options: SafeReadOptions = {}): Promise<{ handle: fs.FileHandle; stats: Stats }> {
  if (!options.listed) await refuseBeforeOpening(file, options);
  let handle: fs.FileHandle;
  try {
    handle = await fs.open(file, OPEN_FLAGS);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ELOOP') {
      throw new UnsafeFileError(file, 'ESYMLINK', `${path.basename(file)} became a symbolic link while it was opened`);
    }
    throw err;
  }
  try {
    // Only the kind matters: atomic writers (temp file + rename) legitimately replace a file between the lstat and
    // the open, and the descriptor we hold is then the new regular file, as safe to read as the old one.
    const after = await handle.stat();
    if (!after.isFile()) {
      throw new UnsafeFileError(file, 'ENOTREG', `${path.basename(file)} was replaced while it was opened (${kindOf(after)})`);
    }
    return { handle, stats: after };
  } catch (err) {
    await handle.close();
    throw err;
  }
}

async function refuseBeforeOpening(file: string, options: SafeReadOptions): Promise<void> {
  if (options.within !== undefined) await checkComponents(file, options.within);
  const before = await fs.lstat(file);
  if (!before.isFile()) {
    throw new UnsafeFileError(file, before.isSymbolicLink() ? 'ESYMLINK' : 'ENOTREG', `${path.basename(file)} is ${kindOf(before)}, not a regular file`);
  }
}

/**
 * The entries of `folder`, a real directory inside `within` (checked as checkComponents checks a file's folders, and
 * the folder itself must not be a symlink), by name; undefined when it does not exist. For readers of several files
 * of one folder (`caesar ps` reads five of each task's): one directory read tells which exist and which are regular
 * files, so absent ones cost nothing and present ones are read with `listed: true` (no per-file checks before the open).
 */
export async function listFolder(folder: string, within: string): Promise<Map<string, Dirent> | undefined> {
  try {
    await checkComponents(folder, within);
    const stats = await fs.lstat(folder);
    if (!stats.isDirectory()) throw new UnsafeFileError(folder, stats.isSymbolicLink() ? 'ESYMLINK' : 'ENOTREG', `${folder} is ${kindOf(stats)}, not a directory`);
    return new Map((await fs.readdir(folder, { withFileTypes: true })).map((entry) => [entry.name, entry]));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

/**
 * The whole content of a regular file of at most `limit` bytes. Reads at most limit + 1 bytes whatever the file
 * claims or becomes; a longer file is refused with ETOOBIG.
 */
export async function readRegularFileBounded(file: string, limit: number, options: SafeReadOptions = {}): Promise<Buffer> {
  const { handle, stats } = await openRegularFileWithStats(file, options);
  try {
    const { size } = stats;
    if (size > limit) throw tooBig(file, size, limit);
    const chunks: Buffer[] = [];
    let total = 0;
    // Sized from fstat, but the file may grow while we read: keep reading until EOF or one byte past the limit.
    let next = Math.min(size, limit) + 1;
    for (;;) {
      const buffer = Buffer.allocUnsafe(Math.min(Math.max(next, 1), limit + 1 - total));
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, total);
      if (bytesRead === 0) break;
      chunks.push(buffer.subarray(0, bytesRead));
      total += bytesRead;
      if (total > limit) throw tooBig(file, total, limit);
      // A short read of a regular file is its end (as of now): no second read just to be told so.
      if (bytesRead < buffer.length) break;
      next = 64 * 1024;
    }
    return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, total);
  } finally {
    await handle.close();
  }
}

function tooBig(file: string, size: number, limit: number): UnsafeFileError {
  return new UnsafeFileError(file, 'ETOOBIG', `${path.basename(file)} is ${size} bytes, over the ${limit} byte limit`, size);
}

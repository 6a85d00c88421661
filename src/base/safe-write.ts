import { closeSync, constants, fstatSync, openSync, promises as fs } from 'node:fs';
import * as path from 'node:path';
import { tempNameBeside } from './atomic';
import { UnsafeFileError, kindOf } from './safe-read';

/*
 * The write side of safe-read.ts. A task file another process can reach (an agent, a cloned repository) may have
 * been replaced by a symlink (to a file outside the tree, to /dev/zero), a FIFO (an open for writing that blocks
 * until a reader comes, forever), a socket or a device. A writer must neither follow the link nor block:
 *  - a log appended to or truncated in place (events.jsonl, raw.log) is opened with O_NOFOLLOW | O_NONBLOCK and its
 *    descriptor fstat'ed: anything but a regular file is refused with an UnsafeFileError, before a byte is written;
 *  - a whole file is written to a fresh temp file (O_EXCL: never an existing name, never a link) and renamed over
 *    the name, which replaces whatever is there (a link, a FIFO) instead of writing through it.
 */

// Absent on Windows: 0 leaves the flag out.
const NOFOLLOW = constants.O_NOFOLLOW ?? 0;
const NONBLOCK = constants.O_NONBLOCK ?? 0;

/**
 * A descriptor for writing (and reading back) `file`, created if missing (mode 0644 before the umask): `append`
 * positions every write at the end, `truncate` empties it. Throws an UnsafeFileError when the name is a symlink or not a regular file (a
 * FIFO with no reader included: its non-blocking open fails with ENXIO), other errors as they come. Synchronous, for
 * the writers that append with writeSync. The caller closes the descriptor.
 */
export function openRegularFileForWriting(file: string, how: 'append' | 'truncate'): number {
  const flags = constants.O_RDWR | constants.O_CREAT | NOFOLLOW | NONBLOCK | (how === 'append' ? constants.O_APPEND : constants.O_TRUNC);
  let fd: number;
  try {
    fd = openSync(file, flags, 0o644);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ELOOP') throw new UnsafeFileError(file, 'ESYMLINK', `${path.basename(file)} is a symbolic link, not a regular file`);
    if (code === 'ENXIO') throw new UnsafeFileError(file, 'ENOTREG', `${path.basename(file)} is a FIFO, not a regular file`);
    if (code === 'EISDIR') throw new UnsafeFileError(file, 'ENOTREG', `${path.basename(file)} is a directory, not a regular file`);
    throw err;
  }
  try {
    const stats = fstatSync(fd);
    if (!stats.isFile()) throw new UnsafeFileError(file, 'ENOTREG', `${path.basename(file)} is ${kindOf(stats)}, not a regular file`);
    return fd;
  } catch (err) {
    closeSync(fd);
    throw err;
  }
}

/**
 * Writes `data` as `file` without following what is at that name: a temp file beside it, created exclusively, then
 * renamed over it (a symlink or FIFO there is replaced, never written through; a directory there fails the rename).
 */
export async function replaceFile(file: string, data: string | Uint8Array, mode = 0o644): Promise<void> {
  const temp = tempNameBeside(file);
  try {
    await fs.writeFile(temp, data, { flag: 'wx', mode });
    await fs.rename(temp, file);
  } catch (err) {
    await fs.rm(temp, { force: true });
    throw err;
  }
}

import { constants, existsSync, promises as fs } from 'node:fs';
import * as path from 'node:path';

/*
 * Opening a file below a folder on an agent's behalf without ever leaving that folder, whatever the agent does to the
 * tree meanwhile (issue 34). Checking a path with realpath and then opening it by name is beaten by a race: between
 * the two, the agent swaps a folder for a symlink (renameat2 RENAME_EXCHANGE) and the open follows it out. O_NOFOLLOW
 * only guards the last component.
 *
 * So the path is walked one component at a time, each opened relative to the descriptor of the folder before it:
 * Node has no openat(2), but on Linux `/proc/self/fd/<dirfd>/<name>` is resolved by the kernel from the folder the
 * descriptor holds (the magic link is not a path looked up again), so a rename or swap of that folder, or of any folder
 * above it, changes nothing. Each component is opened with O_NOFOLLOW: a symlink is never followed by the kernel. A
 * symlink met on the way is read (readlink through the same descriptor) and its text resolved here, against the folders
 * already held: it is followed only while it stays below the root. `..` goes back to the folder held before, never to
 * the parent the kernel would find now.
 */

/** Where the walk met something it refuses (a symlink leading out, not a folder, not a regular file…). */
export class BeneathError extends Error {
  override readonly name = 'BeneathError';
}

export interface OpenBeneathOptions {
  /** 'read': an existing regular file. 'write': a regular file, created (with its folders) when missing. */
  access: 'read' | 'write';
  /** Symlinks inside the root are followed (resolved here); false refuses every symlink. Default true. */
  followInside?: boolean;
  /** Called with each folder or file reached (relative to the root, `/`-separated): a message refuses it. */
  refuse?(rel: string): string | undefined;
}

export interface OpenedBeneath {
  handle: fs.FileHandle;
  /** The file reached, relative to the root, `/`-separated, symlinks resolved. */
  rel: string;
  /** The write created the file. */
  created: boolean;
}

const MAX_LINKS = 40; // as the kernel's own limit: a loop of symlinks ends
const NOFOLLOW = constants.O_NOFOLLOW ?? 0;
const DIRECTORY = constants.O_DIRECTORY ?? 0;
const NONBLOCK = constants.O_NONBLOCK ?? 0;

/** The kernel resolves a name relative to a held folder (Linux). Elsewhere the walk goes by path: weaker, see below. */
let procFd: boolean | undefined;
/** Test seam: false walks by path name (the fallback of systems without /proc/self/fd). */
export function useProcFd(value: boolean | undefined): void {
  procFd = value;
}
function hasProcFd(): boolean {
  procFd ??= process.platform === 'linux' && existsSync('/proc/self/fd');
  return procFd;
}

interface Held {
  handle: fs.FileHandle;
  /** Its path by name: only for messages, and for the walk where /proc/self/fd is missing. */
  path: string;
}

/**
 * Opens `rel` below the folder `root` (which the caller trusts) without leaving it; the caller closes the handle.
 * ENOENT propagates as the native error (a read of a missing file). Throws a BeneathError for anything refused.
 */
export async function openBeneath(root: string, rel: string, options: OpenBeneathOptions): Promise<OpenedBeneath> {
  const rootReal = await fs.realpath(root);
  const rootHeld: Held = { handle: await fs.open(rootReal, constants.O_RDONLY | DIRECTORY), path: rootReal };
  const stack: Held[] = [rootHeld];
  const names: string[] = [];
  const pending = rel.split('/').filter((part) => part !== '' && part !== '.');
  let links = 0;
  try {
    for (;;) {
      const part = pending.shift();
      if (part === undefined) throw new BeneathError(`${rel} names a folder, not a file`);
      if (part === '..') {
        if (stack.length === 1) throw new BeneathError(`${rel} leads outside ${root}`);
        await stack.pop()!.handle.close();
        names.pop();
        continue;
      }
      const here = stack[stack.length - 1]!;
      const at = child(here, part);
      const isLast = pending.length === 0;
      const refusal = options.refuse?.([...names, part].join('/'));
      if (refusal) throw new BeneathError(refusal);
      const opened = isLast ? await openLast(at, options.access) : await openFolder(at, options.access === 'write');
      if ('link' in opened) {
        if (options.followInside === false) throw new BeneathError(`${[...names, part].join('/')} is a symbolic link; not followed`);
        if (++links > MAX_LINKS) throw new BeneathError(`${rel}: too many symbolic links`);
        const target = opened.link;
        if (path.isAbsolute(target)) {
          const inside = [root, rootReal].map((base) => path.relative(base, target)).find((r) => !r.startsWith('..') && !path.isAbsolute(r));
          if (inside === undefined) throw new BeneathError(`${[...names, part].join('/')} leads outside ${root} through a symbolic link`);
          while (stack.length > 1) await stack.pop()!.handle.close();
          names.length = 0;
          pending.unshift(...inside.split(path.sep).filter((p) => p !== '' && p !== '.'));
        } else {
          pending.unshift(...target.split('/').filter((p) => p !== '' && p !== '.'));
        }
        continue;
      }
      names.push(part);
      if (isLast) return { handle: opened.handle, rel: names.join('/'), created: opened.created };
      stack.push({ handle: opened.handle, path: path.join(here.path, part) });
    }
  } finally {
    for (const held of stack) await held.handle.close().catch(() => undefined);
  }
}

/** The name `part` inside the held folder, as a path the kernel resolves from the folder itself. */
function child(held: Held, part: string): string {
  return hasProcFd() ? `/proc/self/fd/${held.handle.fd}/${part}` : path.join(held.path, part);
}

type Step = { handle: fs.FileHandle; created: boolean } | { link: string };

/** A folder on the way: opened without following a link; made when missing and the walk writes. */
async function openFolder(at: string, create: boolean): Promise<Step> {
  for (let attempt = 0; ; attempt++) {
    try {
      return { handle: await fs.open(at, constants.O_RDONLY | DIRECTORY | NOFOLLOW), created: false };
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ELOOP' || code === 'ENOTDIR') return linkOr(at, `${displayed(at)} is not a folder`);
      if (code !== 'ENOENT' || !create || attempt > 2) throw err;
      // mkdir does not follow a symlink in the last place (EEXIST): the next open sees what is there.
      await fs.mkdir(at, 0o755).catch((e: NodeJS.ErrnoException) => (e.code === 'EEXIST' ? undefined : Promise.reject(e)));
    }
  }
}

/** The file itself: a regular file (fstat on the descriptor), opened without following a link or blocking on a FIFO. */
async function openLast(at: string, access: 'read' | 'write'): Promise<Step> {
  for (let attempt = 0; ; attempt++) {
    let handle: fs.FileHandle;
    let created = false;
    try {
      if (access === 'read') handle = await fs.open(at, constants.O_RDONLY | NOFOLLOW | NONBLOCK);
      else {
        try {
          handle = await fs.open(at, constants.O_WRONLY | NOFOLLOW | NONBLOCK);
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code !== 'ENOENT' || attempt > 2) throw err;
          // O_EXCL: nothing, not even a dangling symlink, is there when the file is made.
          handle = await fs.open(at, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | NOFOLLOW, 0o644);
          created = true;
        }
      }
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ELOOP') return linkOr(at, `${displayed(at)} is not a regular file`);
      if (code === 'EEXIST') continue; // made by someone else since: look again
      if (code === 'EISDIR' || code === 'ENXIO') throw new BeneathError(`${displayed(at)} is not a regular file`);
      throw err;
    }
    const stats = await handle.stat();
    if (!stats.isFile()) {
      await handle.close();
      throw new BeneathError(`${displayed(at)} is not a regular file`);
    }
    return { handle, created };
  }
}

/** What a symlink at `at` says, or a refusal with `message` when `at` is no symlink. */
async function linkOr(at: string, message: string): Promise<Step> {
  try {
    return { link: await fs.readlink(at) };
  } catch {
    throw new BeneathError(message);
  }
}

function displayed(at: string): string {
  return path.basename(at);
}

import { promises as fs, constants as fsConstants } from 'node:fs';
import * as path from 'node:path';
import { tempNameBeside } from './atomic';

/**
 * The `caesar` command an editor installs on PATH ("Caesar: Install 'caesar' Command in PATH"): a POSIX shell shim
 * that runs the extension's bundled CLI (dist/caesar.js) with the extension host's own runtime, so no `node` needs to
 * be installed. Pure file logic, no vscode: the command handler in src/extension asks the user, this writes.
 */

/** The second line of every shim we write. A `caesar` file without it is someone else's and is never touched silently. */
export const SHIM_MARKER = '# caesar-cli-shim: written by the Caesar editor extension';

export interface ShimTarget {
  /** The runtime that runs the CLI: the extension host's process.execPath. */
  runtime: string;
  /** True when that runtime is Electron (VS Code desktop): ELECTRON_RUN_AS_NODE=1 makes it behave as plain Node. */
  electron: boolean;
  /** Absolute path of dist/caesar.js. */
  script: string;
}

/** The runtime of the current process, as a shim written by it should use. */
export function currentRuntime(script: string): ShimTarget {
  return { runtime: process.execPath, electron: process.versions.electron !== undefined, script };
}

/** Quotes a string for a POSIX shell: single quotes, with each embedded ' written as '\''. */
export function shellQuote(value: string): string {
  return `'${value.replace(/'/g, `'\\''`)}'`;
}

export function shimText(target: ShimTarget): string {
  const runtime = shellQuote(target.runtime);
  const script = shellQuote(target.script);
  // An editor or extension update moves both paths; say what to do rather than failing with "not found".
  return [
    '#!/bin/sh',
    SHIM_MARKER,
    "# (\"Caesar: Install 'caesar' Command in PATH\"; \"Caesar: Uninstall 'caesar' Command from PATH\" removes it).",
    `if [ ! -f ${script} ] || [ ! -x ${runtime} ]; then`,
    `  echo "caesar: this command points to an editor or extension that is no longer installed (${target.script.replace(/["\\$`]/g, '\\$&')})." >&2`,
    `  echo "caesar: run \\"Caesar: Install 'caesar' Command in PATH\\" again in the editor." >&2`,
    '  exit 127',
    'fi',
    ...(target.electron ? ['ELECTRON_RUN_AS_NODE=1', 'export ELECTRON_RUN_AS_NODE'] : []),
    `exec ${runtime} ${script} "$@"`,
    '',
  ].join('\n');
}

export function isOurShim(text: string): boolean {
  return text.split('\n', 3)[1] === SHIM_MARKER;
}

export type ShimState = 'absent' | 'ours' | 'foreign';

/** What is at `file` now: nothing, a shim we wrote, or anything else (a file, a link, a folder). */
export async function shimState(file: string): Promise<ShimState> {
  let stat;
  try {
    stat = await fs.lstat(file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return 'absent';
    throw err;
  }
  // A symbolic link (`npm link`, a package manager) is never ours, even when it points at one of our shims.
  if (!stat.isFile()) return 'foreign';
  const handle = await fs.open(file, 'r');
  try {
    const head = Buffer.alloc(512);
    const { bytesRead } = await handle.read(head, 0, head.length, 0);
    return isOurShim(head.subarray(0, bytesRead).toString('utf8')) ? 'ours' : 'foreign';
  } finally {
    await handle.close();
  }
}

export type InstallOutcome = 'created' | 'updated' | 'unchanged';

export class ForeignCommandError extends Error {
  constructor(readonly file: string) {
    super(`${file} exists and was not written by Caesar`);
  }
}

/**
 * Writes the shim at `file` (creating its folder). A file there that is not our shim is replaced only with
 * `replaceForeign` (the user said so); otherwise ForeignCommandError. Written to a temp file and renamed over the old
 * one (a symbolic link is replaced, not followed), so a terminal running `caesar` meanwhile sees the old shim or the
 * new one.
 */
export async function installShim(file: string, target: ShimTarget, options: { replaceForeign?: boolean } = {}): Promise<InstallOutcome> {
  const state = await shimState(file);
  if (state === 'foreign' && !options.replaceForeign) throw new ForeignCommandError(file);
  const text = shimText(target);
  if (state === 'ours' && (await fs.readFile(file, 'utf8')) === text) {
    await fs.chmod(file, 0o755);
    return 'unchanged';
  }
  await fs.mkdir(path.dirname(file), { recursive: true });
  const temp = tempNameBeside(file);
  try {
    await fs.writeFile(temp, text, { mode: 0o755 });
    await fs.chmod(temp, 0o755); // the umask may have cut the mode given to writeFile
    await fs.rename(temp, file);
  } catch (err) {
    await fs.rm(temp, { force: true });
    throw err;
  }
  return state === 'absent' ? 'created' : 'updated';
}

/** Removes `file` only if it is our shim. */
export async function uninstallShim(file: string): Promise<ShimState> {
  const state = await shimState(file);
  if (state === 'ours') await fs.rm(file);
  return state;
}

/** Where the command goes by default: ~/.local/bin, the per-user folder of the XDG base directory spec. */
export function defaultShimDir(home: string): string {
  return path.join(home, '.local', 'bin');
}

export function pathDirs(envPath: string | undefined): string[] {
  return (envPath ?? '').split(path.delimiter).filter((d) => d !== '' && path.isAbsolute(d));
}

/** True when `dir` is on the PATH (compared after resolving `.`, `..` and trailing slashes). */
export function isOnPath(dir: string, envPath: string | undefined): boolean {
  const wanted = path.resolve(dir);
  return pathDirs(envPath).some((d) => path.resolve(d) === wanted);
}

/**
 * Which writable PATH folders to offer for the shim: a user's bin folder, not a system administrator's (`sbin`), not
 * the package manager's (/bin, /usr/bin: written by dpkg and the like, even when root may write there), not a
 * tool-managed one (node_modules/.bin, a version manager's shims, replaced under the user's feet). Folders under the
 * home directory first, then the rest in PATH order.
 */
export function shimDirCandidates(writable: readonly string[], home: string): string[] {
  const system = new Set(['/bin', '/usr/bin', '/usr/games', '/usr/local/games', '/snap/bin']);
  const offered = writable.filter((dir) => {
    const resolved = path.resolve(dir);
    if (system.has(resolved)) return false;
    if (resolved.split(path.sep).includes('sbin')) return false;
    return !/node_modules|[\\/]\.(nvm|asdf|volta|pyenv|rbenv|cargo|rustup|bun|deno)\b/.test(resolved);
  });
  const inHome = (dir: string) => !path.relative(home, path.resolve(dir)).startsWith('..');
  return [...offered.filter(inHome), ...offered.filter((d) => !inHome(d))];
}

/** Folders on PATH this user can write to, in PATH order (where a `caesar` would be found without any setup). */
export async function writablePathDirs(envPath: string | undefined): Promise<string[]> {
  const out: string[] = [];
  for (const dir of pathDirs(envPath)) {
    try {
      await fs.access(dir, fsConstants.W_OK);
      if (!out.includes(dir)) out.push(dir);
    } catch {
      /* missing or read-only: not a candidate */
    }
  }
  return out;
}

import { randomBytes } from 'node:crypto';
import { closeSync, fstatSync, linkSync, mkdirSync, openSync, readFileSync, rmSync, writeSync, constants } from 'node:fs';
import { homedir, userInfo } from 'node:os';
import * as path from 'node:path';

/*
 * The per-user secret that Caesar's records (state.json, result.json, applied.json, events.jsonl) are sealed with
 * (record-seal.ts). It lives in the user's own state folder, outside every task folder and worktree, and the sandbox
 * hides it from every agent (sandbox.ts): an agent, or a repository's planted `.caesar/tasks`, cannot compute a seal.
 *
 * The folder is found from the account's home in the password database, not from $HOME: a process started with
 * another HOME (a test's, an agent's) still seals and verifies with the one key of its user, and an environment
 * variable cannot point Caesar at a key someone else chose.
 */

const KEY_BYTES = 32;
let cached: { file: string; key: Buffer } | undefined;

let keyPath: string | undefined;

/** `~/.local/state/caesar/record.key` of the account running this process (asked once: it reads the user database). */
export function recordKeyPath(): string {
  keyPath ??= path.join(accountHome(), '.local', 'state', 'caesar', 'record.key');
  return keyPath;
}

/** The account's home from the user database; a uid without an entry there (some containers) falls back to $HOME. */
function accountHome(): string {
  try {
    return userInfo().homedir;
  } catch {
    return homedir();
  }
}

/** The key, created once (0600, exclusively: two first processes agree on one), then read from memory. */
export function recordKey(): Buffer {
  if (cached) return cached.key;
  const file = recordKeyPath();
  const key = readKey(file) ?? createKey(file);
  cached = { file, key };
  return key;
}

function readKey(file: string): Buffer | undefined {
  let fd: number;
  try {
    fd = openSync(file, constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new Error(`Caesar's record key ${file} cannot be read: ${(err as Error).message}`);
  }
  try {
    const stats = fstatSync(fd);
    // A key others can read or write is no secret: refuse it rather than seal with it.
    if (!stats.isFile() || (stats.mode & 0o077) !== 0 || (process.getuid && stats.uid !== process.getuid())) {
      throw new Error(`Caesar's record key ${file} must be a regular file of yours with mode 0600 (remove it to make a new one; records sealed with it will then show as unverified).`);
    }
    const key = Buffer.from(readFileSync(fd, 'utf8').trim(), 'hex');
    if (key.length !== KEY_BYTES) throw new Error(`Caesar's record key ${file} is malformed (remove it to make a new one).`);
    return key;
  } finally {
    closeSync(fd);
  }
}

function createKey(file: string): Buffer {
  mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const temp = `${file}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  const fd = openSync(temp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, 0o600);
  try {
    writeSync(fd, `${randomBytes(KEY_BYTES).toString('hex')}\n`);
  } finally {
    closeSync(fd);
  }
  try {
    linkSync(temp, file); // complete when the name appears; a concurrent first process's key wins (EEXIST)
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  } finally {
    rmSync(temp, { force: true });
  }
  const key = readKey(file);
  if (!key) throw new Error(`Caesar's record key ${file} vanished as it was created.`);
  return key;
}

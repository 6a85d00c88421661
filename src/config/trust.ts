import { createHash } from 'node:crypto';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { writeFileAtomic } from '../base/atomic';

/*
 * Trust for the CLI and the MCP server, as Workspace Trust is for the editor. A repository's `.caesar/config.toml`
 * (and `.caesar/config.local.toml`, which a hostile repository can commit too) may name programs: `[[agent]]` bin
 * and args, `[worktree] setup` commands, copy/link sources outside the repository, role prompt files outside
 * `.caesar/`. Such a file is used only once the user has trusted THAT content: `caesar trust` (or the editor, when
 * VS Code trusts the folder) records the file's SHA-256 here, in the user's own state beside the global config. Any
 * change to the file — a pull, an agent — changes the digest, and it asks again.
 *
 * The store is keyed by the file's location with its root's real path (a checkout reached through a symlink is the
 * same file), but `.caesar/` and the file name are not followed: a config (or a `.caesar` folder) that is a symlink
 * to a trusted one elsewhere is not that file (its relative `bin = "./tool"` would resolve in another root). A store
 * that is missing, unreadable or corrupt trusts nothing; it is written whole to a temp file and renamed, so a crash
 * never leaves half of it.
 */

export interface TrustEntry {
  sha256: string;
  /** ISO time of the decision. */
  trusted_at: string;
  /** Who recorded it: `caesar trust`, or the editor because VS Code trusts the folder. */
  by: string;
}

interface TrustStoreFile {
  version: 1;
  files: Record<string, TrustEntry>;
}

/** The trust store: `~/.config/caesar/trusted.json`, beside the global config (the same $HOME decides both). */
export function trustStorePath(home: string): string {
  return path.join(home, '.config', 'caesar', 'trusted.json');
}

export function configDigest(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

/**
 * The key of a config file (`<root>/.caesar/<name>`): the root's real path, then `.caesar/<name>` unfollowed. A
 * repository whose `.caesar` is a symlink to a trusted project's folder is not that project: its key is its own.
 */
export async function trustKey(file: string): Promise<string> {
  const absolute = path.resolve(file);
  const folder = path.dirname(absolute);
  const root = await fs.realpath(path.dirname(folder)).catch(() => path.dirname(folder));
  return path.join(root, path.basename(folder), path.basename(absolute));
}

/** Every recorded decision; a missing or corrupt store is an empty one (nothing trusted). */
export async function readTrustStore(home: string): Promise<Record<string, TrustEntry>> {
  let text: string;
  try {
    text = await fs.readFile(trustStorePath(home), 'utf8');
  } catch {
    return {};
  }
  try {
    const data = JSON.parse(text) as Partial<TrustStoreFile>;
    if (!data || typeof data !== 'object' || !data.files || typeof data.files !== 'object') return {};
    const files: Record<string, TrustEntry> = {};
    for (const [key, entry] of Object.entries(data.files)) {
      if (entry && typeof entry === 'object' && typeof entry.sha256 === 'string' && /^[0-9a-f]{64}$/.test(entry.sha256)) {
        files[key] = { sha256: entry.sha256, trusted_at: String(entry.trusted_at ?? ''), by: String(entry.by ?? '') };
      }
    }
    return files;
  } catch {
    return {};
  }
}

async function writeTrustStore(home: string, files: Record<string, TrustEntry>): Promise<void> {
  const file = trustStorePath(home);
  await fs.mkdir(path.dirname(file), { recursive: true });
  const data: TrustStoreFile = { version: 1, files };
  await writeFileAtomic(file, `${JSON.stringify(data, null, 2)}\n`);
}

/** Whether this exact content of `file` is trusted. */
export async function isTrusted(home: string, file: string, text: string): Promise<boolean> {
  const entry = (await readTrustStore(home))[await trustKey(file)];
  return entry?.sha256 === configDigest(text);
}

/** Records `text` (the content just shown to the user) as the trusted content of `file`. */
export async function recordTrust(home: string, file: string, text: string, by: string): Promise<TrustEntry> {
  const files = await readTrustStore(home);
  const entry: TrustEntry = { sha256: configDigest(text), trusted_at: new Date().toISOString(), by };
  files[await trustKey(file)] = entry;
  await writeTrustStore(home, files);
  return entry;
}

/** Forgets `file`; true when it was recorded. */
export async function revokeTrust(home: string, file: string): Promise<boolean> {
  const files = await readTrustStore(home);
  const key = await trustKey(file);
  if (!(key in files)) return false;
  delete files[key];
  await writeTrustStore(home, files);
  return true;
}

/** The recorded entry for `file`, if any (whatever its digest). */
export async function trustEntryOf(home: string, file: string): Promise<TrustEntry | undefined> {
  return (await readTrustStore(home))[await trustKey(file)];
}

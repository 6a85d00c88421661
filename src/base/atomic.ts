import { randomUUID } from 'node:crypto';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';

/**
 * A fresh temporary name in the same directory as `file` (so that renaming it over `file` is atomic), hidden and
 * unique per call: concurrent writers of one file never share a temp file.
 */
export function tempNameBeside(file: string): string {
  return path.join(path.dirname(file), `.${path.basename(file)}.${randomUUID()}.tmp`);
}

/**
 * Every file of the task directory is written atomically (DESIGN.md principle 1): readers in other processes see the
 * old content or the new one, never a torn write. The temp file lives in the same directory so rename is atomic.
 */
export async function writeFileAtomic(file: string, data: string | Uint8Array): Promise<void> {
  const dir = path.dirname(file);
  await fs.mkdir(dir, { recursive: true });
  const temp = tempNameBeside(file);
  try {
    await fs.writeFile(temp, data);
    await fs.rename(temp, file);
  } catch (err) {
    await fs.rm(temp, { force: true });
    throw err;
  }
}

export async function writeJsonAtomic(file: string, value: unknown): Promise<void> {
  await writeFileAtomic(file, `${JSON.stringify(value, null, 2)}\n`);
}

/**
 * Creates `file` with `data` only if it does not exist yet, atomically: the content is complete the moment the name
 * appears (written to a temp file, then hard-linked). Returns false when someone else created it first — this is
 * how "the first answer wins" and "a cancel is requested once" hold across processes.
 */
export async function createExclusive(file: string, data: string | Uint8Array): Promise<boolean> {
  const dir = path.dirname(file);
  await fs.mkdir(dir, { recursive: true });
  const temp = tempNameBeside(file);
  await fs.writeFile(temp, data);
  try {
    await fs.link(temp, file);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  } finally {
    await fs.rm(temp, { force: true });
  }
}

/** A configuration file's text, or '' when it does not exist yet (the writer will create it). */
export async function readTextOrEmpty(file: string): Promise<string> {
  try {
    return await fs.readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return '';
    throw err;
  }
}

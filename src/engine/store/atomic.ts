import * as path from 'node:path';
import type { z } from 'zod';
import { ProtocolError, formatBytes, formatIssues, parseJsonBounded } from '../../protocol';
import { UnsafeFileError, readRegularFileBounded, type SafeReadOptions } from '../../base/safe-read';


const DEFAULT_MAX_JSON = 4 * 1024 * 1024;

/**
 * Reads and validates a JSON file. A missing file is `undefined`; anything else wrong (too big, not JSON, invalid)
 * throws a ProtocolError naming the file and the field.
 */
export async function readJsonFile<T = unknown>(
  file: string,
  schema?: z.ZodType<T>,
  maxBytes = DEFAULT_MAX_JSON,
  options: SafeReadOptions = {},
): Promise<T | undefined> {
  const text = await readJsonText(file, maxBytes, options);
  if (text === undefined) return undefined;
  const value = parseJsonBounded(text, path.basename(file), maxBytes);
  if (!schema) return value as T;
  const result = schema.safeParse(value);
  if (!result.success) throw new ProtocolError(`Invalid ${path.basename(file)}`, formatIssues(result.error));
  return result.data;
}

/**
 * A JSON file's text, undefined when there is none. Regular files only, never a symlink, never blocking on a FIFO, and
 * never more than maxBytes + 1 bytes read: an agent's 2 GB "report" or a state.json linked to /dev/zero is refused
 * without being pulled into memory, with a ProtocolError that names the file.
 */
export async function readJsonText(file: string, maxBytes: number, options: SafeReadOptions = {}): Promise<string | undefined> {
  try {
    return (await readRegularFileBounded(file, maxBytes, options)).toString('utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    if (err instanceof UnsafeFileError && err.code === 'ETOOBIG') {
      throw new ProtocolError(`${path.basename(file)} is ${formatBytes(err.size ?? maxBytes + 1)}, over the ${formatBytes(maxBytes)} limit`);
    }
    if (err instanceof UnsafeFileError) throw new ProtocolError(err.message);
    throw err;
  }
}

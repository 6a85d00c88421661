import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import type { z } from 'zod';
import { ProtocolError, formatBytes, formatIssues, parseJsonBounded } from '../protocol';

export { createExclusive, writeFileAtomic, writeJsonAtomic } from '../base/atomic';

const DEFAULT_MAX_JSON = 4 * 1024 * 1024;

/**
 * Reads and validates a JSON file. A missing file is `undefined`; anything else wrong (too big, not JSON, invalid)
 * throws a ProtocolError naming the file and the field.
 */
export async function readJsonFile<T = unknown>(
  file: string,
  schema?: z.ZodType<T>,
  maxBytes = DEFAULT_MAX_JSON,
): Promise<T | undefined> {
  let text: string;
  try {
    // Refuse before reading: an agent's 2 GB "report" must not be pulled into memory to find out it is too big.
    const stat = await fs.stat(file);
    if (stat.size > maxBytes) {
      throw new ProtocolError(`${path.basename(file)} is ${formatBytes(stat.size)}, over the ${formatBytes(maxBytes)} limit`);
    }
    text = await fs.readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  const value = parseJsonBounded(text, path.basename(file), maxBytes);
  if (!schema) return value as T;
  const result = schema.safeParse(value);
  if (!result.success) throw new ProtocolError(`Invalid ${path.basename(file)}`, formatIssues(result.error));
  return result.data;
}

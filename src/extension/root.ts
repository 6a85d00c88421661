import { existsSync } from 'node:fs';
import * as path from 'node:path';

/**
 * The caesar root of a folder, as the CLI resolves it: the first ancestor holding `.caesar/` or `.git/`. When neither
 * exists the folder itself is the root, so tasks started later in it still appear.
 */
export function findCaesarRoot(folder: string): string {
  let dir = path.resolve(folder);
  for (;;) {
    if (existsSync(path.join(dir, '.caesar')) || existsSync(path.join(dir, '.git'))) return dir;
    const parent = path.dirname(dir);
    if (parent === dir) return path.resolve(folder);
    dir = parent;
  }
}

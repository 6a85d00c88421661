import { statSync } from 'node:fs';
import * as path from 'node:path';
import { findRoot } from '../config';
import { UsageError } from './io';

/**
 * The caesar root every command works in (reference §6.1.2): `--root` when given, otherwise the first ancestor of
 * the working directory holding `.caesar/` or `.git/`, otherwise the working directory itself (so a task started
 * there later is found by the same rule). The search itself is the configuration layer's, so config and tasks agree.
 */
export function resolveRoot(cwd: string, explicit?: string): string {
  if (explicit !== undefined) {
    const root = path.resolve(cwd, explicit);
    if (!isDirectory(root)) throw new UsageError(`--root ${explicit}: no such directory (${root}).`);
    return root;
  }
  return findRoot(cwd);
}

export { findRoot };

function isDirectory(dir: string): boolean {
  try {
    return statSync(dir).isDirectory();
  } catch {
    return false;
  }
}

import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';

/** Helpers of the hostile-file tests: real temp folders, real FIFOs, and a time limit for reads that could block. */
export function tempDir(prefix: string): string {
  return realpathSync(mkdtempSync(path.join(tmpdir(), prefix)));
}

export function mkfifo(file: string): void {
  mkdirSync(path.dirname(file), { recursive: true });
  execFileSync('mkfifo', [file]);
}

/** Resolves with the promise's outcome, or rejects when it takes longer than `ms` (a blocked open never settles). */
export function within<T>(ms: number, what: string, promise: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise.finally(() => clearTimeout(timer)),
    new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => reject(new Error(`${what} did not return within ${ms} ms`)), ms);
    }),
  ]);
}

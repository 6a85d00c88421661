import { strict as assert } from 'node:assert';
import { mkdtempSync, readdirSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { pruneCache } from '../../src/bin/compile-cache';

describe('bin: the compile cache folder stays small', () => {
  it('keeps the entry just written and the newest others, up to the limit; leaves other files alone', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'caesar-cache-prune-'));
    const now = Date.now() / 1000;
    for (let i = 0; i < 12; i++) {
      const file = path.join(dir, `entry-${i}.bin`);
      writeFileSync(file, 'x');
      utimesSync(file, now - i * 60, now - i * 60); // entry-0 newest, entry-11 oldest
    }
    writeFileSync(path.join(dir, 'notes.txt'), 'not ours to remove');
    const justWritten = path.join(dir, 'entry-11.bin'); // oldest mtime, but the one this process wrote
    pruneCache(dir, justWritten, 4);
    assert.deepEqual(readdirSync(dir).sort(), ['entry-0.bin', 'entry-1.bin', 'entry-11.bin', 'entry-2.bin', 'notes.txt']);
  });
});

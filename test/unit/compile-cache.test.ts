import { strict as assert } from 'node:assert';
import { isAscii } from 'node:buffer';
import { mkdtempSync, readFileSync, readdirSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { build, type Plugin } from 'esbuild';
import { bundleText, pruneCache } from '../../src/bin/compile-cache';

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

describe('bin: bundles are ASCII, read without decoding', () => {
  it('asciiOutput makes the comments esbuild keeps ASCII, keeps every column, and leaves the code unchanged', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'caesar-ascii-'));
    const entry = path.join(dir, 'entry.ts');
    // esbuild keeps a class field's doc comment; the string's non-ASCII is escaped by `charset: 'ascii'`.
    writeFileSync(entry, 'export class Sample {\n  /** a dash — an arrow → a face 😀 */\n  label = "é → 😀";\n}\n');
    const { asciiOutput } = (await import(path.resolve(__dirname, '../../esbuild-plugins.mjs'))) as { asciiOutput: Plugin };
    const options = { entryPoints: [entry], bundle: true, platform: 'node' as const, format: 'cjs' as const, charset: 'ascii' as const, logLevel: 'silent' as const };
    await build({ ...options, outfile: path.join(dir, 'plain.js') });
    await build({ ...options, outfile: path.join(dir, 'ascii.js'), plugins: [asciiOutput] });
    const plain = readFileSync(path.join(dir, 'plain.js'), 'utf8');
    const ascii = readFileSync(path.join(dir, 'ascii.js'));
    assert.ok(/[^\x00-\x7f]/.test(plain), 'esbuild alone keeps the comment as it is (else this test proves nothing)');
    assert.ok(isAscii(ascii));
    assert.deepEqual(ascii.toString('latin1').split('\n').map((l) => l.length), plain.split('\n').map((l) => l.length), 'every column kept');
    const loaded = require(path.join(dir, 'ascii.js')) as { Sample: new () => { label: string } };
    assert.equal(new loaded.Sample().label, 'é → 😀');
  });

  it('takes ASCII bytes as they are and decodes anything else as UTF-8', () => {
    assert.equal(bundleText(Buffer.from('const a = "x";\n')), 'const a = "x";\n');
    assert.equal(bundleText(Buffer.from('const a = "é → 😀";\n', 'utf8')), 'const a = "é → 😀";\n');
  });
});

// Checks a packaged extension (.vsix) for the in-editor tests' API (issue 34): `node scripts/check-packaged-api.mjs
// [caesar.vsix]` exits 1 naming every test driver its dist/extension.js holds. test/unit/extension/packaged-api.test.ts
// runs it on a freshly packaged .vsix.
import { readFileSync } from 'node:fs';
import { inflateRawSync } from 'node:zlib';
import { TEST_API_MARKERS } from '../esbuild-extension.mjs';

/** One file of a zip archive (a .vsix), read through its central directory. */
export function zipEntry(archive, name) {
  const eocd = archive.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
  if (eocd < 0) throw new Error('not a zip archive (no end of central directory)');
  const count = archive.readUInt16LE(eocd + 10);
  let at = archive.readUInt32LE(eocd + 16);
  for (let i = 0; i < count; i++) {
    if (archive.readUInt32LE(at) !== 0x02014b50) throw new Error(`corrupt central directory at ${at}`);
    const method = archive.readUInt16LE(at + 10);
    const size = archive.readUInt32LE(at + 20);
    const nameLength = archive.readUInt16LE(at + 28);
    const entryName = archive.toString('utf8', at + 46, at + 46 + nameLength);
    if (entryName === name) {
      const local = archive.readUInt32LE(at + 42);
      const start = local + 30 + archive.readUInt16LE(local + 26) + archive.readUInt16LE(local + 28);
      const data = archive.subarray(start, start + size);
      if (method === 0) return data;
      if (method === 8) return inflateRawSync(data);
      throw new Error(`${name}: unsupported compression method ${method}`);
    }
    at += 46 + nameLength + archive.readUInt16LE(at + 30) + archive.readUInt16LE(at + 32);
  }
  throw new Error(`${name} is not in the archive`);
}

/** The extension bundle a .vsix ships. */
export function packagedExtensionJs(vsix) {
  return zipEntry(readFileSync(vsix), 'extension/dist/extension.js').toString('utf8');
}

/** The test drivers a bundle's text holds (empty for what may ship). */
export function testDriversIn(bundle) {
  return TEST_API_MARKERS.filter((marker) => bundle.includes(marker));
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const vsix = process.argv[2] ?? 'caesar.vsix';
  const found = testDriversIn(packagedExtensionJs(vsix));
  if (found.length) {
    console.error(`${vsix}: its extension.js holds the in-editor tests' API: ${found.join(', ')}`);
    process.exit(1);
  }
  console.log(`${vsix}: no test driver in extension.js (${TEST_API_MARKERS.length} names checked)`);
}

import { strict as assert } from 'node:assert';
import { existsSync, readFileSync } from 'node:fs';
import * as path from 'node:path';

/** What the Marketplace and Open VSX need from the manifest, checked without packaging (npm run package does that). */
describe('publishing: the manifest and what .vscodeignore ships', () => {
  const root = path.resolve(__dirname, '../../..');
  const manifest = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as Record<string, unknown>;

  it('the icon is a 128x128 PNG that exists', () => {
    assert.equal(typeof manifest.icon, 'string');
    const png = readFileSync(path.join(root, manifest.icon as string));
    assert.equal(png.subarray(1, 4).toString('latin1'), 'PNG');
    assert.deepEqual([png.readUInt32BE(16), png.readUInt32BE(20)], [128, 128], 'IHDR width and height');
  });

  it('no placeholder repository, and the package script says so to vsce', () => {
    assert.doesNotMatch(JSON.stringify(manifest), /example\.invalid/);
    const scripts = manifest.scripts as Record<string, string>;
    if (!manifest.repository) assert.match(scripts.package!, /--allow-missing-repository/);
  });

  it('every file .vscodeignore names for the package exists (after a build, for dist/)', () => {
    const named = readFileSync(path.join(root, '.vscodeignore'), 'utf8')
      .split('\n')
      .filter((line) => line.startsWith('!') && !line.includes('*') && !line.startsWith('!dist/'))
      .map((line) => line.slice(1));
    assert.ok(named.includes('CHANGELOG.md'));
    for (const file of named) assert.ok(existsSync(path.join(root, file)), `${file} is named in .vscodeignore but does not exist`);
  });
});

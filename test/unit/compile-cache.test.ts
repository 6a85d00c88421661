import { strict as assert } from 'node:assert';
import { isAscii } from 'node:buffer';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, chownSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, statSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import Module from 'node:module';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import * as vm from 'node:vm';
import { build, type Plugin } from 'esbuild';
import { bundleText, ownPrivateFolder, pruneCache } from '../../src/bin/compile-cache';

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

/*
 * Issue 34: another local user made the cache folder first, with a crafted cache in it, and the next `caesar` of this
 * user ran the crafted code. The attack is real here: V8 checks only the source's length, so a cache made from another
 * text of the same length runs that text. The CLI uses a cache folder only when it is a real folder of its own user,
 * mode 0700; the control plants the same cache in a folder that passes, and the crafted code runs.
 */
describe('bin: the compile cache folder is the user\'s own, or not used (issue 34)', function () {
  this.timeout(60_000);
  const cli = path.resolve(__dirname, '../../dist/caesar.js');
  const bundle = path.resolve(__dirname, '../../dist/caesar-main.js');
  const NOBODY = 65534;

  /** The cache the CLI would look for (compile-cache.ts's key), crafted from a text that prints PWNED. */
  function plantCraftedCache(dir: string): void {
    mkdirSync(dir, { recursive: true });
    const real = bundleText(readFileSync(bundle));
    const payload = 'process.stdout.write("PWNED\\n");process.exit(0);';
    const crafted = `${payload}/*${' '.repeat(real.length - payload.length - 4)}*/`;
    const stat = statSync(bundle);
    const key = createHash('sha1').update(`${bundle}\0${stat.size}\0${stat.mtimeMs}\0${process.version}\0${process.arch}`).digest('hex');
    writeFileSync(path.join(dir, `${key}.bin`), new vm.Script(Module.wrap(crafted), { filename: bundle }).createCachedData());
  }

  function runCli(home: string): string {
    const env: NodeJS.ProcessEnv = { ...process.env, XDG_CACHE_HOME: path.join(home, 'xdg'), TMPDIR: path.join(home, 'tmp') };
    delete env.CAESAR_COMPILE_CACHE;
    mkdirSync(env.TMPDIR!, { recursive: true });
    return execFileSync(process.execPath, [cli, '--help'], { env, encoding: 'utf8' });
  }

  const ownCache = (home: string) => path.join(home, 'xdg', 'caesar', 'compile-cache');
  const tmpCache = (home: string) => path.join(home, 'tmp', `caesar-compile-cache-${process.getuid!()}`);
  const enabled = typeof (Module as unknown as { enableCompileCache?: unknown }).enableCompileCache !== 'function' && process.getuid?.() === 0;

  (enabled ? it : it.skip)('a folder of another user, one others can write, or a symlink: not used, the crafted cache never runs', () => {
    for (const plant of ['other-user', 'world-writable', 'symlink'] as const) {
      const home = mkdtempSync(path.join(tmpdir(), 'caesar-cache-plant-'));
      const planted = plant === 'symlink' ? path.join(home, 'elsewhere') : ownCache(home);
      plantCraftedCache(planted);
      if (plant === 'other-user') chownSync(planted, NOBODY, NOBODY);
      if (plant === 'world-writable') chmodSync(planted, 0o777);
      if (plant === 'symlink') {
        mkdirSync(path.dirname(ownCache(home)), { recursive: true });
        symlinkSync(planted, ownCache(home));
      }
      // The shared temp folder planted the same way, by another user: not used either.
      plantCraftedCache(tmpCache(home));
      chownSync(tmpCache(home), NOBODY, NOBODY);
      const out = runCli(home);
      assert.ok(!out.includes('PWNED') && out.includes('Usage'), `${plant}: the CLI ran its own code`);
    }
  });

  (enabled ? it : it.skip)('control: the same crafted cache in a folder of this user, 0700, runs (what the check stands between)', () => {
    const home = mkdtempSync(path.join(tmpdir(), 'caesar-cache-plant-'));
    plantCraftedCache(ownCache(home));
    chmodSync(ownCache(home), 0o700);
    assert.match(runCli(home), /PWNED/);
  });

  it('a folder of its own user is made 0700 and used; an existing one readable by others is narrowed to 0700', () => {
    const home = mkdtempSync(path.join(tmpdir(), 'caesar-cache-own-'));
    runCli(home);
    assert.equal(statSync(ownCache(home)).mode & 0o777, 0o700);
    assert.ok(readdirSync(ownCache(home)).some((name) => name.endsWith('.bin')), 'the cache was written');
    const loose = path.join(home, 'loose');
    mkdirSync(loose, { mode: 0o755 });
    chmodSync(loose, 0o755);
    assert.equal(ownPrivateFolder(loose), true);
    assert.equal(statSync(loose).mode & 0o777, 0o700);
  });
});

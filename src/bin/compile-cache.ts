import { isAscii } from 'node:buffer';
import { createHash } from 'node:crypto';
import { chmodSync, lstatSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import Module from 'node:module';
import { homedir, tmpdir, userInfo } from 'node:os';
import * as path from 'node:path';
import * as vm from 'node:vm';

/**
 * Start-up cost of a bundle: V8 compiles (pre-parses) all of it before the first line runs, a sizeable part of a short
 * process's life (issue 14). Node ≥ 22.1 keeps V8's code cache on disk (`module.enableCompileCache()`); on older Node
 * the same is done here with `vm.Script` cached data. Either way a stale or foreign cache is only a miss, never wrong:
 * V8 checks the source hash and its own version, and the cache file is keyed by the bundle's path, size and mtime.
 */

type ModuleWithCache = typeof Module & { enableCompileCache?: (dir?: string) => unknown };

/**
 * The cache folder: $CAESAR_COMPILE_CACHE, else the user's own cache folder ($XDG_CACHE_HOME or ~/.cache, `caesar/
 * compile-cache`), else one per user under the OS temp folder; "off" disables it. Whatever it is, it is used only when
 * it is a real folder of this user that no one else can write (ownPrivateFolder): a cache is code this process runs,
 * and another user who made `/tmp/caesar-compile-cache-<uid>` first, with a crafted cache in it, ran code as this user
 * (issue 34). None fit: no cache, only a slower start.
 */
export function cacheDir(): string | undefined {
  const configured = process.env.CAESAR_COMPILE_CACHE;
  if (configured === 'off' || configured === '0') return undefined;
  const candidates = configured ? [configured] : [userCacheDir(), path.join(tmpdir(), `caesar-compile-cache-${userTag()}`)];
  return candidates.find((dir) => dir !== undefined && ownPrivateFolder(dir));
}

function userCacheDir(): string | undefined {
  const xdg = process.env.XDG_CACHE_HOME;
  const base = xdg && path.isAbsolute(xdg) ? xdg : path.join(homedir(), '.cache');
  return path.isAbsolute(base) ? path.join(base, 'caesar', 'compile-cache') : undefined;
}

function userTag(): string {
  try {
    return String(userInfo().uid >= 0 ? userInfo().uid : userInfo().username);
  } catch {
    return 'user'; // no passwd entry (some containers): the ownership check below still stands
  }
}

/**
 * Made 0700 when missing; then, by lstat, a directory (not a symlink) owned by this process's uid, which no one else
 * may write. One that was ours and only readable by others is narrowed to 0700; one others could write is refused:
 * they may have planted in it already.
 */
export function ownPrivateFolder(dir: string): boolean {
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const stats = lstatSync(dir);
    if (!stats.isDirectory() || (process.getuid && stats.uid !== process.getuid()) || (stats.mode & 0o022) !== 0) return false;
    if ((stats.mode & 0o777) !== 0o700) chmodSync(dir, 0o700);
    return true;
  } catch {
    return false;
  }
}

/** Turns on Node's own code cache for modules loaded from now on (Node ≥ 22.1); a no-op elsewhere. */
export function enableCompileCache(): boolean {
  const dir = cacheDir();
  const enable = (Module as ModuleWithCache).enableCompileCache;
  if (!dir || typeof enable !== 'function') return false;
  try {
    enable(dir);
    return true;
  } catch {
    return false;
  }
}

/**
 * Runs the CommonJS bundle `file` as `require(file)` would, with its compiled code cached between runs. With Node's own
 * cache available it is simply required after enabling it. Otherwise the bundle is compiled through `vm.Script` with
 * the cached data of an earlier run, and, when there was none (or V8 refused it), the cache is written once the
 * process is about to exit, so it also holds the functions this run compiled lazily.
 */
export function requireWithCodeCache(file: string): unknown {
  const dir = cacheDir();
  if (!dir || enableCompileCache()) return require(file);
  let source: string;
  let key: string;
  try {
    const stat = statSync(file);
    source = bundleText(readFileSync(file));
    key = createHash('sha1').update(`${file}\0${stat.size}\0${stat.mtimeMs}\0${process.version}\0${process.arch}`).digest('hex');
  } catch {
    return require(file);
  }
  const cacheFile = path.join(dir, `${key}.bin`);
  let cachedData: Buffer | undefined;
  try {
    cachedData = readFileSync(cacheFile);
  } catch {
    cachedData = undefined;
  }
  const script = new vm.Script(Module.wrap(source), { filename: file, ...(cachedData ? { cachedData } : {}) });
  if (!cachedData || script.cachedDataRejected) process.once('exit', () => saveCache(script, dir, cacheFile));
  const mod = new Module(file, module);
  mod.filename = file;
  mod.paths = (Module as unknown as { _nodeModulePaths(dir: string): string[] })._nodeModulePaths(path.dirname(file));
  const wrapper = script.runInThisContext() as (exports: unknown, req: NodeRequire, m: Module, f: string, d: string) => void;
  wrapper.call(mod.exports, mod.exports, Module.createRequire(file), mod, file, path.dirname(file));
  mod.loaded = true;
  return mod.exports;
}

/**
 * The bundle's text. Our bundles are ASCII (esbuild.mjs: `charset: 'ascii'` and the asciiOutput plugin), and ASCII bytes
 * taken as Latin-1 are the same text, made without decoding: ~0.1 ms for the CLI's 1.9 MB where decoding UTF-8 took
 * 10–50 ms of every start. Any other file is decoded as UTF-8, as `require` would.
 */
export function bundleText(bytes: Buffer): string {
  return isAscii(bytes) ? bytes.toString('latin1') : bytes.toString('utf8');
}

function saveCache(script: vm.Script, dir: string, cacheFile: string): void {
  try {
    const temporary = `${cacheFile}.${process.pid}.tmp`;
    writeFileSync(temporary, script.createCachedData());
    renameSync(temporary, cacheFile);
    pruneCache(dir, cacheFile);
  } catch {
    /* a cache we cannot write is only a slower next start */
  }
}

/** Entries kept in the cache folder: a few bundles (CLI, supervisor) of a few versions. */
const KEPT_ENTRIES = 8;

/**
 * Each new build or Node version adds a ~1 MB entry under a new key and nothing ever reads the old ones again: when an
 * entry is written (once per new build), all but the newest few are removed.
 */
export function pruneCache(dir: string, keep: string, kept = KEPT_ENTRIES): void {
  const entries = readdirSync(dir)
    .filter((name) => name.endsWith('.bin'))
    .map((name) => path.join(dir, name))
    .filter((file) => file !== keep)
    .map((file) => ({ file, mtime: statSync(file, { throwIfNoEntry: false })?.mtimeMs ?? 0 }))
    .sort((a, b) => b.mtime - a.mtime);
  for (const { file } of entries.slice(kept - 1)) rmSync(file, { force: true });
}

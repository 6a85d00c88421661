// Tests that run the built CLI (dist/caesar.js and the bundles beside it) must run what the sources say now: a dist/
// left from before an edit or a branch switch passes or fails for code that no longer exists. Each such test asks
// here first; a dist/ that is missing or older than any input of the build is rebuilt (`node esbuild.mjs`), or, where
// a rebuild is not wanted, refused with the names of the files that make it stale.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, statSync, utimesSync } from 'node:fs';
import { join, relative } from 'node:path';

/** What the build reads: the sources, the webviews, and esbuild's own scripts. */
export const BUILD_INPUTS = ['src', 'webview-ui', 'esbuild.mjs', 'esbuild-plugins.mjs', 'esbuild-extension.mjs'];

/** The bundles the CLI tests run (esbuild.mjs writes them all in one build). */
export const CLI_OUTPUTS = ['dist/caesar.js', 'dist/caesar-main.js', 'dist/supervisor.js', 'dist/supervisor-main.js', 'dist/demo-agent.js', 'dist/host-proxy.js'];

/** The newest file among `inputs` (folders walked), as { file, mtimeMs }, or undefined when there is none. */
export function newestInput(root, inputs = BUILD_INPUTS) {
  let newest;
  const visit = (file) => {
    const stats = statSync(file, { throwIfNoEntry: false });
    if (!stats) return;
    if (stats.isDirectory()) {
      for (const name of readdirSync(file)) if (name !== 'node_modules') visit(join(file, name));
    } else if (!newest || stats.mtimeMs > newest.mtimeMs) {
      newest = { file, mtimeMs: stats.mtimeMs };
    }
  };
  for (const input of inputs) visit(join(root, input));
  return newest;
}

/** Why dist/ cannot be used as it is (missing, or older than an input), or undefined when it is fresh. */
export function staleDistReason(root, outputs = CLI_OUTPUTS, inputs = BUILD_INPUTS) {
  const missing = outputs.filter((output) => !existsSync(join(root, output)));
  if (missing.length) return `${missing.join(', ')} missing`;
  const oldest = outputs.map((output) => ({ output, mtimeMs: statSync(join(root, output)).mtimeMs })).sort((a, b) => a.mtimeMs - b.mtimeMs)[0];
  const newest = newestInput(root, inputs);
  if (!newest || newest.mtimeMs <= oldest.mtimeMs) return undefined;
  const at = (ms) => new Date(ms).toISOString();
  return `${oldest.output} (built ${at(oldest.mtimeMs)}) is older than ${relative(root, newest.file)} (changed ${at(newest.mtimeMs)})`;
}

/**
 * Makes sure `outputs` are built from the current inputs: rebuilds when they are missing or stale (rebuild: true, the
 * default) or throws saying why and what to run (rebuild: false). Returns what was done: 'fresh' or 'rebuilt'.
 */
export function ensureFreshDist(root, { rebuild = true, outputs = CLI_OUTPUTS, inputs = BUILD_INPUTS } = {}) {
  const reason = staleDistReason(root, outputs, inputs);
  if (!reason) return 'fresh';
  if (!rebuild) throw new Error(`dist/ is stale: ${reason}. Run \`npm run build\` first.`);
  try {
    execFileSync(process.execPath, ['esbuild.mjs'], { cwd: root, stdio: 'pipe', encoding: 'utf8' });
  } catch (err) {
    throw new Error(`dist/ was stale (${reason}) and rebuilding it failed: ${String(err.stderr || err.message).trim()}`);
  }
  const still = outputs.filter((output) => !existsSync(join(root, output)));
  if (still.length) throw new Error(`dist/ was stale (${reason}); the rebuild did not write ${still.join(', ')}`);
  // esbuild may leave a file whose bytes did not change untouched: the build just ran, so every output is current.
  const now = new Date();
  for (const output of outputs) utimesSync(join(root, output), now, now);
  return 'rebuilt';
}

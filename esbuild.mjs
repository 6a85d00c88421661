// One bundle per entry point (DESIGN.md): the extension (vscode external), the caesar CLI (also the MCP servers, and
// still able to supervise a task) and its loader, the task supervisor (a lean bundle of its own, started once per task, and its
// loader that keeps V8's code cache), the host-name proxy a supervisor loads only when a task needs it, the demo agent,
// and the browser code of each webview.
import * as esbuild from 'esbuild';
import { chmodSync, existsSync, readdirSync } from 'node:fs';
import { asciiOutput, bundledLicenses, publishedSwitches, zodEnglishOnly } from './esbuild-plugins.mjs';
import { extensionBundle } from './esbuild-extension.mjs';

const watch = process.argv.includes('--watch');
const production = process.argv.includes('--production');
// The in-editor tests' seams (esbuild-extension.mjs): never with --production.
const testSeams = process.argv.includes('--test-seams');

const common = {
  bundle: true,
  sourcemap: true,
  minify: production,
  logLevel: 'info',
  legalComments: 'none',
  // Code comes out ASCII-only (non-ASCII characters escaped); asciiOutput does the same for the comments esbuild keeps.
  charset: 'ascii',
};

// The published build reads no test switch (src/base/test-switches.ts): none of their names is in it.
const node = { ...common, platform: 'node', target: 'node20', format: 'cjs', plugins: [zodEnglishOnly, asciiOutput, ...(production ? [publishedSwitches] : [])] };

const webviewEntries = existsSync('webview-ui')
  ? readdirSync('webview-ui', { withFileTypes: true })
      .filter((d) => d.isDirectory() && existsSync(`webview-ui/${d.name}/main.ts`))
      .map((d) => ({ in: `webview-ui/${d.name}/main.ts`, out: d.name }))
  : [];

const builds = [
  { ...node, ...extensionBundle({ production, testSeams }) },
  // dist/caesar.js is a small loader (supervisor standby for `caesar run`, V8's code cache) of dist/caesar-main.js.
  { ...node, entryPoints: ['src/bin/cli-loader.ts'], outfile: 'dist/caesar.js', banner: { js: '#!/usr/bin/env node' } },
  { ...node, entryPoints: ['src/bin/caesar.ts'], outfile: 'dist/caesar-main.js' },
  // `caesar run` alone (the loader picks it): what a task's CLI loads, with none of the MCP/ACP servers' code.
  { ...node, entryPoints: ['src/bin/run-main.ts'], outfile: 'dist/caesar-run.js' },
  { ...node, entryPoints: ['src/bin/supervisor.ts'], outfile: 'dist/supervisor.js', banner: { js: '#!/usr/bin/env node' } },
  // Whitespace and syntax minified (names kept, so supervisor.log's stack traces stay readable): less to load per task.
  { ...node, entryPoints: ['src/bin/supervisor-main.ts'], outfile: 'dist/supervisor-main.js', minifyWhitespace: true, minifySyntax: true },
  // The filtering proxy of a task whose model endpoint is a host name (src/engine/sandbox/host-proxy.ts): loaded by a
  // supervisor only when a task needs it, so its ~0.7 MB stays out of every other bundle. Its licences ship beside it.
  {
    ...node,
    entryPoints: ['src/engine/sandbox/host-proxy-server.ts'],
    outfile: 'dist/host-proxy.js',
    minifyWhitespace: true,
    minifySyntax: true,
    metafile: true,
    plugins: [...node.plugins, bundledLicenses],
  },
  { ...node, entryPoints: ['src/agents/demo/demo-agent.ts'], outfile: 'dist/demo-agent.js', banner: { js: '#!/usr/bin/env node' } },
  ...(webviewEntries.length
    ? [{ ...common, platform: 'browser', target: 'es2022', format: 'iife', entryPoints: webviewEntries, outdir: 'dist/webview', loader: { '.css': 'css', '.ttf': 'file' } }]
    : []),
].filter((b) => !b.entryPoints.some((e) => typeof e === 'string' && !existsSync(e)));

function makeExecutable() {
  for (const f of ['dist/caesar.js', 'dist/supervisor.js', 'dist/demo-agent.js']) if (existsSync(f)) chmodSync(f, 0o755);
}

if (watch) {
  const contexts = await Promise.all(builds.map((b) => esbuild.context({ ...b, plugins: [...(b.plugins ?? []), { name: 'chmod', setup: (bld) => bld.onEnd(makeExecutable) }] })));
  await Promise.all(contexts.map((c) => c.watch()));
} else {
  await Promise.all(builds.map((b) => esbuild.build(b)));
  makeExecutable();
}

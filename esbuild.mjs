// One bundle per entry point (DESIGN.md): the extension (vscode external), the caesar CLI (also the supervisor, the
// MCP servers and the demo agent's host), the demo agent, and the browser code of each webview.
import * as esbuild from 'esbuild';
import { chmodSync, existsSync, readdirSync } from 'node:fs';

const watch = process.argv.includes('--watch');
const production = process.argv.includes('--production');

const common = {
  bundle: true,
  sourcemap: true,
  minify: production,
  logLevel: 'info',
  legalComments: 'none',
};

const node = { ...common, platform: 'node', target: 'node20', format: 'cjs' };

const webviewEntries = existsSync('webview-ui')
  ? readdirSync('webview-ui', { withFileTypes: true })
      .filter((d) => d.isDirectory() && existsSync(`webview-ui/${d.name}/main.ts`))
      .map((d) => ({ in: `webview-ui/${d.name}/main.ts`, out: d.name }))
  : [];

const builds = [
  { ...node, entryPoints: ['src/extension/extension.ts'], outfile: 'dist/extension.js', external: ['vscode'] },
  { ...node, entryPoints: ['src/bin/caesar.ts'], outfile: 'dist/caesar.js', banner: { js: '#!/usr/bin/env node' } },
  { ...node, entryPoints: ['src/agents/demo/demo-agent.ts'], outfile: 'dist/demo-agent.js', banner: { js: '#!/usr/bin/env node' } },
  ...(webviewEntries.length
    ? [{ ...common, platform: 'browser', target: 'es2022', format: 'iife', entryPoints: webviewEntries, outdir: 'dist/webview', loader: { '.css': 'css', '.ttf': 'file' } }]
    : []),
].filter((b) => !b.entryPoints.some((e) => typeof e === 'string' && !existsSync(e)));

function makeExecutable() {
  for (const f of ['dist/caesar.js', 'dist/demo-agent.js']) if (existsSync(f)) chmodSync(f, 0o755);
}

if (watch) {
  const contexts = await Promise.all(builds.map((b) => esbuild.context({ ...b, plugins: [{ name: 'chmod', setup: (bld) => bld.onEnd(makeExecutable) }] })));
  await Promise.all(contexts.map((c) => c.watch()));
} else {
  await Promise.all(builds.map((b) => esbuild.build(b)));
  makeExecutable();
}

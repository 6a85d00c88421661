// esbuild plugins shared by esbuild.mjs and the benchmarks (bench/task.bench.ts bundles the CLI the same way).
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';

/**
 * zod bundles an error-message translation for ~45 languages and loads them all with the library; we only ever use
 * its English messages (the default). Resolving zod's locale index to English alone takes ~40 % off every Node bundle
 * and ~8 MiB off each process's memory (issue 14): a supervisor runs per task.
 */
export const zodEnglishOnly = {
  name: 'zod-english-only',
  setup(build) {
    build.onResolve({ filter: /[\\/]locales[\\/]index\.js$/ }, (args) =>
      /[\\/]node_modules[\\/]zod[\\/]/.test(args.importer) ? { path: path.join(path.dirname(args.importer), args.path), namespace: 'zod-english-only' } : undefined,
    );
    build.onLoad({ filter: /.*/, namespace: 'zod-english-only' }, (args) => ({
      contents: `export { default as en } from ${JSON.stringify(path.join(path.dirname(args.path), 'en.js'))};`,
      loader: 'js',
      resolveDir: path.dirname(args.path),
    }));
  },
};

/**
 * Keeps a Node bundle pure ASCII. esbuild already escapes every non-ASCII character of code (strings, regular
 * expressions, identifiers: `charset: 'ascii'`, its default) but copies the comments it keeps as they are, so a few
 * `—` or `→` in comments made the whole CLI bundle UTF-8, which Node decodes several times slower than ASCII on every
 * start, and which stops the loader from taking the bytes as they are (compile-cache.ts). Each such character becomes
 * `?` once per UTF-16 unit, so every column, and with it the source map, stays where it was.
 */
export const asciiOutput = {
  name: 'ascii-output',
  setup(build) {
    build.onEnd(() => {
      const file = build.initialOptions.outfile;
      if (!file || !existsSync(file)) return;
      const text = readFileSync(file, 'utf8');
      if (/[^\x00-\x7f]/.test(text)) writeFileSync(file, text.replace(/[^\x00-\x7f]/gu, (c) => '?'.repeat(c.length)));
    });
  },
};

/**
 * Writes `<outfile>.LICENSES.txt` beside a bundle: the licence text of every npm package whose code esbuild put in it
 * (read from the build's metafile), for bundles of third-party code whose licences ask that their text travel with
 * it (dist/host-proxy.js: @anthropic-ai/sandbox-runtime, Apache-2.0, and what it pulls in). Needs `metafile: true`.
 */
export const bundledLicenses = {
  name: 'bundled-licenses',
  setup(build) {
    build.onEnd((result) => {
      const file = build.initialOptions.outfile;
      if (!file || !result.metafile) return;
      const packages = new Set();
      for (const input of Object.keys(result.metafile.inputs)) {
        const m = /^(.*node_modules\/(?:@[^/]+\/)?[^/]+)\//.exec(input);
        if (m) packages.add(m[1]);
      }
      const sections = [...packages].sort().map((dir) => {
        const pkg = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8'));
        const licence = readdirSync(dir).find((name) => /^(licen[cs]e|copying)/i.test(name));
        if (!licence) throw new Error(`${pkg.name} is bundled into ${file} but ships no licence file`);
        return `${pkg.name}@${pkg.version} (${pkg.license})\n\n${readFileSync(path.join(dir, licence), 'utf8').trim()}\n`;
      });
      writeFileSync(`${file}.LICENSES.txt`, `Third-party code bundled into ${path.basename(file)}:\n\n${sections.join('\n' + '-'.repeat(78) + '\n\n')}`);
    });
  },
};

/**
 * The published build's stand-in for src/base/test-switches.ts: test-switches.production.ts, which reads no test
 * switch and holds none of their names (test/unit/published-switches.test.ts builds with it and searches the bundles).
 */
export const publishedSwitches = {
  name: 'published-switches',
  setup(build) {
    build.onResolve({ filter: /[\\/]test-switches$/ }, (args) => ({ path: path.join(args.resolveDir, `${args.path}.production.ts`) }));
  },
};

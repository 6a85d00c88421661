// esbuild plugins shared by esbuild.mjs and the benchmarks (bench/task.bench.ts bundles the CLI the same way).
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

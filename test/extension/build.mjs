// Bundles the in-editor tests into out/test/extension/ (index.js + suite/*.test.js, one file per suite so mocha can
// load them one by one; vscode and mocha stay external). Used by run.mjs (code-server) and electron.mjs.
import { chmodSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';

export const projectDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
export const testsOutDir = path.join(projectDir, 'out', 'test', 'extension');

export async function buildExtensionTests() {
  rmSync(testsOutDir, { recursive: true, force: true });
  const suiteFiles = (folder) =>
    readdirSync(path.join(projectDir, 'test', 'extension', folder)).filter((f) => f.endsWith('.test.ts')).map((f) => `test/extension/${folder}/${f}`);
  await esbuild.build({
    absWorkingDir: projectDir,
    entryPoints: ['test/extension/index.ts', ...suiteFiles('suite'), ...suiteFiles('suite-untrusted')],
    outbase: 'test/extension',
    outdir: testsOutDir,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    sourcemap: 'inline',
    external: ['vscode', 'mocha'],
    logLevel: 'warning',
  });
  return path.join(testsOutDir, 'index.js');
}

/**
 * A `caesar` command in <runDir>/bin (as a global install would provide) and a user configuration in <runDir>/home
 * declaring the fixture agent (a template agent of the user's own config, so it is trusted like one).
 */
export function prepareTestHome(runDir) {
  const binDir = path.join(runDir, 'bin');
  const home = path.join(runDir, 'home');
  mkdirSync(binDir, { recursive: true });
  mkdirSync(path.join(home, '.config', 'caesar'), { recursive: true });
  const shim = path.join(binDir, 'caesar');
  writeFileSync(shim, `#!/bin/sh\nexec node ${JSON.stringify(path.join(projectDir, 'dist', 'caesar.js'))} "$@"\n`);
  chmodSync(shim, 0o755);
  const fixtureAgent = path.join(projectDir, 'test', 'extension', 'fixtures', 'fixture-agent.mjs');
  writeFileSync(
    path.join(home, '.config', 'caesar', 'config.toml'),
    `[[agent]]\nid = "fixture"\nbin = "node"\nargs = [${JSON.stringify(fixtureAgent)}, "{{prompt}}", "{{workspace}}", "{{reportPath}}"]\n` +
      // The fixture agent waits on gate files the suites drop in their state folders: under the host's /tmp, which
      // the sandbox replaces with a private one, so the user's own layer shows them to it (a folder missing is skipped).
      `\n[sandbox]\nread_write = [${JSON.stringify(path.join(runDir, 'suite-state'))}, ${JSON.stringify(path.join(runDir, 'untrusted', 'suite-state'))}]\n`,
  );
  return { binDir, home };
}

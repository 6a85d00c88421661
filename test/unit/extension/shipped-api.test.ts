import { strict as assert } from 'node:assert';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { build } from 'esbuild';

/*
 * Issue 22, item 5: the API activate() returns is reachable by every other installed extension
 * (vscode.extensions.getExtension('…').exports). Its test seams, which replace the Workspace Trust probe (and so the
 * `trusted` flag delegation is given) and the modal confirmations of apply and discard, must not be in what ships.
 * The extension bundle is built here as esbuild.mjs builds it (esbuild-extension.mjs's options), in memory: the
 * production bundle has no such property, the in-editor tests' bundle does (so the search can find them).
 */
const ROOT = path.resolve(__dirname, '..', '..', '..');
const SEAMS = ['setTrustProbe', 'setConfirm'];

async function extensionBundle(flags: { production: boolean; testSeams: boolean }): Promise<string> {
  const { extensionBundle: options } = (await import(path.join(ROOT, 'esbuild-extension.mjs'))) as {
    extensionBundle(f: typeof flags): { entryPoints: string[]; external: string[]; define: Record<string, string> };
  };
  const { entryPoints, external, define } = options(flags);
  const result = await build({
    absWorkingDir: ROOT,
    entryPoints,
    external,
    define,
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'cjs',
    minify: flags.production,
    write: false,
    logLevel: 'silent',
  });
  return result.outputFiles[0]!.text;
}

describe('the shipped extension API has no test seam (issue 22)', function () {
  this.timeout(60_000);

  it('the production bundle holds neither setTrustProbe nor setConfirm, and no undefined CAESAR_TEST_SEAMS', async () => {
    const shipped = await extensionBundle({ production: true, testSeams: false });
    assert.ok(shipped.length > 100_000 && shipped.includes('Caesar'), 'this is the extension bundle');
    for (const seam of SEAMS) assert.ok(!shipped.includes(seam), `${seam} is in the production bundle`);
    assert.ok(!shipped.includes('CAESAR_TEST_SEAMS'), 'every use of the constant is replaced (an undefined global would throw on activation)');
  });

  it('--test-seams is ignored by a production build', async () => {
    const productionAsked = await extensionBundle({ production: true, testSeams: true });
    for (const seam of SEAMS) assert.ok(!productionAsked.includes(seam), `${seam} in a production build given --test-seams`);
  });

  it('the in-editor tests\' bundle has both seams (the search above can find them)', async () => {
    const forTests = await extensionBundle({ production: false, testSeams: true });
    for (const seam of SEAMS) assert.ok(forTests.includes(`${seam}:`), `${seam} is missing from the test build`);
  });

  it('issue 34: the production bundle holds none of the API\'s drivers (questions, pickers, the store…)', async () => {
    const { testDriversIn } = (await import(path.join(ROOT, 'scripts', 'check-packaged-api.mjs'))) as { testDriversIn(bundle: string): string[] };
    assert.deepEqual(testDriversIn(await extensionBundle({ production: true, testSeams: false })), [], 'production');
    // Control: the same check finds every one of them in the in-editor tests' bundle.
    const { TEST_API_MARKERS } = (await import(path.join(ROOT, 'esbuild-extension.mjs'))) as { TEST_API_MARKERS: string[] };
    assert.deepEqual(testDriversIn(await extensionBundle({ production: false, testSeams: true })), TEST_API_MARKERS);
  });

  it('esbuild.mjs builds the extension from those options, and the editor test runners ask for the seams', () => {
    assert.match(readFileSync(path.join(ROOT, 'esbuild.mjs'), 'utf8'), /\.\.\.extensionBundle\(\{ production, testSeams \}\)/);
    for (const runner of ['test/extension/run.mjs', 'test/extension/electron.mjs']) {
      assert.match(readFileSync(path.join(ROOT, runner), 'utf8'), /'esbuild\.mjs', '--test-seams'/, runner);
    }
  });
});

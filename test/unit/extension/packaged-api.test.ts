import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';

/*
 * Issue 34: the API activate() returns is reachable by every installed extension, and it carried the in-editor tests'
 * drivers (questions.choose answers an ACP "Allow", setRemindAfterMs, delegation.currentStep, pickers.current,
 * timeline.search, store). The shipped extension now exports none of it. Checked on what ships: `npm run package`
 * (esbuild --production, then vsce) in a copy of the project — the checkout's own dist/ keeps the build the other
 * tests use — and scripts/check-packaged-api.mjs reads extension.js out of the .vsix. Its control, the same check on
 * the in-editor tests' bundle, is in shipped-api.test.ts; packaging the commit before this change, the check named 10
 * of the 12 markers (setTrustProbe and setConfirm were already out, issue 22).
 */
const ROOT = path.resolve(__dirname, '..', '..', '..');
const LEFT_OUT = new Set(['node_modules', '.git', 'dist', 'caesar.vsix', '.caesar', 'test-results']);

interface PackagedCheck {
  packagedExtensionJs(vsix: string): string;
  testDriversIn(bundle: string): string[];
}

describe('the packaged .vsix exports no test driver (issue 34)', function () {
  // Packaging took 21–35 s on the shared 2-core machine (two production builds and vsce).
  this.timeout(300_000);
  let copy: string;
  after(() => copy && rmSync(copy, { recursive: true, force: true }));

  it('npm run package builds a .vsix whose extension.js holds none of the API\'s drivers', async () => {
    copy = mkdtempSync(path.join(tmpdir(), 'caesar-package-'));
    cpSync(ROOT, copy, { recursive: true, filter: (source) => path.dirname(source) !== ROOT || !LEFT_OUT.has(path.basename(source)) });
    symlinkSync(path.join(ROOT, 'node_modules'), path.join(copy, 'node_modules'));
    const started = Date.now();
    const packaged = spawnSync('npm', ['run', 'package'], { cwd: copy, encoding: 'utf8' });
    assert.equal(packaged.status, 0, packaged.stdout + packaged.stderr);
    console.log(`      npm run package: ${((Date.now() - started) / 1000).toFixed(1)} s`);
    const check = (await import(path.join(ROOT, 'scripts', 'check-packaged-api.mjs'))) as PackagedCheck;
    const shipped = check.packagedExtensionJs(path.join(copy, 'caesar.vsix'));
    assert.ok(shipped.length > 100_000 && shipped.includes('caesar.tasks'), 'this is the extension bundle');
    assert.deepEqual(check.testDriversIn(shipped), []);
    const cli = spawnSync(process.execPath, [path.join(ROOT, 'scripts', 'check-packaged-api.mjs'), path.join(copy, 'caesar.vsix')], { encoding: 'utf8' });
    assert.equal(cli.status, 0, cli.stderr);
  });
});

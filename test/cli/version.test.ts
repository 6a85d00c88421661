import { strict as assert } from 'node:assert';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { CAESAR_VERSION } from '../../src/base/version';
import { buildShippedCli, makeRepo, runCliScript } from '../engine/runtime/helpers';

/*
 * `caesar --version` is answered by the loader without loading the CLI bundle (src/bin/cli-loader.ts). It must say
 * exactly what the CLI itself says, in every form, and the version must be the package's.
 */
describe('cli: --version', function () {
  this.timeout(60_000);

  it('is the package version', () => {
    const pkg = JSON.parse(readFileSync(path.resolve(__dirname, '../../package.json'), 'utf8')) as { version: string };
    assert.equal(CAESAR_VERSION, pkg.version);
  });

  it('from the loader, says what the CLI bundle says, with and without a parent task version, and leaves other uses of the flag to the CLI', async () => {
    const loader = await buildShippedCli();
    const bundle = path.join(path.dirname(loader), 'caesar-main.js');
    const cwd = makeRepo();
    const { CAESAR_VERSION: _parent, ...own } = process.env;
    for (const env of [own, { ...own, CAESAR_VERSION: '7.7.7' }]) {
      for (const flag of ['--version', '-V']) {
        const fast = await runCliScript(loader, [flag], cwd, 30_000, env);
        const full = await runCliScript(bundle, [flag], cwd, 30_000, env);
        assert.equal(fast.code, 0, fast.stderr);
        assert.deepEqual({ out: fast.stdout, err: fast.stderr, code: fast.code }, { out: full.stdout, err: full.stderr, code: full.code });
        assert.equal(fast.stdout, `${env.CAESAR_VERSION ?? CAESAR_VERSION}\n`);
      }
    }
    // Anything more than the lone flag goes to the CLI, which parses it as it always has.
    const both = await runCliScript(loader, ['ps', '--version'], cwd, 30_000, own);
    const bothFull = await runCliScript(bundle, ['ps', '--version'], cwd, 30_000, own);
    assert.deepEqual({ out: both.stdout, code: both.code }, { out: bothFull.stdout, code: bothFull.code });
  });
});

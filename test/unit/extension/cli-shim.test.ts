import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import {
  ForeignCommandError,
  SHIM_MARKER,
  installShim,
  isOnPath,
  shimState,
  uninstallShim,
  shimDirCandidates,
  writablePathDirs,
  type ShimTarget,
} from '../../../src/base/cli-shim';
import { ensureFreshDist } from '../../support/dist-freshness.mjs';

// The shim behind "Caesar: Install 'caesar' Command in PATH": written into real folders and executed by /bin/sh, as a
// user's terminal runs it.
const CAESAR_JS = path.resolve(__dirname, '..', '..', '..', 'dist', 'caesar.js');
const PACKAGE_VERSION = (JSON.parse(readFileSync(path.resolve(__dirname, '..', '..', '..', 'package.json'), 'utf8')) as { version: string }).version;

describe("extension: the 'caesar' command shim", () => {
  let dir: string;
  // The shim runs the built CLI: built now when missing or older than the sources (test/support/dist-freshness.mjs).
  before(function () {
    this.timeout(120_000);
    ensureFreshDist(path.resolve(__dirname, '..', '..', '..'));
  });
  beforeEach(() => {
    // A quote and a space in the folder name: the shim must quote every path it runs.
    dir = path.join(mkdtempSync(path.join(os.tmpdir(), 'caesar-shim-')), "it's a bin");
  });
  afterEach(() => rmSync(path.dirname(dir), { recursive: true, force: true }));

  const plainNode: () => ShimTarget = () => ({ runtime: process.execPath, electron: false, script: CAESAR_JS });
  /** Runs `caesar <args>` through a shell whose PATH starts with the shim's folder. */
  const runCaesar = (args: string) => {
    const env: NodeJS.ProcessEnv = { ...process.env, PATH: `${dir}${path.delimiter}${process.env.PATH}` };
    delete env.CAESAR_VERSION; // the version printed is then the package's
    return spawnSync('/bin/sh', ['-c', `caesar ${args}`], { encoding: 'utf8', env });
  };

  it('installs an executable shim that runs dist/caesar.js with the given runtime: `caesar --version` answers', async () => {
    const file = path.join(dir, 'caesar');
    assert.equal(await installShim(file, plainNode()), 'created');
    assert.equal(statSync(file).mode & 0o777, 0o755);
    assert.equal(readFileSync(file, 'utf8').split('\n')[1], SHIM_MARKER);
    const run = runCaesar('--version');
    assert.equal(run.status, 0, run.stderr);
    assert.equal(run.stdout.trim(), PACKAGE_VERSION);
    const help = runCaesar('--help');
    assert.equal(help.status, 0, help.stderr);
    assert.match(help.stdout, /Usage: caesar/);
  });

  it('under Electron, runs the runtime with ELECTRON_RUN_AS_NODE=1 (the editor binary acting as Node)', async () => {
    // A stand-in for the Electron binary: refuses to act as Node unless ELECTRON_RUN_AS_NODE=1, as VS Code's does.
    const electron = path.join(path.dirname(dir), 'code');
    writeFileSync(
      electron,
      `#!/bin/sh\n[ "$ELECTRON_RUN_AS_NODE" = 1 ] || { echo "would open an editor window" >&2; exit 3; }\nexec ${JSON.stringify(process.execPath)} "$@"\n`,
      { mode: 0o755 },
    );
    await installShim(path.join(dir, 'caesar'), { runtime: electron, electron: true, script: CAESAR_JS });
    const run = runCaesar('--version');
    assert.equal(run.status, 0, run.stderr);
    assert.equal(run.stdout.trim(), PACKAGE_VERSION);
    // Without Electron the variable is not set: a plain Node runtime must not be told it is Electron.
    await installShim(path.join(dir, 'caesar'), { runtime: electron, electron: false, script: CAESAR_JS });
    assert.equal(runCaesar('--version').status, 3);
  });

  it('reinstalling is a no-op when nothing moved, and rewrites the shim when the extension moved', async () => {
    const file = path.join(dir, 'caesar');
    await installShim(file, plainNode());
    assert.equal(await installShim(file, plainNode()), 'unchanged');
    // The extension's dist/ folder moved (an update): the loader and the CLI bundle it loads, side by side.
    const movedDist = path.join(path.dirname(dir), 'caesar-0.2.0', 'dist');
    mkdirSync(movedDist, { recursive: true });
    for (const name of ['caesar.js', 'caesar-main.js']) writeFileSync(path.join(movedDist, name), readFileSync(path.join(path.dirname(CAESAR_JS), name)));
    const moved = path.join(movedDist, 'caesar.js');
    assert.equal(await installShim(file, { ...plainNode(), script: moved }), 'updated');
    assert.equal(runCaesar('--version').status, 0);
  });

  it('says what to do when the editor or extension it points to is gone (exit 127), instead of "not found"', async () => {
    const gone = path.join(path.dirname(dir), 'uninstalled', 'dist', 'caesar.js');
    await installShim(path.join(dir, 'caesar'), { ...plainNode(), script: gone });
    const run = runCaesar('ps');
    assert.equal(run.status, 127);
    assert.match(run.stderr, /no longer installed/);
    assert.match(run.stderr, /Install 'caesar' Command in PATH/);
  });

  it("never replaces a 'caesar' that is not its own shim unless asked, and uninstall leaves it alone", async () => {
    mkdirSync(dir, { recursive: true });
    const file = path.join(dir, 'caesar');
    writeFileSync(file, '#!/bin/sh\necho somebody else\n', { mode: 0o755 });
    await assert.rejects(installShim(file, plainNode()), ForeignCommandError);
    assert.equal(await uninstallShim(file), 'foreign');
    assert.equal(readFileSync(file, 'utf8'), '#!/bin/sh\necho somebody else\n');

    assert.equal(await installShim(file, plainNode(), { replaceForeign: true }), 'updated');
    assert.equal(await shimState(file), 'ours');
    assert.equal(await uninstallShim(file), 'ours');
    assert.equal(existsSync(file), false);
    assert.equal(await uninstallShim(file), 'absent');
  });

  it('treats a symbolic link (`npm link`) as foreign, even one pointing at a shim of ours', async () => {
    const ours = path.join(dir, 'real', 'caesar');
    await installShim(ours, plainNode());
    const link = path.join(dir, 'caesar');
    symlinkSync(ours, link);
    assert.equal(await shimState(link), 'foreign');
    await assert.rejects(installShim(link, plainNode()), ForeignCommandError);
    // Replacing, when the user agreed, swaps the link for a file and leaves its target alone.
    await installShim(link, plainNode(), { replaceForeign: true });
    assert.equal(await shimState(link), 'ours');
    assert.equal(await shimState(ours), 'ours');
  });

  it('knows whether a folder is on PATH and which PATH folders are writable', async () => {
    mkdirSync(dir, { recursive: true });
    const envPath = ['/usr/bin', `${dir}/`, 'relative/bin', path.join(dir, 'missing')].join(path.delimiter);
    assert.equal(isOnPath(dir, envPath), true);
    assert.equal(isOnPath(path.join(dir, '..', path.basename(dir)), envPath), true);
    assert.equal(isOnPath(path.join(dir, 'other'), envPath), false);
    assert.equal(isOnPath(dir, undefined), false);
    const writable = await writablePathDirs(envPath);
    assert.ok(writable.includes(`${dir}/`), 'the writable folder is a candidate');
    assert.ok(!writable.some((d) => d.endsWith('missing')), 'a missing folder is not');
    assert.ok(!writable.includes('relative/bin'), 'a relative PATH entry is never a candidate');
  });

  it('offers a user\'s bin folders only: no sbin, no package-manager or tool-managed folder; the home ones first', () => {
    const home = '/home/u';
    const writable = ['/usr/local/sbin', '/usr/local/bin', '/usr/sbin', '/usr/bin', '/sbin', '/bin', '/home/u/.nvm/versions/node/v20/bin', '/w/node_modules/.bin', '/home/u/bin', '/opt/tools/bin'];
    assert.deepEqual(shimDirCandidates(writable, home), ['/home/u/bin', '/usr/local/bin', '/opt/tools/bin']);
    assert.deepEqual(shimDirCandidates([], home), []);
  });
});

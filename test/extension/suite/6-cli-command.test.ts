import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { InstallCliResult } from '../../../src/extension/cliCommand';
import type { CaesarApi } from '../../../src/extension/api';
import { caesar } from './helpers';

// "Caesar: Install 'caesar' Command in PATH", run as the palette runs it, in the editor's own extension host: the shim
// it writes must start the bundled CLI with that host's runtime (code-server's Node here, Electron in VS Code).
describe("the 'caesar' command in PATH", () => {
  const savedPath = process.env.PATH;
  let theApi: CaesarApi | undefined;
  const api = () => theApi!;
  before(async () => {
    theApi = await caesar();
  });
  afterEach(() => {
    process.env.PATH = savedPath;
  });

  /** Runs the installed file as a terminal would, with nothing else named caesar on PATH. */
  const version = (file: string) => {
    const env: NodeJS.ProcessEnv = { ...process.env, PATH: `${path.dirname(file)}:/usr/bin:/bin` };
    delete env.CAESAR_VERSION;
    return spawnSync('/bin/sh', ['-c', 'command -v caesar && caesar --version'], { encoding: 'utf8', env });
  };

  it('installs into ~/.local/bin without asking when that is on PATH, and `caesar --version` runs', async () => {
    const api = await caesar();
    const home = os.homedir();
    assert.match(home, /caesar-(editor|electron)-/, 'HOME is the test run\'s own folder (run.mjs / electron.mjs), never the real one');
    const dir = path.join(home, '.local', 'bin');
    // The extension host reads PATH when the command runs: this is the PATH of a user whose profile lists ~/.local/bin.
    process.env.PATH = `${dir}:${savedPath}`;
    const result = await vscode.commands.executeCommand<InstallCliResult | undefined>('caesar.installCli');
    assert.deepEqual(result, { file: path.join(dir, 'caesar'), onPath: true });
    const run = version(result!.file);
    assert.equal(run.status, 0, run.stderr);
    const expected = (JSON.parse(readFileSync(path.join(path.dirname(api.cliPath), '..', 'package.json'), 'utf8')) as { version: string }).version;
    assert.deepEqual(run.stdout.trim().split('\n'), [result!.file, expected]);
    const shim = readFileSync(result!.file, 'utf8');
    assert.ok(shim.includes(process.execPath), 'it runs the extension host\'s own runtime');
    assert.equal(shim.includes('ELECTRON_RUN_AS_NODE=1'), process.versions.electron !== undefined);
  });

  it("with ~/.local/bin off PATH it asks, offering a user's bin folders: never an sbin or the package manager's", async () => {
    await caesar();
    const base = mkdtempSync(path.join(os.tmpdir(), 'caesar-path-'));
    for (const dir of ['sbin', 'bin']) mkdirSync(path.join(base, dir));
    process.env.PATH = `${path.join(base, 'sbin')}:${path.join(base, 'bin')}:/usr/local/sbin:/usr/sbin:/sbin:/usr/bin:/bin`;
    const asking = vscode.commands.executeCommand<InstallCliResult | undefined>('caesar.installCli');
    const shown = await api().pickers.waitFor(/^Caesar: Install 'caesar' Command in PATH$/, 10_000);
    const labels = (shown.input as vscode.QuickPick<vscode.QuickPickItem>).items.map((i) => i.label);
    assert.ok(labels.includes(path.join(base, 'bin')), JSON.stringify(labels));
    assert.ok(!labels.some((l) => l.split('/').includes('sbin') || l === '/usr/bin' || l === '/bin'), JSON.stringify(labels));
    shown.input.hide();
    assert.equal(await asking, undefined);
  });

  it('installs into a given folder off PATH, says so, and uninstall removes only its own shims', async () => {
    const elsewhere = path.join(mkdtempSync(path.join(os.tmpdir(), 'caesar-cli-')), 'bin');
    const result = await vscode.commands.executeCommand<InstallCliResult | undefined>('caesar.installCli', { directory: elsewhere });
    assert.deepEqual(result, { file: path.join(elsewhere, 'caesar'), onPath: false });
    assert.equal(version(result!.file).status, 0);

    // A `caesar` that is not ours (another tool, an npm link) on PATH is left alone by the uninstall.
    const foreignDir = mkdtempSync(path.join(os.tmpdir(), 'caesar-foreign-'));
    writeFileSync(path.join(foreignDir, 'caesar'), '#!/bin/sh\necho not caesar\n', { mode: 0o755 });
    const home = path.join(os.homedir(), '.local', 'bin');
    process.env.PATH = `${foreignDir}:${home}:${savedPath}`;
    const removed = await vscode.commands.executeCommand<string[]>('caesar.uninstallCli');
    assert.deepEqual(removed.sort(), [path.join(elsewhere, 'caesar'), path.join(home, 'caesar')].sort());
    assert.equal(existsSync(path.join(elsewhere, 'caesar')), false);
    assert.equal(existsSync(path.join(home, 'caesar')), false);
    assert.equal(readFileSync(path.join(foreignDir, 'caesar'), 'utf8'), '#!/bin/sh\necho not caesar\n');
  });
});

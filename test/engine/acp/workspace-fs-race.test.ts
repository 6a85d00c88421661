import { strict as assert } from 'node:assert';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { constants, existsSync, mkdirSync, mkdtempSync, promises as fsp, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { WorkspaceFs } from '../../../src/engine/acp/workspace-fs';
import { useProcFd } from '../../../src/engine/acp/beneath';

/*
 * Issue 34: an ACP agent swaps a folder of its workspace and a symlink leading out (renameat2 RENAME_EXCHANGE, in a
 * tight loop) while it asks the client to write or read a file below that folder. The client must never write outside
 * nor read what lies outside, however the race falls. The control runs the same race against the check-then-open the
 * client used before (kept below), and shows it beaten.
 */

const EXCHANGER = `
import ctypes, sys
libc = ctypes.CDLL(None, use_errno=True)
a, b = sys.argv[1].encode(), sys.argv[2].encode()
sys.stdout.write("ready\\n"); sys.stdout.flush()
while True:
    if libc.renameat2(-100, a, -100, b, 2) != 0:
        sys.exit("renameat2: errno %d" % ctypes.get_errno())
`;

const canExchange = process.platform === 'linux' && spawnSync('python3', ['-c', 'import ctypes; ctypes.CDLL(None).renameat2'], { stdio: 'ignore' }).status === 0;

interface Scene {
  workspace: string;
  outside: string;
  exchanger: ChildProcess;
}

/** ws/sub (a real folder, with a decoy) and ws/swap (a symlink to the outside folder, which holds the secret). */
async function scene(): Promise<Scene> {
  const root = realpathSync(mkdtempSync(path.join(tmpdir(), 'caesar-acp-race-')));
  const workspace = path.join(root, 'ws');
  const outside = path.join(root, 'outside');
  mkdirSync(path.join(workspace, 'sub'), { recursive: true });
  mkdirSync(outside);
  writeFileSync(path.join(workspace, 'sub', 'secret.txt'), 'decoy\n');
  writeFileSync(path.join(outside, 'secret.txt'), 'HIDDEN\n');
  symlinkSync(outside, path.join(workspace, 'swap'));
  const exchanger = spawn('python3', ['-c', EXCHANGER, path.join(workspace, 'sub'), path.join(workspace, 'swap')], { stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise<void>((resolve, reject) => {
    exchanger.stdout!.once('data', () => resolve());
    exchanger.once('exit', (code) => reject(new Error(`the exchanger exited (${code})`)));
  });
  return { workspace, outside, exchanger };
}

function stop(s: Scene): void {
  s.exchanger.kill('SIGKILL');
  rmSync(path.dirname(s.workspace), { recursive: true, force: true });
}

/** The client before issue 34: realpath checked inside, then opened by path (O_NOFOLLOW on the last part only). */
async function checkThenOpen(workspace: string, rel: string, write: string | undefined): Promise<string | undefined> {
  const file = path.join(workspace, rel);
  let real: string;
  try {
    real = await fsp.realpath(write === undefined ? file : path.dirname(file));
  } catch {
    return undefined;
  }
  if (!real.startsWith(`${workspace}/`)) return undefined;
  try {
    if (write === undefined) return await fsp.readFile(file, { encoding: 'utf8', flag: constants.O_RDONLY | constants.O_NOFOLLOW });
    await fsp.writeFile(file, write, { flag: constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | constants.O_NOFOLLOW });
  } catch {
    /* the race fell the other way this time */
  }
  return undefined;
}

/** The client's read through the real WorkspaceFs; undefined when refused or not found. */
async function clientRead(fs: WorkspaceFs, workspace: string): Promise<{ content?: string }> {
  return fs.read({ path: path.join(workspace, 'sub/secret.txt') }).catch(() => ({}));
}

const TRIES = 400;

(canExchange ? describe : describe.skip)('ACP client fs under a folder⇄symlink exchange race (issue 34)', function () {
  this.timeout(120_000);
  let s: Scene;
  beforeEach(async () => (s = await scene()));
  afterEach(() => {
    useProcFd(undefined);
    stop(s);
  });

  it(`${TRIES} writes and ${TRIES} reads of sub/… while sub and a symlink out are exchanged: nothing written outside, nothing read from it`, async () => {
    const fs = new WorkspaceFs({ workspace: s.workspace, mode: 'write', emit: () => undefined });
    let served = 0;
    let refused = 0;
    for (let i = 0; i < TRIES; i++) {
      await fs.write({ path: path.join(s.workspace, `sub/new-${i}.txt`), content: 'pwned' }).then(() => served++, () => refused++);
      await fs.write({ path: path.join(s.workspace, 'sub/secret.txt'), content: 'decoy\n' }).then(() => served++, () => refused++);
      const read = await clientRead(fs, s.workspace);
      if (read.content !== undefined) served++;
      else refused++;
      assert.notEqual(read.content, 'HIDDEN\n', `try ${i}: the file outside was read`);
    }
    const leaked = (await fsp.readdir(s.outside)).filter((name) => name !== 'secret.txt');
    assert.deepEqual(leaked, [], 'no file written outside the workspace');
    assert.equal(readFileSync(path.join(s.outside, 'secret.txt'), 'utf8'), 'HIDDEN\n', 'the file outside is unchanged');
    // The race did happen: some requests met the symlink (refused), some the folder (served).
    assert.ok(served > 0 && refused > 0, `served ${served}, refused ${refused}`);
  });

  it('control: the same race beats the check-then-open the client used before (a write lands outside, the hidden file is read)', async () => {
    let wroteOutside = false;
    let readHidden = false;
    for (let i = 0; i < 20 * TRIES && !(wroteOutside && readHidden); i++) {
      await checkThenOpen(s.workspace, `sub/new-${i}.txt`, 'pwned');
      if ((await checkThenOpen(s.workspace, 'sub/secret.txt', undefined)) === 'HIDDEN\n') readHidden = true;
      wroteOutside ||= (await fsp.readdir(s.outside)).some((name) => name.startsWith('new-'));
    }
    assert.ok(wroteOutside, 'the old way wrote outside');
    assert.ok(readHidden, 'the old way read the hidden file');
  });

  it('control: the walk by path name (no /proc/self/fd descriptors) is beaten too: the descriptors are the defence', async () => {
    useProcFd(false);
    const fs = new WorkspaceFs({ workspace: s.workspace, mode: 'write', emit: () => undefined });
    let escaped = false;
    for (let i = 0; i < 20 * TRIES && !escaped; i++) {
      await fs.write({ path: path.join(s.workspace, `sub/new-${i}.txt`), content: 'pwned' }).catch(() => undefined);
      escaped = (await clientRead(fs, s.workspace)).content === 'HIDDEN\n' || existsSync(path.join(s.outside, `new-${i}.txt`));
    }
    assert.ok(escaped, 'without the held descriptors the race leads the client outside');
  });
});

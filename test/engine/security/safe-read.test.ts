import { strict as assert } from 'node:assert';
import { mkdirSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { UnsafeFileError, listFolder, openRegularFile, readRegularFileBounded } from '../../../src/base/safe-read';
import { readJsonFile } from '../../../src/engine/store/atomic';
import { mkfifo, tempDir, within } from './helpers';

// The one primitive every task-file reader goes through (src/base/safe-read.ts).


describe('security: readRegularFileBounded and openRegularFile', () => {
  it('refuses symlinks, FIFOs, devices and directories without blocking, and reads at most limit + 1 bytes', async () => {
    const dir = tempDir('caesar-sec-read-');
    writeFileSync(path.join(dir, 'ok.json'), '{"a":1}');
    symlinkSync('/dev/zero', path.join(dir, 'zero.json'));
    symlinkSync(path.join(dir, 'ok.json'), path.join(dir, 'link.json'));
    mkfifo(path.join(dir, 'fifo.json'));
    mkdirSync(path.join(dir, 'dir.json'));
    writeFileSync(path.join(dir, 'big.json'), Buffer.alloc(1024 * 1024 + 1, 0x20));

    assert.equal((await readRegularFileBounded(path.join(dir, 'ok.json'), 100)).toString(), '{"a":1}');
    const refusals: Array<[string, string]> = [
      ['zero.json', 'ESYMLINK'],
      ['link.json', 'ESYMLINK'],
      ['fifo.json', 'ENOTREG'],
      ['dir.json', 'ENOTREG'],
      ['big.json', 'ETOOBIG'],
    ];
    for (const [name, code] of refusals) {
      const error = await within(2_000, name, readRegularFileBounded(path.join(dir, name), 1024 * 1024).then(() => undefined, (e: unknown) => e));
      assert.ok(error instanceof UnsafeFileError, `${name}: expected a refusal, got ${String(error)}`);
      assert.equal(error.code, code, name);
    }
    await assert.rejects(readRegularFileBounded('/dev/null', 10), (e: unknown) => e instanceof UnsafeFileError && e.code === 'ENOTREG');
    await assert.rejects(readRegularFileBounded(path.join(dir, 'missing.json'), 10), { code: 'ENOENT' });
    // readJsonFile keeps its contract: missing is undefined, hostile is a ProtocolError, never a hang.
    assert.equal(await readJsonFile(path.join(dir, 'missing.json')), undefined);
    await assert.rejects(within(2_000, 'readJsonFile(fifo)', readJsonFile(path.join(dir, 'fifo.json'))), /FIFO/);
    await assert.rejects(within(2_000, 'readJsonFile(zero)', readJsonFile(path.join(dir, 'zero.json'))), /symbolic link/);
  });

  it('refuses a symlinked folder between `within` and the file, and a file outside `within`', async () => {
    const root = tempDir('caesar-sec-within-');
    const elsewhere = tempDir('caesar-sec-within-else-');
    writeFileSync(path.join(elsewhere, 'state.json'), '{}');
    mkdirSync(path.join(root, 'tasks'));
    symlinkSync(elsewhere, path.join(root, 'tasks', 't1'));
    await assert.rejects(
      openRegularFile(path.join(root, 'tasks', 't1', 'state.json'), { within: path.join(root, 'tasks') }),
      (e: unknown) => e instanceof UnsafeFileError && e.code === 'ESYMLINK',
    );
    await assert.rejects(
      openRegularFile(path.join(elsewhere, 'state.json'), { within: path.join(root, 'tasks') }),
      (e: unknown) => e instanceof UnsafeFileError && e.code === 'EOUTSIDE',
    );
    // Without `within` the same file opens: only the symlinked component was the problem.
    await (await openRegularFile(path.join(elsewhere, 'state.json'))).close();
  });

  it('listFolder: checks the folder once, lists what it holds; a listed file swapped for a symlink is still refused', async () => {
    const root = tempDir('caesar-sec-list-');
    const elsewhere = tempDir('caesar-sec-list-else-');
    const folder = path.join(root, 't1');
    mkdirSync(folder);
    writeFileSync(path.join(folder, 'state.json'), '{"a":1}');
    mkfifo(path.join(folder, 'fifo.json'));
    symlinkSync(elsewhere, path.join(root, 't2'));

    const listing = (await listFolder(folder, root))!;
    assert.deepEqual([...listing.keys()].sort(), ['fifo.json', 'state.json']);
    assert.equal(listing.get('state.json')!.isFile(), true);
    assert.equal(listing.get('fifo.json')!.isFile(), false);
    assert.equal(await listFolder(path.join(root, 'missing'), root), undefined);
    await assert.rejects(listFolder(path.join(root, 't2'), root), (e: unknown) => e instanceof UnsafeFileError && e.code === 'ESYMLINK');
    await assert.rejects(listFolder(elsewhere, root), (e: unknown) => e instanceof UnsafeFileError && e.code === 'EOUTSIDE');

    const state = path.join(folder, 'state.json');
    assert.equal((await readRegularFileBounded(state, 100, { within: root, listed: true })).toString(), '{"a":1}');
    // Swapped after the listing: the open itself refuses the symlink (O_NOFOLLOW), with no lstat before it.
    rmSync(state);
    symlinkSync('/dev/zero', state);
    await assert.rejects(
      within(2_000, 'listed read of a swapped file', readRegularFileBounded(state, 100, { within: root, listed: true })),
      (e: unknown) => e instanceof UnsafeFileError && e.code === 'ESYMLINK',
    );
  });

  it('stops at limit + 1 bytes on a file that grows while it is read', async () => {
    const dir = tempDir('caesar-sec-grow-');
    const file = path.join(dir, 'growing.json');
    writeFileSync(file, 'x'.repeat(10));
    const reading = readRegularFileBounded(file, 1000);
    writeFileSync(file, 'x'.repeat(5000)); // same inode, grown before or during the read
    const outcome = await reading.then((b) => b.length, (e: UnsafeFileError) => e.code);
    assert.ok(outcome === 'ETOOBIG' || (typeof outcome === 'number' && outcome <= 1000), String(outcome));
  });

  // Every task file is written by temp file + rename, so a reader regularly opens a file that was replaced between its
  // lstat and its open. That is a normal read of the new file, never an error (seen as a flaky "replaced while it was
  // opened" failure under load before).
  it('reads a file that atomic writers keep replacing, without ever failing', async () => {
    const dir = tempDir('caesar-sec-rename-');
    const file = path.join(dir, 'state.json');
    writeFileSync(file, JSON.stringify({ n: 0 }));
    let writes = 0;
    let stop = false;
    const writer = (async () => {
      while (!stop) {
        const temp = `${file}.${writes}.tmp`;
        writeFileSync(temp, JSON.stringify({ n: ++writes }));
        renameSync(temp, file);
        await new Promise((r) => setImmediate(r));
      }
    })();
    const failures: string[] = [];
    for (let i = 0; i < 400; i++) {
      await readJsonFile<{ n: number }>(file).catch((err: Error) => failures.push(err.message));
    }
    stop = true;
    await writer;
    assert.ok(writes > 50, `the writer replaced the file ${writes} times`);
    assert.deepEqual(failures, []);
  });
});

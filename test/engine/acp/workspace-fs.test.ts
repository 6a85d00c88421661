import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { RequestError } from '@agentclientprotocol/sdk';
import type { EventDraft } from '../../../src/protocol';
import { WorkspaceFs, sliceLines } from '../../../src/engine/acp/workspace-fs';

/** The client's fs methods on a real folder: served inside the workspace only. */
function setup(mode: 'read-only' | 'write' = 'write') {
  const root = realpathSync(mkdtempSync(path.join(tmpdir(), 'caesar-acp-fs-')));
  const workspace = path.join(root, 'ws');
  mkdirSync(path.join(workspace, 'src'), { recursive: true });
  mkdirSync(path.join(workspace, '.git'));
  writeFileSync(path.join(workspace, 'src/a.txt'), 'one\ntwo\nthree\nfour\n');
  writeFileSync(path.join(root, 'secret.txt'), 'secret\n');
  const report = path.join(root, 'task', 'report.json');
  mkdirSync(path.dirname(report));
  const events: EventDraft[] = [];
  const written: string[] = [];
  const fs = new WorkspaceFs({ workspace, mode, extraFiles: [report], emit: (d) => events.push(...d), onWritten: (rel) => written.push(rel) });
  return { root, workspace, report, fs, events, written };
}

async function refusal(promise: Promise<unknown>): Promise<RequestError> {
  try {
    await promise;
  } catch (err) {
    assert.ok(err instanceof RequestError, `a RequestError, got ${String(err)}`);
    return err;
  }
  assert.fail('expected a refusal');
}

describe('ACP client fs: fs/read_text_file and fs/write_text_file inside the workspace only', () => {
  it('reads a file, honouring line (1-based) and limit', async () => {
    const { workspace, fs } = setup();
    assert.equal((await fs.read({ path: path.join(workspace, 'src/a.txt') })).content, 'one\ntwo\nthree\nfour\n');
    assert.equal((await fs.read({ path: path.join(workspace, 'src/a.txt'), line: 2, limit: 2 })).content, 'two\nthree');
    assert.equal(sliceLines('a\nb\nc', 3), 'c');
  });

  it('a missing file is resourceNotFound (-32002)', async () => {
    const { workspace, fs } = setup();
    const err = await refusal(fs.read({ path: path.join(workspace, 'nope.txt') }));
    assert.equal(err.code, -32002);
  });

  it('refuses paths outside, with "..", through a symlink leading out (file or folder), and inside .git', async () => {
    const { root, workspace, fs } = setup();
    symlinkSync(path.join(root, 'secret.txt'), path.join(workspace, 'link.txt'));
    symlinkSync(root, path.join(workspace, 'out'));
    for (const p of [path.join(root, 'secret.txt'), `${workspace}/../secret.txt`, path.join(workspace, 'link.txt'), path.join(workspace, 'out/secret.txt'), path.join(workspace, '.git/config')]) {
      const err = await refusal(fs.read({ path: p }));
      assert.notEqual(err.code, -32002, `${p} refused, not "not found"`);
    }
    for (const p of [path.join(root, 'x.txt'), `${workspace}/../x.txt`, path.join(workspace, 'link.txt'), path.join(workspace, 'out/new.txt'), path.join(workspace, '.git/hooks/pre-commit')]) {
      await refusal(fs.write({ path: p, content: 'pwned' }));
    }
    assert.equal(readFileSync(path.join(root, 'secret.txt'), 'utf8'), 'secret\n');
    assert.ok(!existsSync(path.join(root, 'x.txt')) && !existsSync(path.join(root, 'new.txt')));
  });

  it('writes inside (new folders too), each write an event; a symlink inside the workspace is followed', async () => {
    const { workspace, fs, events, written } = setup();
    symlinkSync(path.join(workspace, 'src/a.txt'), path.join(workspace, 'alias.txt'));
    await fs.write({ path: path.join(workspace, 'deep/er/new.txt'), content: 'hi' });
    await fs.write({ path: path.join(workspace, 'alias.txt'), content: 'changed' });
    assert.equal(readFileSync(path.join(workspace, 'deep/er/new.txt'), 'utf8'), 'hi');
    assert.equal(readFileSync(path.join(workspace, 'src/a.txt'), 'utf8'), 'changed');
    assert.deepEqual(events, [
      { type: 'file_changed', path: 'deep/er/new.txt', action: 'created' },
      { type: 'file_changed', path: 'src/a.txt', action: 'modified' },
    ]);
    assert.deepEqual(written, ['deep/er/new.txt', 'src/a.txt']);
  });

  it('a symlink inside the workspace that leads into .git/ is refused (read and write), a FIFO is refused without blocking', async () => {
    const { workspace, fs } = setup();
    writeFileSync(path.join(workspace, '.git/config'), '[core]\n');
    symlinkSync('.git', path.join(workspace, 'g'));
    symlinkSync(path.join(workspace, '.git/config'), path.join(workspace, 'cfg'));
    for (const p of ['g/config', 'cfg']) await refusal(fs.read({ path: path.join(workspace, p) }));
    for (const p of ['g/hooks/pre-commit', 'cfg']) await refusal(fs.write({ path: path.join(workspace, p), content: 'pwned' }));
    assert.equal(readFileSync(path.join(workspace, '.git/config'), 'utf8'), '[core]\n');
    assert.ok(!existsSync(path.join(workspace, '.git/hooks')));
    execFileSync('mkfifo', [path.join(workspace, 'fifo')]);
    await refusal(fs.read({ path: path.join(workspace, 'fifo') }));
    await refusal(fs.write({ path: path.join(workspace, 'fifo'), content: 'x' }));
  });

  it('[sandbox] hide holds for the client too: a hidden file or folder is refused, through a symlink as well; control: served without it', async () => {
    const { workspace, events } = setup();
    writeFileSync(path.join(workspace, '.env'), 'TOKEN=secret\n');
    mkdirSync(path.join(workspace, 'private'));
    writeFileSync(path.join(workspace, 'private/key.pem'), 'KEY\n');
    symlinkSync('.env', path.join(workspace, 'env-link'));
    const hidden = [path.join(workspace, '.env'), path.join(workspace, 'private')];
    const guarded = new WorkspaceFs({ workspace, mode: 'write', hidden, emit: (d) => events.push(...d) });
    for (const p of ['.env', 'env-link', 'private/key.pem']) {
      await refusal(guarded.read({ path: path.join(workspace, p) }));
      await refusal(guarded.write({ path: path.join(workspace, p), content: 'x' }));
    }
    assert.equal(readFileSync(path.join(workspace, '.env'), 'utf8'), 'TOKEN=secret\n');
    const open = new WorkspaceFs({ workspace, mode: 'write', emit: () => undefined });
    assert.equal((await open.read({ path: path.join(workspace, 'env-link') })).content, 'TOKEN=secret\n');
  });

  it('a read-only task: no write in the workspace, but the report file may be written', async () => {
    const { workspace, report, fs } = setup('read-only');
    await refusal(fs.write({ path: path.join(workspace, 'src/a.txt'), content: 'x' }));
    assert.equal(readFileSync(path.join(workspace, 'src/a.txt'), 'utf8'), 'one\ntwo\nthree\nfour\n');
    await fs.write({ path: report, content: '{}' });
    assert.equal(readFileSync(report, 'utf8'), '{}');
  });
});

import { strict as assert } from 'node:assert';
import { ConfigError, loadConfig } from '../../src/config';
import { rejects, sandbox, type Sandbox } from './helpers';

describe('config: [sandbox]', () => {
  let box: Sandbox;
  beforeEach(() => {
    box = sandbox();
  });
  afterEach(() => box.cleanup());

  it('merges mode, hide and read_write by layer, the most specific winning', async () => {
    box.write(box.globalFile, '[sandbox]\nmode = "required"\nhide = ["~/.secrets"]\n');
    box.write(box.projectFile, '[sandbox]\nread_write = ["/srv/cache"]\n');
    const loaded = await loadConfig({ root: box.root, home: box.home });
    assert.deepEqual(loaded.config.sandbox, { mode: 'required', hide: ['~/.secrets'], read_write: ['/srv/cache'] });
    assert.equal(loaded.provenance.sandbox.mode, 'global');
    assert.equal(loaded.provenance.sandbox.read_write, 'project');
  });

  it('unset: no mode (the engine default, auto, applies) and empty lists', async () => {
    const loaded = await loadConfig({ root: box.root, home: box.home });
    assert.deepEqual(loaded.config.sandbox, { hide: [], read_write: [] });
  });

  it('refuses an unknown mode, a relative path and an unknown key', async () => {
    for (const text of ['[sandbox]\nmode = "sometimes"\n', '[sandbox]\nhide = ["relative/path"]\n', '[sandbox]\nallow = true\n']) {
      box.write(box.projectFile, text);
      assert.ok((await rejects(loadConfig({ root: box.root, home: box.home }))) instanceof ConfigError, text);
    }
  });

  it('an untrusted workspace may tighten the sandbox, never loosen it', async () => {
    box.write(box.globalFile, '[sandbox]\nmode = "auto"\n');
    box.write(box.projectFile, '[sandbox]\nmode = "off"\nread_write = ["/"]\nhide = ["/srv/secret"]\n');
    const untrusted = await loadConfig({ root: box.root, home: box.home, trusted: false });
    assert.deepEqual(untrusted.config.sandbox, { mode: 'auto', hide: ['/srv/secret'], read_write: [] });
    assert.ok(untrusted.ignored.some((line) => line.includes('[sandbox]')));
    box.write(box.projectFile, '[sandbox]\nmode = "required"\n');
    assert.equal((await loadConfig({ root: box.root, home: box.home, trusted: false })).config.sandbox.mode, 'required');
  });
});

import { strict as assert } from 'node:assert';
import { ConfigError, loadConfig } from '../../src/config';
import { rejects, sandbox, type Sandbox } from './helpers';

describe('config: [sandbox]', () => {
  let box: Sandbox;
  beforeEach(() => {
    box = sandbox();
  });
  afterEach(() => box.cleanup());

  it('the user\'s layer sets mode, hide and read_write; a repository\'s layer only tightens: a stricter mode, more hidden paths', async () => {
    box.write(box.globalFile, '[sandbox]\nmode = "auto"\nhide = ["~/.secrets"]\nread_write = ["/srv/cache"]\n');
    box.write(box.projectFile, '[sandbox]\nmode = "required"\nhide = ["/srv/secret"]\n');
    const loaded = await loadConfig({ root: box.root, home: box.home });
    assert.deepEqual(loaded.config.sandbox, { mode: 'required', hide: ['~/.secrets', '/srv/secret'], read_write: ['/srv/cache'], allow_hosts: [] });
    assert.equal(loaded.provenance.sandbox.mode, 'project');
    assert.equal(loaded.provenance.sandbox.read_write, 'global');
  });

  it('a repository\'s layer cannot switch the sandbox off or make more paths writable, trusted or not (a note says so)', async () => {
    box.write(box.projectFile, '[sandbox]\nmode = "off"\nread_write = ["/"]\n');
    const loaded = await loadConfig({ root: box.root, home: box.home });
    assert.deepEqual(loaded.config.sandbox, { hide: [], read_write: [], allow_hosts: [] });
    assert.ok(loaded.notes.some((n) => /\[sandbox\] mode = "off" from project ignored/.test(n.message)), JSON.stringify(loaded.notes));
    assert.ok(loaded.notes.some((n) => /\[sandbox\] read_write from project ignored/.test(n.message)), JSON.stringify(loaded.notes));
    box.write(box.localFile, '[sandbox]\nmode = "off"\n');
    assert.equal((await loadConfig({ root: box.root, home: box.home })).config.sandbox.mode, undefined);
    box.write(box.globalFile, '[sandbox]\nmode = "off"\n');
    assert.equal((await loadConfig({ root: box.root, home: box.home })).config.sandbox.mode, 'off', 'the user may');
  });

  it('unset: no mode (the engine default, auto, applies) and empty lists', async () => {
    const loaded = await loadConfig({ root: box.root, home: box.home });
    assert.deepEqual(loaded.config.sandbox, { hide: [], read_write: [], allow_hosts: [] });
  });

  it('allow_hosts: the user\'s layer sets it; a repository\'s layer cannot open a cut network, trusted or not', async () => {
    box.write(box.globalFile, '[sandbox]\nallow_hosts = ["127.0.0.1:4000"]\n');
    box.write(box.projectFile, '[sandbox]\nallow_hosts = ["127.0.0.1:22"]\n');
    const trusted = await loadConfig({ root: box.root, home: box.home });
    assert.deepEqual(trusted.config.sandbox.allow_hosts, ['127.0.0.1:4000']);
    assert.equal(trusted.provenance.sandbox.allow_hosts, 'global');
    assert.ok(trusted.notes.some((n) => /\[sandbox\] allow_hosts from project ignored/.test(n.message)), JSON.stringify(trusted.notes));
    const untrusted = await loadConfig({ root: box.root, home: box.home, trusted: false });
    assert.deepEqual(untrusted.config.sandbox.allow_hosts, ['127.0.0.1:4000']);
    const said = [...untrusted.ignored, ...untrusted.notes.map((n) => n.message)];
    assert.ok(said.some((line) => /allow_hosts/.test(line)), JSON.stringify(said));
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
    assert.deepEqual(untrusted.config.sandbox, { mode: 'auto', hide: ['/srv/secret'], read_write: [], allow_hosts: [] });
    assert.ok([...untrusted.ignored, ...untrusted.notes.map((n) => n.message)].some((line) => line.includes('[sandbox]')));
    box.write(box.projectFile, '[sandbox]\nmode = "required"\n');
    assert.equal((await loadConfig({ root: box.root, home: box.home, trusted: false })).config.sandbox.mode, 'required');
  });
});

import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ConfigEditError, ConfigError, REWRITE_HEADER, loadConfig, removeRole, setModel, setPolicyValue, unsetModel, upsertAgentEntry, upsertRole } from '../../src/config';
import { rejects, sandbox, type Sandbox } from './helpers';

describe('config writers', () => {
  let box: Sandbox;
  beforeEach(() => {
    box = sandbox();
  });
  afterEach(() => box.cleanup());

  it('edits one key in place: comments and unrelated keys survive, and the file loads back', async () => {
    const original = '# Team policy: keep codex first.\n[policy]\n# never gemini here\ndenied = ["gemini"] # decided 2026-01\nmax_parallel = 2\n\n[models]\ncodex = "gpt-5" # fast\n';
    box.write(box.projectFile, original);
    const result = await setPolicyValue(box.projectFile, 'denied', ['gemini', 'x']);
    assert.equal(result.preserved, true);
    const text = box.read(box.projectFile);
    assert.equal(text, original.replace('denied = ["gemini"]', 'denied = [ "gemini", "x" ]'));
    const loaded = await loadConfig({ root: box.root, home: box.home });
    assert.deepEqual(loaded.config.policy.denied, ['gemini', 'x']);
    assert.equal(loaded.config.policy.max_parallel, 2);
  });

  it('touches only the target layer and writes only what it names (no flattening of the merge)', async () => {
    box.write(box.globalFile, '[policy]\nmax_parallel = 7\n');
    box.write(box.projectFile, '');
    await setPolicyValue(box.localFile, 'max_depth', 3);
    assert.equal(box.read(box.localFile), '\n[policy]\nmax_depth = 3\n'.replace(/^\n/, ''));
    assert.equal(box.read(box.globalFile), '[policy]\nmax_parallel = 7\n');
    assert.equal(box.read(box.projectFile), '');
  });

  it('rewrites the file whole (and says so) when the table uses a form it does not edit in place', async () => {
    box.write(box.projectFile, '# gone after the rewrite\npolicy = { denied = ["a"], max_depth = 1 }\n');
    const result = await setPolicyValue(box.projectFile, 'denied', ['a', 'b']);
    assert.equal(result.preserved, false);
    const text = box.read(box.projectFile);
    assert.ok(text.startsWith(REWRITE_HEADER));
    const { config } = await loadConfig({ root: box.root, home: box.home });
    assert.deepEqual(config.policy.denied, ['a', 'b']);
    assert.equal(config.policy.max_depth, 1);
  });

  it('refuses to write a value the schema refuses, and to edit a file that does not load', async () => {
    box.write(box.projectFile, '# keep\n');
    const bad = await rejects(setPolicyValue(box.projectFile, 'max_parallel', 0));
    assert.ok(bad instanceof ConfigError);
    assert.equal(box.read(box.projectFile), '# keep\n');
    box.write(box.projectFile, '[policy]\nmax_paralel = 1\n');
    const broken = await rejects(setPolicyValue(box.projectFile, 'max_depth', 1));
    assert.ok(broken instanceof ConfigError);
    assert.match(broken.message, /max_paralel/);
  });

  it('sets and unsets models; unsetting what the file does not declare is refused', async () => {
    box.write(box.localFile, '# mine\n');
    await setModel(box.localFile, 'codex', 'gpt-5');
    await setModel(box.localFile, 'my.agent', 'm1');
    assert.deepEqual((await loadConfig({ root: box.root, home: box.home })).config.models, { codex: 'gpt-5', 'my.agent': 'm1' });
    await unsetModel(box.localFile, 'codex');
    await unsetModel(box.localFile, 'my.agent');
    assert.equal(box.read(box.localFile).trim(), '# mine', 'the emptied table disappears, the comment stays');
    const err = await rejects(unsetModel(box.localFile, 'codex'));
    assert.ok(err instanceof ConfigEditError);
  });

  it('adds, replaces and removes roles and agent entries by key, leaving other items alone', async () => {
    box.write(box.projectFile, '# roles of the team\n[[role]]\nname = "qa"\nagents = ["codex"]\nmode = "read-only"\n\n# the fixer\n[[role]]\nname = "fixer"\nagents = ["claude"]\nmode = "write"\n');
    await upsertRole(box.projectFile, { name: 'qa', agents: ['gemini'], mode: 'read-only', timeout: '5m' });
    let roles = (await loadConfig({ root: box.root, home: box.home })).config.roles;
    assert.deepEqual(roles.find((r) => r.name === 'qa'), { name: 'qa', agents: ['gemini'], mode: 'read-only', purpose: '', timeout_ms: 300_000 });
    assert.ok(roles.find((r) => r.name === 'fixer'));
    assert.ok(box.read(box.projectFile).includes('# the fixer'));
    await removeRole(box.projectFile, 'fixer');
    roles = (await loadConfig({ root: box.root, home: box.home })).config.roles;
    assert.equal(roles.find((r) => r.name === 'fixer'), undefined);
    assert.ok(box.read(box.projectFile).startsWith('# roles of the team\n'));
    assert.ok(await rejects(removeRole(box.projectFile, 'fixer')) instanceof ConfigEditError);
    await upsertAgentEntry(box.projectFile, { id: 'mine', bin: 'mine', args: ['{{prompt}}'] });
    assert.deepEqual((await loadConfig({ root: box.root, home: box.home, trusted: true })).config.agents, [{ id: 'mine', bin: 'mine', args: ['{{prompt}}'] }]);
    const invalid = await rejects(upsertAgentEntry(box.projectFile, { id: 'bad', bin: 'b', args: ['{{promt}}'] }));
    assert.ok(invalid instanceof ConfigError);
  });

  it('keeps CRLF line endings of a Windows-edited file', async () => {
    box.write(box.projectFile, '# win\r\n[policy]\r\nmax_depth = 1\r\n');
    const result = await setPolicyValue(box.projectFile, 'denied', ['x']);
    assert.equal(result.preserved, true);
    assert.equal(box.read(box.projectFile), '# win\r\n[policy]\r\nmax_depth = 1\r\ndenied = [ "x" ]\r\n');
  });

  it('writes atomically: no temporary file is left next to the config', async () => {
    await setPolicyValue(box.projectFile, 'max_depth', 1);
    await setPolicyValue(box.projectFile, 'max_depth', 2);
    assert.deepEqual(fs.readdirSync(path.dirname(box.projectFile)), ['config.toml']);
  });
});

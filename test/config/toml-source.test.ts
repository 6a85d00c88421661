import { strict as assert } from 'node:assert';
import { parse } from 'smol-toml';
import { appendArrayItem, locateKey, removeArrayItem, removeTableKey, setTableKey } from '../../src/config/toml-source';

const DOC = `# header comment
title = "x" # root key

[policy] # the policy
# who may run
allowed = [
  "codex", # the main one
  "gemini",
]
denied = ["x"]   # nope
"quoted.key" = 1
note = """
[not a header]
key = "not a key"
"""

[[role]]
name = "a"
agents = []
mode = "write"

[[role]]
name = "b"
agents = ["codex"]
mode = "read-only"
`;

describe('config TOML source: locating keys', () => {
  it('finds keys, headers, array-of-table items and quoted keys by line', () => {
    assert.equal(locateKey(DOC, ['title']), 2);
    assert.equal(locateKey(DOC, ['policy']), 4);
    assert.equal(locateKey(DOC, ['policy', 'allowed']), 6);
    assert.equal(locateKey(DOC, ['policy', 'allowed', 1]), 6);
    assert.equal(locateKey(DOC, ['policy', 'denied']), 10);
    assert.equal(locateKey(DOC, ['policy', 'quoted.key']), 11);
    assert.equal(locateKey(DOC, ['policy', 'unknown']), 4, 'falls back to the table header');
    assert.equal(locateKey(DOC, ['role', 1]), 22);
    assert.equal(locateKey(DOC, ['role', 1, 'mode']), 25);
    assert.equal(locateKey(DOC, ['role', 0, 'mode']), 20);
    assert.equal(locateKey(DOC, ['nothing']), undefined);
  });

  it('is not fooled by a header or a key inside a multi-line string', () => {
    assert.equal(locateKey(DOC, ['key']), undefined);
    assert.equal(locateKey(DOC, ['not a header']), undefined);
  });

  it('finds dotted keys', () => {
    assert.equal(locateKey('a = 1\npolicy.max_depth = 3\n', ['policy', 'max_depth']), 2);
  });
});

describe('config TOML source: editing in place', () => {
  it('replaces a multi-line value, keeping comments around it and the trailing comment of a one-line value', () => {
    const out = setTableKey(DOC, 'policy', 'allowed', ['claude'])!;
    assert.ok(out.includes('# who may run\nallowed = [ "claude" ]\ndenied'));
    assert.ok(out.includes('# header comment'));
    assert.deepEqual((parse(out) as any).policy.allowed, ['claude']);
    const out2 = setTableKey(out, 'policy', 'denied', ['x', 'y'])!;
    assert.ok(out2.includes('denied = [ "x", "y" ]   # nope'));
    assert.equal((parse(out2) as any).policy.note, '[not a header]\nkey = "not a key"\n');
  });

  it('inserts a missing key after the last key of its table, and creates a missing table at the end', () => {
    const out = setTableKey(DOC, 'policy', 'max_depth', 3)!;
    assert.ok(out.includes('"""\nmax_depth = 3\n\n[[role]]'));
    const created = setTableKey('# only a comment\n', 'models', 'my.agent', 'gpt')!;
    assert.equal(created, '# only a comment\n\n[models]\n"my.agent" = "gpt"\n');
    assert.deepEqual(JSON.parse(JSON.stringify(parse(created))), { models: { 'my.agent': 'gpt' } });
  });

  it('declines forms it does not edit (inline tables, dotted keys) so the caller can rewrite', () => {
    assert.equal(setTableKey('policy = { denied = [] }\n', 'policy', 'denied', ['x']), undefined);
    assert.equal(setTableKey('policy.denied = []\n', 'policy', 'denied', ['x']), undefined);
  });

  it('removes a key', () => {
    const out = removeTableKey(DOC, 'policy', 'allowed')!;
    assert.equal((parse(out) as any).policy.allowed, undefined);
    assert.ok(out.includes('# who may run\ndenied'));
  });

  it('removes one [[item]] and appends another', () => {
    const without = removeArrayItem(DOC, 'role', 0)!;
    assert.deepEqual(
      (parse(without) as any).role.map((r: any) => r.name),
      ['b'],
    );
    const appended = appendArrayItem(without, 'role', { name: 'c', agents: ['x'], mode: 'write' });
    assert.deepEqual(
      (parse(appended) as any).role.map((r: any) => r.name),
      ['b', 'c'],
    );
    assert.ok(appended.startsWith('# header comment'));
  });
});

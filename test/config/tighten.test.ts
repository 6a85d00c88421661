import { strict as assert } from 'node:assert';
import { DEFAULT_POLICY, tightenKey, type PolicyConfig } from '../../src/config';

/** The tighten-only rules one key at a time (the layered load is covered in layers.test.ts and test/reliability). */
describe('config: a repository layer only tightens the user\'s policy (tightenKey)', () => {
  const base = (over: Partial<PolicyConfig> = {}): PolicyConfig => ({ ...DEFAULT_POLICY, ...over });

  it('denied is a union: a repository adds denials, never removes the user\'s', () => {
    assert.deepEqual(tightenKey('denied', base({ denied: ['codex'] }), ['gemini'], 'project').value, ['codex', 'gemini']);
    const removed = tightenKey('denied', base({ denied: ['codex'] }), [], 'local');
    assert.deepEqual(removed.value, ['codex']);
    assert.match(removed.note!, /config\.local\.toml does not list codex/);
    assert.equal(tightenKey('denied', base(), [], 'project').note, undefined, 'nothing to keep, nothing to say');
  });

  it('allowed narrows a user allow-list, is free under none, and an empty or disjoint list never widens one', () => {
    assert.deepEqual(tightenKey('allowed', base(), ['claude'], 'project').value, ['claude'], 'no user list: any narrowing is tighter');
    assert.deepEqual(tightenKey('allowed', base({ allowed: ['codex', 'claude'] }), ['claude', 'evil'], 'project').value, ['claude']);
    assert.deepEqual(tightenKey('allowed', base({ allowed: ['codex'] }), [], 'project').value, ['codex'], '[] would mean every agent');
    assert.deepEqual(tightenKey('allowed', base({ allowed: ['codex'] }), ['evil'], 'project').value, ['codex'], 'an empty intersection would mean every agent');
  });

  it('booleans only true → false, max_depth only down, env only inherit → minimal, permissions only stricter', () => {
    assert.equal(tightenKey('allow_inplace_write', base(), true, 'project').value, false);
    assert.equal(tightenKey('allow_inplace_write', base({ allow_inplace_write: true }), false, 'project').value, false);
    assert.equal(tightenKey('allow_recursion', base(), true, 'project').value, false);
    assert.equal(tightenKey('max_depth', base({ max_depth: 2 }), 99, 'project').value, 2);
    assert.equal(tightenKey('max_depth', base({ max_depth: 2 }), 1, 'project').value, 1);
    assert.equal(tightenKey('env', base({ env: 'minimal' }), 'inherit', 'project').value, 'minimal');
    assert.equal(tightenKey('env', base({ env: 'inherit' }), 'minimal', 'project').value, 'minimal');
    assert.equal(tightenKey('permissions', base({ permissions: 'ask' }), 'allow-in-worktree', 'project').value, 'ask');
    assert.equal(tightenKey('permissions', base({ permissions: 'ask' }), 'deny', 'project').value, 'deny');
    assert.equal(tightenKey('permissions', base({ permissions: 'allow-in-worktree' }), 'ask', 'project').value, 'ask');
  });

  it('env_allow adds no name to a minimal environment (a prefix covers its names, not a wider prefix)', () => {
    const minimal = base({ env: 'minimal', env_allow: ['AWS_*', 'HTTPS_PROXY'] });
    const asked = tightenKey('env_allow', minimal, ['AWS_PROFILE', 'HTTPS_PROXY', 'A*', 'GITHUB_TOKEN'], 'project');
    assert.deepEqual(asked.value, ['AWS_PROFILE', 'HTTPS_PROXY']);
    assert.match(asked.note!, /adds A\*, GITHUB_TOKEN/);
    assert.match(asked.note!, /caesar policy set env_allow 'AWS_\*,HTTPS_PROXY,A\*,GITHUB_TOKEN' --global/, 'the command is quoted for a shell');
    assert.deepEqual(tightenKey('env_allow', base({ env: 'inherit' }), ['X'], 'project').value, ['X'], 'under inherit every name passes already');
  });

  it('leaves the other keys to the repository', () => {
    assert.equal(tightenKey('max_parallel', base(), 9, 'project').value, 9);
    assert.equal(tightenKey('default_isolation', base(), 'inplace', 'project').value, 'inplace');
  });
});

import { strict as assert } from 'node:assert';
import { DEFAULT_POLICY, allowlistWarning, checkPolicy, nextDelegationDepth, type PolicyConfig } from '../../src/config';

const policy = (over: Partial<PolicyConfig> = {}): PolicyConfig => ({ ...DEFAULT_POLICY, ...over });

describe('config policy: the four rules', () => {
  it('allows any non-recursive agent by default', () => {
    assert.equal(checkPolicy(policy(), 'codex', { depth: 1 }), undefined);
  });

  it('refuses denied agents first, and denied beats allowed', () => {
    const refusal = checkPolicy(policy({ denied: ['codex'], allowed: ['codex'] }), 'codex', { depth: 99, provenance: { denied: 'global' } });
    assert.equal(refusal?.rule, 'denied');
    assert.equal(refusal?.remedy, 'caesar agents enable codex --global');
    assert.match(refusal!.reason, /denied list in the global config, ~\/\.config\/caesar\/config\.toml/, 'names the file');
  });

  it('refuses agents outside a non-empty allowlist, with the remedy targeting the declaring layer', () => {
    const refusal = checkPolicy(policy({ allowed: ['gemini'] }), 'codex', { provenance: { allowed: 'local' } });
    assert.equal(refusal?.rule, 'allowlist');
    assert.equal(refusal?.remedy, 'caesar policy allow codex --local');
    assert.match(refusal!.reason, /set in the local config, \.caesar\/config\.local\.toml/, 'names the file');
    assert.equal(checkPolicy(policy({ allowed: ['gemini'] }), 'gemini'), undefined);
    const projectRemedy = checkPolicy(policy({ allowed: ['gemini'] }), 'codex', { provenance: { allowed: 'project' } });
    assert.equal(projectRemedy?.remedy, 'caesar policy allow codex');
  });

  it('counts a top-level delegation as depth 1 and refuses only beyond max_depth (the reference refused at equality)', () => {
    assert.equal(checkPolicy(policy({ max_depth: 2 }), 'codex', { depth: 1 }), undefined);
    assert.equal(checkPolicy(policy({ max_depth: 2 }), 'codex', { depth: 2 }), undefined, 'one nested level is allowed with the default');
    const refusal = checkPolicy(policy({ max_depth: 2 }), 'codex', { depth: 3 });
    assert.equal(refusal?.rule, 'depth');
    assert.match(refusal!.reason, /depth 3 and max_depth is 2/);
    // A raise counts only from the user's own layer: a repository's layers can only lower max_depth.
    assert.match(refusal!.remedy, /`caesar policy set max_depth 3 --global` \(sets max_depth in \[policy\] of ~\/\.config\/caesar\/config\.toml\)/);
    const lowered = checkPolicy(policy({ max_depth: 1 }), 'codex', { depth: 2, provenance: { max_depth: 'project' } });
    assert.match(lowered!.remedy, /--global` \(sets max_depth in \[policy\] of ~\/\.config\/caesar\/config\.toml, and remove it from \[policy\] of \.caesar\/config\.toml/);
    assert.equal(checkPolicy(policy({ max_depth: 0 }), 'codex', { depth: 1 })?.rule, 'depth', 'max_depth 0 forbids delegation');
  });

  it('ignores depth in the per-agent view (no depth given)', () => {
    assert.equal(checkPolicy(policy({ max_depth: 0 }), 'codex'), undefined);
  });

  it('refuses an agent delegating to itself from inside its task unless allowed, after the other rules', () => {
    assert.equal(checkPolicy(policy(), 'claude', { depth: 1 }), undefined, 'claude at the top level is not recursion');
    const inside = { depth: 2, parentAgent: 'claude' };
    assert.equal(checkPolicy(policy(), 'claude', inside)?.rule, 'recursion');
    assert.equal(checkPolicy(policy(), 'codex', inside), undefined, 'claude → codex is a chain, not recursion');
    assert.match(checkPolicy(policy(), 'claude', inside)!.remedy, /`caesar policy set allow_recursion true --global` \(sets allow_recursion in \[policy\] of ~\/\.config\/caesar\/config\.toml\)/);
    const fromGlobal = checkPolicy(policy(), 'claude', { ...inside, provenance: { allow_recursion: 'global' } })!.remedy;
    assert.match(fromGlobal, /`caesar policy set allow_recursion true --global` \(sets allow_recursion in \[policy\] of ~\/\.config\/caesar\/config\.toml\)/, 'the layer that decides today');
    assert.equal(checkPolicy(policy({ allow_recursion: true }), 'claude', inside), undefined);
    assert.equal(checkPolicy(policy({ max_depth: 1 }), 'claude', inside)?.rule, 'depth', 'depth comes before recursion');
    assert.equal(checkPolicy(policy({ allowed: ['codex'] }), 'claude', inside)?.rule, 'allowlist', 'allowlist comes before recursion');
  });

  it('warns when an empty allowlist becomes restrictive', () => {
    assert.match(allowlistWarning([], 'codex')!, /only "codex" is allowed/);
    assert.equal(allowlistWarning(['gemini'], 'codex'), undefined);
  });
});

describe('config policy: delegation depth from $CAESAR_DEPTH', () => {
  it('is the parent depth plus one; missing or unreadable means top level', () => {
    assert.equal(nextDelegationDepth({}), 1);
    assert.equal(nextDelegationDepth({ CAESAR_DEPTH: '' }), 1);
    assert.equal(nextDelegationDepth({ CAESAR_DEPTH: 'abc' }), 1, 'NaN is treated as 0');
    assert.equal(nextDelegationDepth({ CAESAR_DEPTH: '-3' }), 1);
    assert.equal(nextDelegationDepth({ CAESAR_DEPTH: '1' }), 2);
    assert.equal(nextDelegationDepth({ CAESAR_DEPTH: '4' }), 5);
  });
});

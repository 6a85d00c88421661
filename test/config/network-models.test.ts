import { strict as assert } from 'node:assert';
import { resolveModel, resolveNetwork, type NetworkCapability } from '../../src/config';

describe('config network tri-state (reference §4.6)', () => {
  const cases: Array<[Parameters<typeof resolveNetwork>[0], NetworkCapability, 'read-only' | 'write', boolean | 'refused', boolean]> = [
    // request, capability, mode, available, warned
    ['off', 'open', 'write', true, true],
    ['off', 'unknown', 'read-only', true, true],
    ['off', 'controllable', 'write', false, false],
    ['off', 'write-only', 'write', false, false],
    ['auto', 'open', 'read-only', true, false],
    ['on', 'open', 'read-only', true, false],
    ['auto', 'controllable', 'read-only', true, false],
    ['on', 'controllable', 'write', true, false],
    ['auto', 'write-only', 'write', true, false],
    ['on', 'write-only', 'write', true, false],
    ['on', 'write-only', 'read-only', 'refused', false],
    ['auto', 'write-only', 'read-only', false, true],
    ['on', 'unknown', 'write', true, true],
    ['auto', 'unknown', 'write', true, false],
  ];
  for (const [request, capability, mode, available, warned] of cases) {
    it(`${request} + ${capability} + ${mode} → ${available}${warned ? ' with a warning' : ''}`, () => {
      const decision = resolveNetwork(request, capability, mode, 'agentx');
      if (available === 'refused') {
        assert.ok('refused' in decision);
        assert.match(decision.refused, /read-only/);
        assert.match(decision.remedy, /write mode with worktree isolation/);
        return;
      }
      assert.ok(!('refused' in decision));
      assert.equal(decision.available, available);
      assert.equal(Boolean(decision.warning), warned);
    });
  }
});

describe('config models: explicit > role > [models] > none', () => {
  const models = { codex: 'from-models', demo: 'demo-model' };
  it('follows the precedence chain', () => {
    assert.deepEqual(resolveModel({ agent: 'codex', agentAcceptsModel: true, explicit: 'x', role: { name: 'r', model: 'y' }, models }), { model: 'x', source: 'explicit' });
    assert.deepEqual(resolveModel({ agent: 'codex', agentAcceptsModel: true, role: { name: 'r', model: 'y' }, models }), { model: 'y', source: 'role' });
    assert.deepEqual(resolveModel({ agent: 'codex', agentAcceptsModel: true, role: { name: 'r' }, models }), { model: 'from-models', source: 'models' });
    assert.deepEqual(resolveModel({ agent: 'gemini', agentAcceptsModel: true, models }), { source: 'none' });
    assert.deepEqual(resolveModel({ agent: 'codex', agentAcceptsModel: true, explicit: '  ', models }), { model: 'from-models', source: 'models' }, 'a blank explicit model is no model');
  });

  it('refuses an explicit model on an agent that cannot take one', () => {
    const decision = resolveModel({ agent: 'demo', agentAcceptsModel: false, explicit: 'big', models });
    assert.ok('refused' in decision);
    assert.match(decision.refused, /"demo" cannot be given a model/);
  });

  it('drops a configured model on such an agent, with a reason naming its source', () => {
    const fromModels = resolveModel({ agent: 'demo', agentAcceptsModel: false, models });
    assert.ok(!('refused' in fromModels));
    assert.equal(fromModels.model, undefined);
    assert.match(fromModels.dropped!.detail, /"demo-model" \(from \[models\] demo\) was not applied/);
    const fromRole = resolveModel({ agent: 'demo', agentAcceptsModel: false, role: { name: 'rev', model: 'm' }, models: {} });
    assert.ok(!('refused' in fromRole));
    assert.match(fromRole.dropped!.detail, /from role "rev"/);
  });
});

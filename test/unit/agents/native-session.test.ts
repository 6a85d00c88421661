import { strict as assert } from 'node:assert';
import { NativeSession } from '../../../src/agents/stream';
import { TaskStateSchema } from '../../../src/protocol';

describe('agents: the CLI\'s own session id (NativeSession)', () => {
  it('takes the first id that looks like one; an id from the stream never becomes an option or a second session', () => {
    const session = new NativeSession();
    for (const hostile of ['--dangerously-skip-permissions', '-x', 'a b', 'a;rm -rf ~', '$(id)', '', 'x'.repeat(129), 42, null, { id: 'x' }]) session.note(hostile);
    assert.equal(session.get(), undefined);
    session.note('ses_dd890394affeobvZiaBCyFop9F');
    session.note('b5a490ca-a758-4aa2-9cce-ea31d9bb5ae0');
    assert.equal(session.get(), 'ses_dd890394affeobvZiaBCyFop9F', 'the first one named wins');
  });

  it('state.json refuses a recorded session id of another shape (a forged record is not argv material)', () => {
    const state = { id: 't_1', status: 'running', agent: 'claude', objective: 'x', mode: 'write', isolation: 'worktree', network: true, timeout_ms: 1, depth: 1, created_at: '2026-01-01T00:00:00Z', workspace: '/w', root: '/w' };
    assert.ok(TaskStateSchema.safeParse({ ...state, agent_session: { id: 'b5a490ca-a758-4aa2-9cce-ea31d9bb5ae0' } }).success);
    assert.equal(TaskStateSchema.safeParse({ ...state, agent_session: { id: '--resume=evil' } }).success, false);
  });
});

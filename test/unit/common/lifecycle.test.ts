import * as assert from 'node:assert/strict';
import { taskLifecycle, type LifecycleRecords } from '../../../src/common/lifecycle';
import { actionsContextValue, agentStepStillOpen, nextActions, type TaskActionId } from '../../../src/common/next-actions';

/** A finished worktree task that changed `files` files: the records every case below starts from. */
function records(over: Partial<LifecycleRecords> = {}, files = 2): LifecycleRecords {
  return {
    observed: 'succeeded',
    state: { isolation: 'worktree', worktree: '/repo/.caesar/wt/t_1' },
    pendingQuestions: [],
    result: {
      diff: {
        is_empty: files === 0,
        files: Array.from({ length: files }, (_, i) => ({ path: `f${i}.txt`, action: 'created' as const, additions: 1, deletions: 0, binary: false })),
      },
    },
    ...over,
  };
}

const ids = (r: LifecycleRecords): TaskActionId[] => nextActions(taskLifecycle(r)).map((a) => a.id);

describe('taskLifecycle and nextActions: one lifecycle for every surface', () => {
  it('a running task can only be cancelled; one waiting for an answer is answered first', () => {
    for (const observed of ['pending', 'queued', 'running'] as const) {
      const life = taskLifecycle(records({ observed, result: undefined }));
      assert.equal(life.phase, observed === 'pending' ? 'starting' : observed);
      assert.ok(life.active);
      assert.deepEqual(ids(records({ observed, result: undefined })), ['cancel']);
    }
    const waiting = records({ observed: 'running', pendingQuestions: [{}], result: undefined });
    assert.equal(taskLifecycle(waiting).phase, 'waiting');
    assert.equal(taskLifecycle(waiting).label, 'waiting for an answer');
    assert.deepEqual(ids(waiting), ['answer', 'cancel']);
    assert.equal(taskLifecycle(records({ observed: 'pending', state: { isolation: 'worktree', phase: 'waiting for a slot' } })).label, 'waiting for a slot');
  });

  it('finished with changes in its worktree: review, apply, land or discard, whatever the run status', () => {
    for (const observed of ['succeeded', 'failed', 'cancelled', 'timed_out'] as const) {
      const life = taskLifecycle(records({ observed }));
      assert.equal(life.phase, 'review');
      assert.equal(life.label, `${observed.replace('_', ' ')} · changes to review`);
      assert.deepEqual(ids(records({ observed })), ['review', 'apply', 'applySelected', 'land', 'discard', 'continue', 'rerun', 'compare', 'remove']);
    }
    const primary = nextActions(taskLifecycle(records())).filter((a) => a.primary).map((a) => a.id);
    assert.deepEqual(primary, ['review', 'apply', 'discard']);
  });

  it('after Apply (or Land) nothing offers Apply again; the worktree can still be reviewed and removed', () => {
    const applied = records({ applied: { files: ['f0.txt', 'f1.txt'] } });
    const life = taskLifecycle(applied);
    assert.equal(life.phase, 'applied');
    assert.equal(life.decision, 'applied');
    const actions = nextActions(life);
    assert.deepEqual(actions.map((a) => a.id), ['review', 'discard', 'continue', 'rerun', 'compare', 'remove']);
    assert.equal(actions.find((a) => a.id === 'discard')!.label, 'Remove Worktree');
    // Its worktree removed since: only another run, a comparison or the record's removal are left.
    assert.deepEqual(ids({ ...applied, discarded: { by: 'discard' } }), ['rerun', 'compare', 'remove']);
  });

  it('a partial apply leaves the rest to apply, not the whole again; land is no longer open', () => {
    const partly = records({ applied: { files: ['f0.txt'] } }, 3);
    const life = taskLifecycle(partly);
    assert.equal(life.phase, 'partly_applied');
    assert.equal(life.label, 'applied 1 of 3 files');
    const actions = nextActions(life);
    assert.equal(actions.find((a) => a.id === 'apply')!.label, 'Apply the Rest');
    assert.ok(!actions.some((a) => a.id === 'land'));
  });

  it('after Discard nothing offers Review, Apply, Land or Continue', () => {
    for (const discarded of [{ by: 'discard' as const }, { by: 'gc' as const, reason: 'modified' }]) {
      const life = taskLifecycle(records({ discarded }));
      assert.equal(life.phase, 'discarded');
      assert.equal(life.worktree, false);
      assert.deepEqual(ids(records({ discarded })), ['rerun', 'compare', 'remove']);
    }
  });

  it('no change, a worktree collected as empty, a task run in place, a lost and an unverified one', () => {
    const empty = records({ observed: 'failed' }, 0);
    assert.equal(taskLifecycle(empty).phase, 'no_change');
    assert.equal(taskLifecycle(empty).label, 'failed · no change');
    assert.deepEqual(ids(empty), ['discard', 'continue', 'rerun', 'compare', 'remove']);
    assert.equal(nextActions(taskLifecycle(empty))[0]!.label, 'Remove Worktree');

    const collected = records({ discarded: { by: 'gc', reason: 'clean' } });
    assert.equal(taskLifecycle(collected).phase, 'closed');
    assert.deepEqual(ids(collected), ['rerun', 'compare', 'remove']);

    const inPlace = records({ state: { isolation: 'inplace' } });
    assert.equal(taskLifecycle(inPlace).phase, 'in_workspace');
    assert.deepEqual(ids(inPlace), ['continue', 'rerun', 'compare', 'remove']);

    const lost = records({ observed: 'lost', result: undefined });
    assert.equal(taskLifecycle(lost).phase, 'lost');
    assert.deepEqual(ids(lost), ['discard', 'continue', 'rerun', 'compare', 'remove']);

    const unverified = records({ observed: 'unverified' });
    assert.equal(taskLifecycle(unverified).phase, 'unverified');
    assert.deepEqual(ids(unverified), ['remove']);
  });

  it('the tree context value lists the action ids between semicolons, so `;apply;` matches Apply alone', () => {
    const life = taskLifecycle(records());
    const value = actionsContextValue('task', life, nextActions(life));
    assert.equal(value, 'task:review;review;apply;applySelected;land;discard;continue;rerun;compare;remove;');
    assert.match(value, /;apply;/);
    const applied = taskLifecycle(records({ applied: { files: ['f0.txt', 'f1.txt'] } }));
    assert.doesNotMatch(actionsContextValue('task', applied, nextActions(applied)), /;apply;|;applySelected;|;land;/);
  });

  it("the agent's own next steps about applying read as done once the work was applied or discarded", () => {
    const open = nextActions(taskLifecycle(records()));
    const applied = nextActions(taskLifecycle(records({ applied: { files: ['f0.txt', 'f1.txt'] } })));
    assert.ok(agentStepStillOpen('Review the diff, then apply it', open));
    assert.ok(!agentStepStillOpen('Review the diff, then apply it', applied));
    assert.ok(!agentStepStillOpen('Run `caesar apply t_1`.', applied));
    assert.ok(agentStepStillOpen('Run the database migrations', applied), 'a step about anything else stays');
  });
});

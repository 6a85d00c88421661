import * as assert from 'node:assert/strict';
import { taskTitle } from '../../../src/common/format';

describe('taskTitle: how dialogs, toasts and pickers name a task', () => {
  it('is the objective on one line and the agent, never the id', () => {
    assert.equal(taskTitle({ objective: 'Fix the\n  login   bug', agent: 'codex' }), '“Fix the login bug” (codex)');
  });

  it('cuts a long objective with an ellipsis at the given length', () => {
    const title = taskTitle({ objective: 'x'.repeat(100), agent: 'demo' }, 20);
    assert.equal(title, `“${'x'.repeat(19)}…” (demo)`);
  });
});

import { strict as assert } from 'node:assert';
import { parseEvent, type ProtocolEvent } from '../../../src/protocol';
// activity.ts is the tree's fold: plain TypeScript with no vscode import, so it is tested here without an editor.
import { TaskActivity } from '../../../src/extension/tasks/activity';

let seq = 0;
function ev(fields: Record<string, unknown>, at: string): ProtocolEvent {
  return parseEvent({ protocol: 'caesar.event/v1', seq: seq++, at, task_id: 't', ...fields });
}

describe('extension: the Tasks tree activity fold', () => {
  beforeEach(() => (seq = 0));

  it('pairs a start with its end by call id and times it', () => {
    const activity = new TaskActivity();
    activity.apply([
      ev({ type: 'tool_use', tool: 'bash', id: 'c1', input_summary: 'npm test', status: 'started' }, '2026-11-29T10:00:00.000Z'),
      ev({ type: 'tool_use', tool: '', id: 'c1', status: 'succeeded' }, '2026-11-29T10:00:04.000Z'),
    ]);
    assert.equal(activity.toolCalls.length, 1);
    const [call] = activity.toolCalls;
    assert.equal(call!.status, 'succeeded');
    assert.equal(call!.tool, 'bash', 'an anonymous end keeps the name of its start');
    assert.equal(call!.endedAt! - call!.startedAt, 4000);
  });

  it('counts a tool reported only at its end (opencode) from its real start time', () => {
    const activity = new TaskActivity();
    activity.apply([
      ev({ type: 'tool_use', tool: 'bash', id: 'oc1', input_summary: 'ls', status: 'started', started_at: '2026-11-29T10:00:00.000Z' }, '2026-11-29T10:00:07.000Z'),
      ev({ type: 'tool_use', tool: 'bash', id: 'oc1', input_summary: 'ls', status: 'succeeded' }, '2026-11-29T10:00:07.000Z'),
    ]);
    const [call] = activity.toolCalls;
    assert.equal(call!.endedAt! - call!.startedAt, 7000);
  });

  it('marks calls still open when the task finishes as failed, so no spinner spins forever', () => {
    const activity = new TaskActivity();
    activity.apply([
      ev({ type: 'tool_use', tool: 'bash', id: 'c1', status: 'started' }, '2026-11-29T10:00:00.000Z'),
      ev({ type: 'finished', status: 'failed' }, '2026-11-29T10:00:01.000Z'),
    ]);
    assert.equal(activity.toolCalls[0]!.status, 'failed');
    assert.equal(activity.finished, true);
  });

  it('ignores a re-delivered event (a follower that restarted)', () => {
    const activity = new TaskActivity();
    const first = ev({ type: 'file_changed', path: 'a.txt', action: 'created' }, '2026-11-29T10:00:00.000Z');
    activity.apply([first]);
    activity.apply([first]);
    assert.equal(activity.eventCount, 1);
  });
});

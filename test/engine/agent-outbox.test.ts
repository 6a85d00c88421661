import { strict as assert } from 'node:assert';
import { appendFileSync, mkdtempSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { AgentOutbox, outboxLineDraft } from '../../src/engine/run/agent-outbox';
import type { EventDraft } from '../../src/protocol';
import { waitFor } from '../support/wait';

const line = (fields: Record<string, unknown>) => JSON.stringify({ protocol: 'caesar.event/v1', ...fields });

describe('the agent outbox (an OACP agent\'s CAESAR_EVENTS_PATH, relayed by the supervisor)', () => {
  it('takes a valid event as a draft without the agent\'s protocol, seq, at and task_id', () => {
    assert.deepEqual(outboxLineDraft(line({ seq: 9, at: 'whenever', task_id: 'other', type: 'message', text: 'hi' })), {
      ok: true,
      draft: { type: 'message', text: 'hi' },
    });
  });

  it('refuses what is not an event an agent may emit', () => {
    const refused = [
      'not json',
      '[1]',
      JSON.stringify({ protocol: 'other/v1', type: 'message', text: 'x' }),
      line({ type: 'finished', status: 'success' }),
      line({ type: 'started', agent: 'x' }),
      line({ type: 'question', id: 'q', question: 'x' }),
      line({ type: 'message' }),
      line({ type: 'progress', message: 'x', pct: 300 }),
      line({ type: 'message', text: 'x'.repeat(1024 * 1024 + 1) }),
    ];
    for (const text of refused) assert.equal(outboxLineDraft(text).ok, false, text.slice(0, 80));
  });

  it('follows appends, holds a partial line, relays the last line without newline on drain, logs refusals', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'caesar-outbox-'));
    const file = path.join(dir, 'agent-events.jsonl');
    // Whatever was planted there before the run is replaced by an empty regular file.
    symlinkSync('/dev/zero', file);
    const relayed: EventDraft[] = [];
    const log: string[] = [];
    const outbox = new AgentOutbox(file, (drafts) => relayed.push(...drafts), (m) => log.push(m), 20);
    await outbox.start();
    const two = line({ type: 'message', text: 'two' });
    appendFileSync(file, `${line({ type: 'message', text: 'one' })}\nbroken\n${two.slice(0, 10)}`);
    await waitFor('the first complete line relayed', () => relayed.length >= 1, 15_000, 10);
    assert.deepEqual(relayed, [{ type: 'message', text: 'one' }], 'the partial line waits for its end');
    appendFileSync(file, `${two.slice(10)}\n${line({ type: 'progress', message: 'last' })}`);
    await outbox.drain();
    assert.deepEqual(relayed.map((d) => (d.type === 'message' || d.type === 'progress' ? ('text' in d ? d.text : d.message) : d.type)), ['one', 'two', 'last']);
    assert.equal(outbox.relayed, 3);
    assert.equal(outbox.rejected, 1);
    assert.deepEqual(log, ['agent outbox: line refused (not JSON)']);
  });
});

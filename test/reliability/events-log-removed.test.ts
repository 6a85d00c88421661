import { strict as assert } from 'node:assert';
import { mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { EventsWriter } from '../../src/engine/run/events-writer';
import { EventSchema, taskPaths, type ProtocolEvent } from '../../src/protocol';
import { makeRepo, waitForFinished } from '../engine/runtime/helpers';
import { startHostile } from './helpers';

/*
 * events.jsonl sits where an agent can reach it. Removing it, renaming it away or forging another file at its name
 * must not lose what was written: the one writer notices before its next write and puts the whole log back.
 */

function eventsOf(file: string): ProtocolEvent[] {
  const lines = readFileSync(file, 'utf8').split('\n');
  assert.equal(lines.pop(), '', 'the log ends with a newline');
  return lines.map((line) => EventSchema.parse(JSON.parse(line)));
}

function messages(events: ProtocolEvent[]): string[] {
  return events.flatMap((e) => (e.type === 'message' ? [e.text] : []));
}

describe('reliability: events.jsonl removed or replaced during the run', () => {
  it('the writer puts the whole log back after a removal, a rename and a forged file, and numbering goes on', () => {
    const file = path.join(mkdtempSync(path.join(tmpdir(), 'caesar-ew-gone-')), 'events.jsonl');
    const notes: string[] = [];
    // The name checked before every write here (0 ms); a supervisor checks at most every 100 ms and before `finished`.
    const writer = new EventsWriter(file, 't_1', (note) => notes.push(note), 0, 0);
    writer.append({ type: 'message', text: 'one' });
    rmSync(file);
    writer.append({ type: 'message', text: 'two' });
    renameSync(file, `${file}.moved`);
    writer.append({ type: 'message', text: 'three' });
    rmSync(file);
    writeFileSync(file, '{"forged":true}\n'); // a new file at the name (writing into ours in place is not covered)
    writer.append({ type: 'message', text: 'four' });
    writer.finish({ type: 'finished', status: 'success', summary: 'done' });

    const events = eventsOf(file);
    assert.deepEqual(messages(events), ['one', 'two', 'three', 'four']);
    assert.deepEqual(events.map((e) => e.seq), [0, 1, 2, 3, 4]);
    assert.equal(events.at(-1)?.type, 'finished');
    assert.equal(writer.restored, 3);
    assert.equal(notes.length, 3);
    assert.match(notes[0]!, /events\.jsonl was removed or replaced during the run: put back whole/);
    assert.deepEqual(messages(eventsOf(`${file}.moved`)), ['one', 'two'], 'the renamed copy is left as it was, no longer written');
  });

  it('between two checks nothing is lost either: the closing event checks the name and the copy holds it all', () => {
    const file = path.join(mkdtempSync(path.join(tmpdir(), 'caesar-ew-gone-')), 'events.jsonl');
    const writer = new EventsWriter(file, 't_1', () => undefined, 0, 60_000);
    writer.append({ type: 'message', text: 'one' });
    rmSync(file);
    writer.append({ type: 'message', text: 'two' }); // within the interval: written to the removed file
    writer.finish({ type: 'finished', status: 'success', summary: 'done' });
    assert.deepEqual(eventsOf(file).map((e) => e.type), ['message', 'message', 'finished']);
    assert.equal(writer.restored, 1);
  });

  for (const how of ['remove', 'replace'] as const) {
    it(`a real agent that ${how === 'remove' ? 'removes' : 'renames away and forges'} events.jsonl mid-run: every event is in the log, in order`, async () => {
      const repo = makeRepo();
      // Unconfined on purpose: sandboxed, events.jsonl is read-only to the agent, which cannot remove or replace it;
      // this is the supervisor's own repair, which protects a task that runs without the sandbox.
      const { id } = await startHostile(repo, { mode: 'remove-events-log', how, before: 3, after: 3 }, { sandbox: { mode: 'off' } });
      const done = await waitForFinished(repo, id);
      assert.equal(done.state.status, 'succeeded', done.state.error);
      assert.equal(done.badLines, 0, 'no forged line is left in the log');
      const events = done.events;
      assert.deepEqual(messages(events), ['message 0', 'message 1', 'message 2', 'message 3', 'message 4', 'message 5']);
      assert.deepEqual(events.map((e) => e.seq), events.map((_e, i) => i), 'seq runs from 0 without a gap');
      assert.equal(events[0]?.type, 'started');
      assert.equal(events.at(-1)?.type, 'finished');
      assert.match(readFileSync(taskPaths(repo, id).supervisorLog, 'utf8'), /events\.jsonl was removed or replaced during the run: put back whole/);
    });
  }
});

import { strict as assert } from 'node:assert';
import { ProtocolError, UnsupportedVersionError, parseTask, readTaskText } from '../../../src/protocol';
import { SPEC_TASK } from './fixtures';

const minimal = {
  protocol: 'caesar.task/v1',
  id: 't_1',
  created_at: '2026-08-09T10:00:00.000Z',
  agent: 'demo',
  objective: 'Do it',
  mode: 'write',
  isolation: 'inplace',
  workspace: '/w',
  deadline_ms: 1000,
  report_path: '/w/r.json',
  events_path: '/w/e.jsonl',
};

describe('protocol: caesar.task/v1', () => {
  it('round-trips the spec example unchanged', () => {
    const task = parseTask(SPEC_TASK);
    assert.deepEqual(task, SPEC_TASK);
    assert.deepEqual(parseTask(JSON.parse(JSON.stringify(task))), task);
  });

  it('fills every default of a minimal task', () => {
    const task = parseTask(minimal);
    assert.equal(task.context, '');
    assert.deepEqual(task.constraints, []);
    assert.deepEqual(task.acceptance_criteria, []);
    assert.equal(task.network, true, 'a task written before `network` existed reads as network available');
    assert.equal(task.depth, 0);
    assert.equal(task.role, undefined);
    assert.equal(task.base_ref, undefined);
    assert.equal(task.channel, undefined);
  });

  it('fills the channel defaults', () => {
    const task = parseTask({ ...minimal, channel: { transport: 'mcp-stdio', command: 'node' } });
    assert.deepEqual(task.channel, { transport: 'mcp-stdio', command: 'node', args: [], server_name: 'caesar' });
  });

  it('strips unknown keys (the schema is not strict)', () => {
    const task = parseTask({ ...minimal, extra: 1 }) as Record<string, unknown>;
    assert.equal('extra' in task, false);
  });

  for (const [field, value, why] of [
    ['objective', '', 'empty objective'],
    ['mode', 'read-write', 'unknown mode'],
    ['isolation', 'auto', '"auto" is never written into a task'],
    ['workspace', 'relative/path', 'relative workspace'],
    ['deadline_ms', 0, 'non-positive deadline'],
    ['deadline_ms', 1.5, 'fractional deadline'],
    ['depth', -1, 'negative depth'],
    ['created_at', 'yesterday', 'not a datetime'],
  ] as const) {
    it(`refuses ${why}, naming the field`, () => {
      assert.throws(() => parseTask({ ...minimal, [field]: value }), (err: Error) => err instanceof ProtocolError && err.message.includes(field));
    });
  }

  for (const field of ['protocol', 'id', 'created_at', 'agent', 'objective', 'mode', 'isolation', 'workspace', 'deadline_ms', 'report_path', 'events_path']) {
    it(`requires ${field}`, () => {
      const doc: Record<string, unknown> = { ...minimal };
      delete doc[field];
      assert.throws(() => parseTask(doc), (err: Error) => err.message.includes(field));
    });
  }

  it('refuses caesar.task/v2 by name, listing the known version', () => {
    assert.throws(
      () => readTaskText(JSON.stringify({ ...minimal, protocol: 'caesar.task/v2' })),
      (err: Error) => err instanceof UnsupportedVersionError && err.message.includes('caesar.task/v2') && err.message.includes('caesar.task/v1'),
    );
  });

  it('refuses malformed JSON with a clear message', () => {
    assert.throws(() => readTaskText('{"protocol": "caesar.task/v1",'), /task\.json is not valid JSON/);
  });

  it('refuses an oversized task before parsing it', () => {
    const huge = JSON.stringify({ ...minimal, context: 'x'.repeat(5 * 1024 * 1024) });
    assert.throws(() => readTaskText(huge), /over the 4\.0 MiB limit/);
  });
});

import { strict as assert } from 'node:assert';
import type { ProtocolEvent } from '../../src/protocol';
import { eventLine } from '../../src/cli/commands/run';
import { styleFor } from '../../src/cli/format';
import type { CliIo } from '../../src/cli/io';

const io = (tty: boolean): CliIo => ({ out: () => {}, err: () => {}, stdoutIsTTY: tty, cwd: '/', env: {} });
const base = { protocol: 'caesar.event/v1', seq: 1, at: new Date().toISOString(), task_id: 't_1' } as const;

describe('caesar run: event lines', () => {
  it('uses glyphs and colour on a TTY, plain labels elsewhere', () => {
    const tool: ProtocolEvent = { ...base, type: 'tool_use', tool: 'bash', input_summary: 'npm test', status: 'succeeded', id: 'i1' };
    assert.equal(eventLine(tool, styleFor(io(false))), '[tool succeeded] bash npm test');
    const tty = eventLine(tool, styleFor(io(true)));
    assert.match(tty, /✓ bash npm test/);
    assert.match(tty, /\x1b\[/);
    const failed: ProtocolEvent = { ...tool, status: 'failed' };
    assert.match(eventLine(failed, styleFor(io(true))), /✗ bash npm test/);
  });

  it('tells how to answer a question', () => {
    const q: ProtocolEvent = { ...base, type: 'question', id: 'q1', question: 'Go?', options: ['yes', 'no'] };
    assert.equal(eventLine(q, styleFor(io(false))), '[question] q1: Go? [options: yes | no] — answer with: caesar answer t_1 q1 <text>');
  });
});

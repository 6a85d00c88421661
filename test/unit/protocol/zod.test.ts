import { strict as assert } from 'node:assert';
import { z } from '../../../src/protocol/zod';
import { EventSchema } from '../../../src/protocol';

/*
 * Our schemas parse without zod compiling a parser for them (src/protocol/zod.ts): each `new Function` costs start-up
 * time in short processes. Checked by making any compilation throw while fresh and existing schemas parse.
 */
describe('protocol/zod: schemas parse without compiling code', () => {
  it('parses objects, nested ones included, with the Function constructor out of reach', () => {
    const realFunction = globalThis.Function;
    let compiled = 0;
    globalThis.Function = new Proxy(realFunction, {
      construct() {
        compiled++;
        throw new Error('zod compiled a parser');
      },
    });
    try {
      const fresh = z.object({ name: z.string(), nested: z.object({ n: z.number().int() }), list: z.array(z.object({ x: z.boolean() })) });
      assert.deepEqual(fresh.parse({ name: 'a', nested: { n: 1 }, list: [{ x: true }] }), { name: 'a', nested: { n: 1 }, list: [{ x: true }] });
      assert.equal(fresh.safeParse({ name: 1, nested: {}, list: [] }).success, false);
      const event = EventSchema.parse({ protocol: 'caesar.event/v1', seq: 1, at: '2026-12-02T00:00:00.000Z', task_id: 't_1', type: 'message', text: 'hi' });
      assert.equal(event.type, 'message');
    } finally {
      globalThis.Function = realFunction;
    }
    assert.equal(compiled, 0);
  });
});

import { strict as assert } from 'node:assert';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import fc from 'fast-check';
import { NATIVE_ADAPTERS } from '../../src/agents/native';
import { demoAdapter } from '../../src/agents/demo';
import { genericAdapter } from '../../src/agents/generic';
import type { AgentAdapter } from '../../src/agents/types';
import { ToolPairing } from '../../src/agents/stream';
import { EventsWriter } from '../../src/engine/run/events-writer';
import { EventSchema } from '../../src/protocol';
import { mutatedLine, runs, tally } from './fuzz';

const FIXTURES = path.join(__dirname, '../agents/fixtures');

/** The stdout lines of every capture of this agent (test/agents/fixtures/<agent>-*.jsonl). */
function captureLines(prefix: string): string[] {
  return readdirSync(FIXTURES)
    .filter((f) => f.startsWith(`${prefix}-`) && f.endsWith('.jsonl'))
    .flatMap((f) => readFileSync(path.join(FIXTURES, f), 'utf8').split('\n'))
    .filter((l) => l.trim());
}

const EVENT_LINES = [
  '{"protocol":"caesar.event/v1","type":"message","text":"hello"}',
  '{"protocol":"caesar.event/v1","type":"tool_use","tool":"bash","id":"t1","status":"started","input_summary":"ls"}',
  '{"protocol":"caesar.event/v1","type":"tool_use","tool":"bash","id":"t1","status":"succeeded"}',
  '{"protocol":"caesar.event/v1","type":"file_changed","path":"a.txt","action":"modified"}',
  '{"protocol":"caesar.event/v1","type":"progress","message":"half","pct":50}',
  '{"protocol":"caesar.event/v1","type":"error","message":"boom","fatal":false}',
  '{"protocol":"caesar.event/v1","type":"finished","status":"success","summary":"done"}',
];

const DEMO_LINES = [
  '{"kind":"say","text":"hello"}',
  '{"kind":"think","text":"hmm"}',
  '{"kind":"step","phase":"begin","id":"s1","tool":"bash","input":"ls"}',
  '{"kind":"step","phase":"end","id":"s1","tool":"bash","ok":true}',
  '{"kind":"progress","message":"half","pct":50}',
  '{"kind":"edit","path":"/tmp/ws/a.txt","action":"created"}',
  '{"kind":"usage","input_tokens":10,"output_tokens":5}',
];

const subjects: Array<{ adapter: AgentAdapter; seeds: string[] }> = [
  ...NATIVE_ADAPTERS.map((adapter) => ({ adapter, seeds: captureLines(adapter.id) })),
  { adapter: genericAdapter({ id: 'template', bin: 'x', args: [] } as never), seeds: EVENT_LINES },
  { adapter: demoAdapter, seeds: DEMO_LINES },
].filter((s) => s.seeds.length > 0);

const PER_ADAPTER = 1500;

/** Translators whose drafts may be invalid; the single writer refuses those (counted and printed). */
const LENIENT: Record<string, string> = {
  template: 'relays whatever the agent prints as caesar.event/v1',
};

/**
 * Item 9 of issue 13: every translator, fed mutated real capture lines (several per case, one translator per case so
 * its pairing state is exercised): never a throw, and every draft it makes is a valid caesar.event/v1 once stamped.
 */
describe('reliability/fuzz: every translator on mutated captures', function () {
  this.timeout(180_000);

  for (const { adapter, seeds } of subjects) {
    // For these the property is "nothing invalid is written" (the writer refuses the draft), not "none is made".
    const strict = !(adapter.id in LENIENT);
    it(`${adapter.id}: never throws; ${strict ? 'every draft' : 'every written event'} validates (${seeds.length} seed lines)`, () => {
      const dir = mkdtempSync(path.join(tmpdir(), 'caesar-fuzz-'));
      let cases = 0;
      let drafts = 0;
      let refused = 0;
      fc.assert(
        fc.property(fc.array(mutatedLine(seeds), { minLength: 1, maxLength: 6 }), fc.option(fc.integer({ min: -1, max: 255 })), (lines, exit) => {
          cases++;
          // The supervisor's pipeline: translator → the one pairing step → the single writer (which validates).
          const translator = adapter.createTranslator({ workspace: '/tmp/ws' });
          const pairing = new ToolPairing();
          const writer = new EventsWriter(path.join(dir, `${cases}.jsonl`), 't_fuzz', () => refused++);
          const out = lines.flatMap((line) => translator.line(line));
          translator.end(exit ?? null);
          const written = writer.appendAll(out.flatMap((draft) => pairing.pair(draft)));
          writer.close();
          drafts += out.length;
          for (const event of written) assert.ok(EventSchema.safeParse(event).success);
          if (strict) {
            out.forEach((draft, seq) => {
              const parsed = EventSchema.safeParse({ ...draft, protocol: 'caesar.event/v1', seq, at: new Date(0).toISOString(), task_id: 't_fuzz' });
              assert.ok(parsed.success, `invalid event from ${adapter.id}: ${JSON.stringify(draft).slice(0, 300)}`);
            });
          }
        }),
        { numRuns: runs(PER_ADAPTER) },
      );
      rmSync(dir, { recursive: true, force: true });
      tally(`${adapter.id}`, cases);
      if (!strict) console.log(`      ${adapter.id}: ${refused} of ${drafts} drafts refused by the writer`);
      if (strict) assert.equal(refused, 0);
      assert.ok(drafts > 0, 'the mutants still produce events');
    });
  }
});

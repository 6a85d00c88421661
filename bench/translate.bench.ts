/**
 * Translation throughput: 100k lines of the agents' real captured output (test/agents/fixtures/<agent>-*.jsonl,
 * repeated in order until 100k), through each adapter's translator (what the supervisor does per stdout line), beside
 * the floor: `JSON.parse` of the same lines alone, interleaved. A fresh translator per capture, as per task.
 * Not covered: the events writer (stamping, pairing, the append to events.jsonl) and the pipe from the agent.
 */
import { readdirSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { resolveAdapter } from '../src/agents/registry';
import { figures, interleave, loadNote, runsFromEnv, spread } from './lib';

const FIXTURES = path.join(__dirname, '..', 'test', 'agents', 'fixtures');
const LINES = Number(process.env.BENCH_TRANSLATE_LINES ?? 100_000);
const AGENTS = ['claude', 'codex', 'gemini', 'copilot', 'opencode'];

/** The captures of one agent, each a list of its non-empty lines, repeated until `LINES` lines in all. */
function captures(agent: string): string[][] {
  const files = readdirSync(FIXTURES).filter((f) => f.startsWith(`${agent}-`) && f.endsWith('.jsonl')).sort();
  const all = files.map((f) => readFileSync(path.join(FIXTURES, f), 'utf8').split('\n').filter((l) => l.trim()));
  const out: string[][] = [];
  let count = 0;
  for (let i = 0; count < LINES && all.length; i++) {
    const capture = all[i % all.length]!.slice(0, LINES - count);
    out.push(capture);
    count += capture.length;
  }
  return out;
}

export async function benchTranslate(): Promise<Record<string, number | string>> {
  const runs = runsFromEnv(5);
  const out: Record<string, number | string> = { runs, lines: LINES, load_before: loadNote() };
  for (const agent of AGENTS) {
    const adapter = resolveAdapter(agent);
    const inputs = captures(agent);
    if (!inputs.length) continue;
    let drafts = 0;
    const m = await interleave(
      {
        translate: {
          run: () => {
            drafts = 0;
            for (const capture of inputs) {
              const translator = adapter.createTranslator({ workspace: '/work/repo' });
              for (const l of capture) {
                try {
                  drafts += translator.line(l).length;
                } catch {
                  /* counted as a lost line by the supervisor; none expected in the captures */
                }
              }
              translator.end(0);
            }
          },
        },
        json_parse: {
          run: () => {
            // Some captured lines are not JSON (an agent's plain-text notices): parsed and refused, as a translator must.
            for (const capture of inputs) {
              for (const l of capture) {
                try {
                  JSON.parse(l);
                } catch {
                  /* not JSON */
                }
              }
            }
          },
        },
      },
      runs,
      { warmup: true },
    );
    Object.assign(out, figures(`${agent}_translate`, m.translate!, false), figures(`${agent}_json_parse`, m.json_parse!, false));
    out[`${agent}_translate_lines_per_s`] = Math.round(LINES / (spread(m.translate!.wall).median / 1000));
    out[`${agent}_ratio_to_json_parse`] = spread(m.translate!.wall).median / spread(m.json_parse!.wall).median;
    out[`${agent}_events_out`] = drafts;
  }
  out.load_after = loadNote();
  return out;
}

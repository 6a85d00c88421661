/**
 * The mailbox at scale (issue 23): expiring 10,000 pending questions at a task's end, as the supervisor does
 * (QuestionsRelay.expireUnanswered), after the relay has seen them all. Before the fix 2,000 had not expired after
 * 300 s. Moved here from test/reliability/mailbox-scale.test.ts, which keeps the behaviour and no time bound.
 */
import * as path from 'node:path';
import { EventsWriter } from '../src/engine/run/events-writer';
import { QuestionsRelay } from '../src/engine/run/questions-relay';
import { fileQuestions } from '../test/reliability/helpers';
import { benchDir, cleanupBench, loadNote, remember, runsFromEnv } from './lib';

const COUNT = Number(process.env.BENCH_QUESTIONS ?? 10_000);

/** One expiry of COUNT relayed questions, in ms. */
async function expireOnce(): Promise<number> {
  const dir = remember(benchDir('caesar-bench-mailbox-'));
  const paths = { questionsDir: path.join(dir, 'questions'), answersDir: path.join(dir, 'answers') };
  const events = new EventsWriter(path.join(dir, 'events.jsonl'), 't_0123456789abcdef0123456789abcdef');
  const relay = new QuestionsRelay(paths, events, () => {});
  await relay.start();
  fileQuestions(paths.questionsDir, COUNT);
  await relay.scan();
  const started = performance.now();
  await relay.expireUnanswered();
  const elapsed = performance.now() - started;
  relay.dispose();
  return elapsed;
}

export async function benchMailbox(): Promise<Record<string, number | string>> {
  const runs = runsFromEnv(5);
  const times: number[] = [];
  try {
    for (let i = 0; i < runs; i++) times.push(await expireOnce());
  } finally {
    cleanupBench();
  }
  times.sort((a, b) => a - b);
  return { runs, questions: COUNT, load_before: loadNote(), expiry_ms_min: times[0]!, expiry_ms_median: times[Math.floor(times.length / 2)]!, expiry_ms_max: times.at(-1)! };
}

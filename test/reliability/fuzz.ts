import fc from 'fast-check';
import { assertNoNarrowingUnderCi } from '../support/ci-guard.mjs';

/**
 * Mutations of real documents for the property tests: a JSON value with one edit at a random place (a field
 * replaced by any JSON value, deleted, its type changed, a string cut or stuffed with control and bidi characters),
 * a line cut anywhere, or plain garbage. Real captures stay the seed, so the mutants look like what agents print.
 */

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** Every path inside a JSON value (the root included), depth-first. */
function pathsOf(value: Json, prefix: Array<string | number> = [], out: Array<Array<string | number>> = []): Array<Array<string | number>> {
  out.push(prefix);
  if (Array.isArray(value)) value.forEach((v, i) => pathsOf(v, [...prefix, i], out));
  else if (value && typeof value === 'object') for (const [k, v] of Object.entries(value)) pathsOf(v, [...prefix, k], out);
  return out;
}

const NASTY = ['\u001b]0;x\u0007', '\u0000', '\u202e', '\ud800', '"', '\\', '\n', '\r\n', '%s', '${x}', '<script>alert(1)</script>', '../../etc/passwd', '💥'];

const replacement = fc.oneof(
  fc.jsonValue({ maxDepth: 2 }),
  fc.constantFrom<Json>(null, '', 0, -1, 1e308, true, [], {}, 'x'.repeat(70_000)),
  fc.constantFrom(...NASTY),
);

type Edit = { at: number; op: 'replace' | 'delete' | 'stringify' | 'nasty' | 'cut'; value: unknown; nasty: string; cut: number };

const editArb: fc.Arbitrary<Edit> = fc.record({
  at: fc.nat(),
  op: fc.constantFrom('replace', 'delete', 'stringify', 'nasty', 'cut'),
  value: replacement,
  nasty: fc.constantFrom(...NASTY),
  cut: fc.nat(),
});

function applyEdit(doc: Json, edit: Edit): Json {
  const copy = structuredClone(doc);
  const paths = pathsOf(copy);
  const where = paths[edit.at % paths.length]!;
  if (where.length === 0) return edit.op === 'replace' ? (edit.value as Json) : copy;
  const parent = where.slice(0, -1).reduce<Json>((v, k) => (v as Record<string | number, Json>)[k]!, copy) as Record<string | number, Json>;
  const key = where[where.length - 1]!;
  const current = parent[key];
  switch (edit.op) {
    case 'replace':
      parent[key] = edit.value as Json;
      break;
    case 'delete':
      if (Array.isArray(parent)) parent.splice(Number(key), 1);
      else delete parent[key];
      break;
    case 'stringify':
      parent[key] = typeof current === 'string' ? Number(current.length) : JSON.stringify(current);
      break;
    case 'nasty':
      parent[key] = typeof current === 'string' ? `${current.slice(0, edit.cut % (current.length + 1))}${edit.nasty}${current}` : edit.nasty;
      break;
    case 'cut':
      parent[key] = typeof current === 'string' ? current.slice(0, edit.cut % (current.length + 1)) : (current as Json);
      break;
  }
  return copy;
}

/** A JSON document of `seeds` with one to three edits. */
export function mutatedDoc(seeds: readonly unknown[]): fc.Arbitrary<unknown> {
  return fc
    .tuple(fc.constantFrom(...seeds), fc.array(editArb, { minLength: 1, maxLength: 3 }))
    .map(([seed, edits]) => edits.reduce((doc, edit) => applyEdit(doc, edit), seed as Json));
}

/** A line as an agent might print it: a mutated seed document, a seed cut short, a seed as is, or garbage. */
export function mutatedLine(seedLines: readonly string[]): fc.Arbitrary<string> {
  const docs = seedLines.flatMap((line) => {
    try {
      return [JSON.parse(line) as unknown];
    } catch {
      return [];
    }
  });
  return fc.oneof(
    { weight: 5, arbitrary: docs.length ? mutatedDoc(docs).map((d) => JSON.stringify(d) ?? 'undefined') : fc.string() },
    { weight: 2, arbitrary: fc.tuple(fc.constantFrom(...seedLines), fc.nat()).map(([line, n]) => line.slice(0, n % (line.length + 1))) },
    { weight: 2, arbitrary: fc.constantFrom(...seedLines) },
    { weight: 1, arbitrary: fc.oneof(fc.json(), fc.string({ unit: 'binary', maxLength: 200 }), fc.constantFrom(...NASTY)) },
  );
}

/**
 * numRuns for a property: CAESAR_FUZZ_SCALE (default 1) scales every count, so CI and a deep local run differ. Under
 * CI=true a scale below 1 is refused (it would shrink the suite; test/support/ci-guard.mjs); a scale that is not a
 * positive number is refused anywhere, rather than quietly read as 1.
 */
export function runs(base: number): number {
  return Math.max(1, Math.round(base * fuzzScale()));
}

export function fuzzScale(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env.CAESAR_FUZZ_SCALE;
  if (raw === undefined || raw === '') return 1;
  const scale = Number(raw);
  if (!Number.isFinite(scale) || scale <= 0) throw new Error(`CAESAR_FUZZ_SCALE=${raw} is not a positive number (1 is the default; 10 runs ten times the cases)`);
  assertNoNarrowingUnderCi([{ name: 'CAESAR_FUZZ_SCALE', allowed: (value) => Number(value) >= 1 }], env);
  return scale;
}

/** Prints a property's case count under its test title, for docs/reliability.md. */
export function tally(what: string, cases: number): void {
  console.log(`      ${what}: ${cases} cases`);
}

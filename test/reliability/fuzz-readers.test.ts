import { strict as assert } from 'node:assert';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import fc from 'fast-check';
import { stringify as toToml } from 'smol-toml';
import {
  AnswerFileSchema,
  LaunchSpecSchema,
  ProtocolError,
  QuestionFileSchema,
  ReportSchema,
  ResultDocSchema,
  TaskStateSchema,
  parseLaunchSpec,
  readReportText,
  taskPaths,
} from '../../src/protocol';
import { readJsonFile } from '../../src/engine/store/atomic';
import { extractReport, resolveReport } from '../../src/engine/run/report';
import { TaskStore } from '../../src/engine/store/store';
import { loadConfig } from '../../src/config/layers';
import { ConfigError } from '../../src/config/errors';
import { mutatedDoc, runs, tally } from './fuzz';

const ID = 't_0123456789abcdef0123456789abcdef';

const REPORT = {
  protocol: 'caesar.report/v1',
  task_id: ID,
  status: 'success',
  summary: 'Did it.',
  details: 'All good.',
  changes: [{ path: 'src/a.ts', action: 'modified', summary: 'edited' }],
  commands_run: [{ command: 'npm test', exit_code: 0 }],
  findings: [{ severity: 'low', title: 'nit', file: 'src/a.ts', line: 3, detail: 'spacing' }],
  questions: [],
  next_steps: ['ship'],
  usage: { input_tokens: 10, output_tokens: 5, duration_ms: 1000 },
};

const STATE = TaskStateSchema.parse({
  id: ID,
  status: 'succeeded',
  agent: 'demo',
  objective: 'test',
  mode: 'write',
  isolation: 'worktree',
  network: false,
  timeout_ms: 60_000,
  depth: 0,
  created_at: '2026-01-01T00:00:00.000Z',
  ended_at: '2026-01-01T00:01:00.000Z',
  root: '/tmp/r',
  workspace: '/tmp/r',
  excluded_paths: [],
  report_status: 'success',
});
const RESULT = ResultDocSchema.parse({ report: REPORT, report_source: 'file', changes_verified_by: 'git', agent_report_valid: true });
const LAUNCH = parseLaunchSpec({ id: ID, created_at: '2026-01-01T00:00:00.000Z', root: '/tmp/r', workspace: '/tmp/r', agent: 'demo', objective: 'x', mode: 'write', isolation: 'worktree', network: false, timeout_ms: 60_000 });
const QUESTION = QuestionFileSchema.parse({ id: 'q1', question: 'Go on?', options: ['yes', 'no'], asked_at: '2026-01-01T00:00:00.000Z' });
const ANSWER = AnswerFileSchema.parse({ id: 'q1', answer: 'yes', answered_at: '2026-01-01T00:00:00.000Z', by: 'cli' });

const CONFIG = {
  policy: { max_parallel: 3, default_mode: 'read-only', default_timeout: '5m', allowed: ['codex', 'claude'], env: 'minimal', env_allow: ['AWS_*'] },
  worktree: { copy: ['node_modules', '.env'] },
  models: { codex: 'gpt-5', claude: 'opus' },
  role: [{ name: 'reviewer', agents: ['claude'], mode: 'read-only', model: 'sonnet', timeout: '20m' }],
  agent: [{ id: 'mine', bin: 'mine-cli', args: ['run', '{{prompt}}'], display_name: 'Mine' }],
};

/** A text as a hostile or broken writer leaves it: a mutated document, cut short, or with garbage appended. */
function hostileText(seeds: readonly unknown[]): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 4, arbitrary: mutatedDoc(seeds).map((d) => JSON.stringify(d) ?? '') },
    { weight: 2, arbitrary: fc.tuple(fc.constantFrom(...seeds), fc.nat()).map(([d, n]) => JSON.stringify(d).slice(0, n % (JSON.stringify(d).length + 1))) },
    { weight: 1, arbitrary: fc.tuple(fc.constantFrom(...seeds), fc.string()).map(([d, s]) => `${JSON.stringify(d)}${s}`) },
    { weight: 1, arbitrary: fc.oneof(fc.string({ unit: 'binary' }), fc.json()) },
  );
}

/** The only failure a reader may report: a ProtocolError naming the problem (never a TypeError, never a hang). */
function onlyProtocolErrors(err: unknown): void {
  assert.ok(err instanceof ProtocolError, `unexpected ${(err as Error)?.name}: ${(err as Error)?.message}`);
}

describe('reliability/fuzz: the report reader, the config loader, every task-file reader', function () {
  this.timeout(180_000);
  let dir: string;
  before(() => (dir = mkdtempSync(path.join(tmpdir(), 'caesar-fuzz-readers-'))));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('report text (report.json tier): a valid report or a ProtocolError', () => {
    let cases = 0;
    fc.assert(
      fc.property(hostileText([REPORT]), (text) => {
        cases++;
        try {
          assert.ok(ReportSchema.safeParse(readReportText(text)).success);
        } catch (err) {
          onlyProtocolErrors(err);
        }
      }),
      { numRuns: runs(3000) },
    );
    tally('readReportText', cases);
  });

  it('free text (final message and raw.log tiers): extractReport never throws, finds only valid reports', () => {
    let cases = 0;
    let found = 0;
    const prose = fc.tuple(fc.string(), hostileText([REPORT]), fc.string(), fc.boolean()).map(([a, r, b, fenced]) => (fenced ? `${a}\n\`\`\`json\n${r}\n\`\`\`\n${b}` : `${a}${r}${b}`));
    fc.assert(
      fc.property(prose, (text) => {
        cases++;
        const report = extractReport(text);
        if (report) {
          found++;
          assert.ok(ReportSchema.safeParse(report).success);
        }
      }),
      { numRuns: runs(3000) },
    );
    tally(`extractReport (${found} reports found)`, cases);
  });

  it('resolveReport over every tier with hostile report.json, final-message.txt and raw.log: always a valid report', async () => {
    let cases = 0;
    const paths = { report: path.join(dir, 'report.json'), finalMessage: path.join(dir, 'final-message.txt'), rawLog: path.join(dir, 'raw.log'), channelReport: path.join(dir, 'report.channel.json') };
    await fc.assert(
      fc.asyncProperty(
        fc.option(hostileText([REPORT])),
        fc.option(hostileText([REPORT])),
        fc.option(fc.string()),
        fc.constantFrom('file', 'schema', 'channel'),
        fc.option(fc.string()),
        async (reportText, finalText, rawText, tier, streamText) => {
          cases++;
          for (const [file, text] of [[paths.report, reportText], [paths.finalMessage, finalText], [paths.rawLog, rawText]] as const) {
            rmSync(file, { force: true });
            if (text !== null) writeFileSync(file, text);
          }
          const resolved = await resolveReport({
            taskId: ID,
            tier: tier as 'file',
            channel: tier === 'channel',
            paths,
            translation: streamText === null ? {} : { finalText: streamText },
            outcome: { exitCode: 0, timedOut: false, cancelled: false },
          });
          assert.ok(ReportSchema.safeParse(resolved.report).success);
          // Another task's id is kept (it may be a stale copy) but never silently: a finding says so.
          if (resolved.report.task_id !== ID) assert.ok(resolved.findings.some((f) => f.detail.includes(ID)), 'a task id mismatch is reported');
        },
      ),
      { numRuns: runs(600) },
    );
    tally('resolveReport', cases);
  });

  it('config loader: a hostile .caesar/config.toml loads or fails with a ConfigError', async () => {
    let cases = 0;
    let loaded = 0;
    const root = path.join(dir, 'root');
    const home = path.join(dir, 'home');
    mkdirSync(path.join(root, '.caesar'), { recursive: true });
    mkdirSync(home, { recursive: true });
    const tomlOf = (doc: unknown): string => {
      try {
        return toToml(doc as Record<string, unknown>);
      } catch {
        return JSON.stringify(doc); // not expressible as TOML: the JSON text is a broken TOML file, also worth trying
      }
    };
    const seedText = toToml(CONFIG);
    const text = fc.oneof(
      { weight: 4, arbitrary: mutatedDoc([CONFIG]).map(tomlOf) },
      { weight: 2, arbitrary: fc.nat().map((n) => seedText.slice(0, n % (seedText.length + 1))) },
      { weight: 1, arbitrary: fc.tuple(fc.nat(), fc.string()).map(([n, s]) => `${seedText.slice(0, n % seedText.length)}${s}${seedText.slice(n % seedText.length)}`) },
    );
    await fc.assert(
      fc.asyncProperty(text, async (toml) => {
        cases++;
        writeFileSync(path.join(root, '.caesar', 'config.toml'), toml);
        try {
          await loadConfig({ root, home });
          loaded++;
        } catch (err) {
          assert.ok(err instanceof ConfigError, `unexpected ${(err as Error)?.name}: ${(err as Error)?.message}`);
        }
      }),
      { numRuns: runs(1500) },
    );
    tally(`loadConfig (${loaded} loaded)`, cases);
  });

  const files: Array<[string, unknown, (file: string) => Promise<unknown>]> = [
    ['state.json', STATE, (f) => readJsonFile(f, TaskStateSchema)],
    ['result.json', RESULT, (f) => readJsonFile(f, ResultDocSchema)],
    ['launch.json', LAUNCH, (f) => readJsonFile(f, LaunchSpecSchema)],
    ['questions/q1.json', QUESTION, (f) => readJsonFile(f, QuestionFileSchema)],
    ['answers/q1.json', ANSWER, (f) => readJsonFile(f, AnswerFileSchema)],
  ];
  for (const [name, seed, read] of files) {
    it(`${name}: the engine reader returns a valid document or a ProtocolError`, async () => {
      let cases = 0;
      const file = path.join(dir, name.replace('/', '-'));
      await fc.assert(
        fc.asyncProperty(hostileText([seed]), async (text) => {
          cases++;
          writeFileSync(file, text);
          try {
            await read(file);
          } catch (err) {
            onlyProtocolErrors(err);
          }
        }),
        { numRuns: runs(1000) },
      );
      tally(name, cases);
    });
  }

  it('the task store (ps, the editor) lists a task folder with every file hostile: never throws', async () => {
    let cases = 0;
    const root = path.join(dir, 'store-root');
    const paths = taskPaths(root, ID);
    mkdirSync(path.join(paths.dir, 'questions'), { recursive: true });
    const store = new TaskStore(root);
    await fc.assert(
      fc.asyncProperty(hostileText([STATE]), hostileText([RESULT]), fc.array(hostileText([{ type: 'message', text: 'x', seq: 0, protocol: 'caesar.event/v1', at: '2026-01-01T00:00:00Z', task_id: ID }]), { maxLength: 4 }), hostileText([QUESTION]), async (state, result, events, question) => {
        cases++;
        writeFileSync(paths.state, state);
        writeFileSync(paths.result, result);
        writeFileSync(paths.events, events.join('\n'));
        writeFileSync(path.join(paths.dir, 'questions', 'q1.json'), question);
        const listed = await store.list();
        assert.ok(listed.length <= 1);
        await store.get(ID).catch(onlyProtocolErrors);
      }),
      { numRuns: runs(500) },
    );
    tally('store.list + store.get', cases);
  });
});

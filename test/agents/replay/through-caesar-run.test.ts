import * as assert from 'node:assert/strict';
import { NATIVE_ADAPTERS } from '../../../src/agents/native';
import { CaesarRunReplays } from './caesar-run-replay';
import { captureWorkspace, readFixture, types } from './replay-helpers';

/*
 * Every native adapter, driven through the real `caesar run` (dist/caesar.js, its supervisor, worktree, sandbox where
 * bwrap runs) with a fake CLI on PATH under the adapter's own executable name. The fake prints a capture of the real
 * CLI byte for byte (the capture's workspace path swapped for the one it runs in, as if the run had been taken there),
 * does to disk what that run did, and exits with the code the run exited with. What reaches events.jsonl, the report
 * and the outcome is the whole chain's answer to the real stream, not only the translator's.
 */

const END = 'CAESAR_CAPTURE_END';

interface ReplayCase {
  capture: string;
  /** The exit code of the captured run: from its .cmd, else as ../shared/agents/RECIPES.md gives it for that case. */
  exit: number;
  mode?: 'write' | 'read-only';
  /** Files the captured run created in its workspace, which the fake creates too (git is the record). */
  files?: string[];
  /** The translated events between `started` and `finished` (tool_use as `tool_use:<status>:<tool>`). */
  events: string[];
  fileChanged?: string[];
  /** Success: the final text, which becomes the report's summary. */
  summary?: string;
  /** Failure: the stream's fatal explanation, which must head the report's summary. */
  failure?: string | RegExp;
  /** The CLI's own session id as the capture names it (issue 36): recorded in state.json, success or failure. */
  session: string;
}

const CASES: ReplayCase[] = [
  {
    capture: 'codex-tool',
    session: '01a22769-5d08-7af3-baea-135aee9c8529',
    exit: 0,
    files: ['hello.txt', 'patched.txt'],
    events: ['thinking', 'tool_use:started:shell', 'tool_use:succeeded:shell', 'tool_use:started:apply_patch', 'tool_use:succeeded:apply_patch', 'file_changed', 'message'],
    fileChanged: ['patched.txt'],
    summary: 'Done: created hello.txt.',
  },
  {
    capture: 'codex-http401',
    session: '01a22769-c25b-79d3-acdf-8c05d017ddd0',
    exit: 1,
    events: ['error'],
    failure: 'unexpected status 401 Unauthorized: Incorrect API key provided (fake), url: http://127.0.0.1:18080/v1/responses',
  },
  {
    capture: 'claude-write',
    session: 'b5a490ca-a758-4aa2-9cce-ea31d9bb5ae0',
    exit: 0,
    files: ['hello.txt'],
    events: ['thinking', 'message', 'tool_use:started:Write', 'tool_use:succeeded:Write', 'message'],
    summary: 'Done: wrote hello.txt.',
  },
  // RECIPES.md: an API error ends `result` with is_error:true and exit code 1.
  { capture: 'claude-error401', session: '70f62da4-c351-473b-8af2-7781cfb188fb', exit: 1, events: ['error'], failure: 'Invalid API key · Fix external API key' },
  {
    capture: 'opencode-write-tool',
    session: 'ses_dd890394affeobvZiaBCyFop9F',
    exit: 0,
    files: ['written.txt'],
    events: ['tool_use:started:write', 'tool_use:succeeded:write', 'file_changed', 'message'],
    fileChanged: ['written.txt'],
    summary: 'Done: created hello.txt.',
  },
  { capture: 'opencode-http401', session: 'ses_dd88ff804ffeqwdIrgLFGrC8aC', exit: 1, events: ['error'], failure: 'Incorrect API key provided (fake) (HTTP 401)' },
  {
    capture: 'copilot-allow-write',
    session: '120474cd-dd2a-4e98-85fe-d6d8c2d73bf9',
    exit: 0,
    files: ['hello.txt'],
    events: ['message', 'thinking', 'tool_use:started:create', 'tool_use:succeeded:create', 'message'],
    summary: 'Done: wrote hello.txt.',
  },
  { capture: 'copilot-error401', session: 'fadc6fd7-68ae-4df0-9e4a-34196cda8f14', exit: 1, events: ['progress', 'progress', 'error'], failure: /^Authentication failed with provider at http:\/\/127\.0\.0\.1:35355 \(HTTP 401\)/ },
  {
    capture: 'gemini-shell-stream',
    session: 'f3ea7c04-57d3-48c9-a982-b49a1f242026',
    exit: 0,
    files: ['hello.txt'],
    events: ['message', 'tool_use:started:run_shell_command', 'tool_use:succeeded:run_shell_command', 'message'],
    summary: 'Done. I created hello.txt.',
  },
  // RECIPES.md: gemini exits with the HTTP status mod 256 (401 → 145).
  {
    capture: 'gemini-err401-stream',
    session: '7d3433f3-27c3-447c-a9e4-334a67171614',
    exit: 145,
    events: ['error'],
    failure: '[API Error: {"error":{"code":401,"message":"fake UNAUTHENTICATED from test server","status":"UNAUTHENTICATED"}}]',
  },
  // agy's exit codes were not recorded: 0, so that the stream alone must tell success from failure.
  { capture: 'antigravity-ok', session: '82ac559e-bf5b-4eae-9d4c-12ce10d41f3a', exit: 0, mode: 'read-only', events: ['message'], summary: 'OK' },
  {
    capture: 'antigravity-quota',
    session: '1d008f41-d241-4139-82ed-49102213fb61',
    exit: 0,
    events: ['error', 'error', 'error', 'error'],
    failure: 'Individual quota reached. Please upgrade your subscription to increase your limits. Resets in 101h33m31s.',
  },
];

describe('captures of the real CLIs replayed through `caesar run` (fake CLI on PATH)', function () {
  this.timeout(90_000);
  const replays = new CaesarRunReplays();
  before(() => replays.prepare());
  after(() => replays.cleanup());

  it('covers every native adapter, with a success and a failure each', () => {
    for (const adapter of NATIVE_ADAPTERS) {
      const mine = CASES.filter((c) => c.capture.startsWith(`${adapter.id}-`));
      assert.ok(mine.some((c) => c.summary !== undefined) && mine.some((c) => c.failure !== undefined), adapter.id);
    }
  });

  for (const c of CASES) {
    it(`${c.capture}: ${c.failure ? 'the task fails with the stream\'s own explanation' : 'the task succeeds with the translated work and final text'}`, async () => {
      const adapter = NATIVE_ADAPTERS.find((a) => c.capture.startsWith(`${a.id}-`))!;
      const args = [`replay ${c.capture}`, '--agent', adapter.id, '--mode', c.mode ?? 'write'];
      const { run, outcome, events, state } = await replays.run({ [adapter.bin]: fakeCli(c) }, args);
      assert.equal(state.agent_session?.id, c.session, 'the CLI\'s own session is recorded for a follow-up to resume');

      const started = events[0];
      assert.ok(started?.type === 'started' && started.command.startsWith(`${adapter.bin} `), `the fake ${adapter.bin} ran: ${JSON.stringify(started)}`);
      assert.equal(events.at(-1)?.type, 'finished');
      const translated = events.slice(1, -1);
      assert.deepEqual(types(translated), c.events, run.stderr);
      const changed = translated.flatMap((e) => (e.type === 'file_changed' ? [e.path] : []));
      assert.deepEqual(changed, c.fileChanged ?? []);

      if (c.summary !== undefined) {
        assert.equal(outcome.status, 'succeeded', run.stderr);
        assert.equal(outcome.report.summary, c.summary);
        assert.deepEqual(outcome.diff.files.map((f) => f.path).sort(), c.files ?? []);
        // No agent wrote a report: one made from the final text claims full success only when git shows no change,
        // and `caesar run` exits 0 only on a full success.
        assert.equal(outcome.report.status, c.files ? 'partial' : 'success');
        assert.equal(run.code, c.files ? 1 : 0);
      } else {
        assert.notEqual(run.code, 0);
        assert.equal(outcome.status, 'failed');
        const fatal = translated.filter((e) => e.type === 'error').at(-1);
        assert.ok(fatal?.type === 'error');
        if (typeof c.failure === 'string') assert.equal(fatal.message, c.failure);
        else assert.match(fatal.message, c.failure!);
        assert.ok(outcome.report.summary.startsWith(`The agent reported a failure: ${fatal.message}`), outcome.report.summary);
      }
    });
  }
});

/** A shell script that replays the capture: drains the brief, writes the run's files, prints the stream, exits. */
function fakeCli(c: ReplayCase): string {
  const capture = readFixture(`${c.capture}.jsonl`).trimEnd();
  assert.ok(!capture.split('\n').includes(END), `${c.capture} holds the heredoc terminator`);
  const workspace = captureWorkspace(c.capture);
  assert.ok(workspace && /^[A-Za-z0-9/._-]+$/.test(workspace), `${c.capture}: no usable workspace in its .cmd`);
  return [
    '#!/bin/sh',
    'cat > /dev/null',
    ...(c.files ?? []).map((file) => `printf 'hello\\n' > ${file}`),
    `sed "s|${workspace}|$(pwd -P)|g" <<'${END}'`,
    capture,
    END,
    `exit ${c.exit}`,
    '',
  ].join('\n');
}

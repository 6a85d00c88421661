import { readFileSync } from 'node:fs';
import * as assert from 'node:assert/strict';
import * as path from 'node:path';
import { NATIVE_ADAPTERS } from '../../../src/agents/native';
import { acpReplayerScript } from './acp-replayer';
import { CaesarRunReplays } from './caesar-run-replay';
import { types } from './replay-helpers';

/*
 * The ACP transport through the real `caesar run --transport acp`: a fake agent of the ACP command's name replays the
 * JSON-RPC transcript of a real agent (test/engine/acp/captures, copied from ../shared/agents/captures: five agents
 * driven live, see ../shared/agents/ACP.md) against Caesar's own ACP client, permission broker and supervisor. Only
 * transcripts whose recorded client decided as Caesar does are replayed (no permission asked, or a read-only task,
 * where Caesar rejects by itself as the recorded client did), so the agent's recorded lines stay true to this run.
 */

const CAPTURES = path.resolve(__dirname, '..', '..', 'engine', 'acp', 'captures');
/** Where the transcripts were taken (their .cmd files): replaced by the fake's working directory. */
const CAPTURE_WORKSPACE = '/home/dev/lab/ws';
const SHELL = ['message', 'tool_use:started:execute', 'tool_use:succeeded:execute', 'message'];
const DONE = 'Done: hello.txt was handled.';

interface AcpCase {
  capture: string;
  agent: string;
  /** The ACP command the adapter runs (its `acp.plan`). */
  bin: string;
  mode: 'write' | 'read-only';
  events: string[];
  status: 'succeeded' | 'failed';
  summary: string;
}

const CASES: AcpCase[] = [
  { capture: 'acp-claude-bypass', agent: 'claude', bin: 'claude-agent-acp', mode: 'write', events: SHELL, status: 'succeeded', summary: DONE },
  { capture: 'acp-codex-mode-full', agent: 'codex', bin: 'codex-acp', mode: 'write', events: SHELL, status: 'succeeded', summary: DONE },
  { capture: 'acp-copilot-allow-all-tools', agent: 'copilot', bin: 'copilot', mode: 'write', events: SHELL, status: 'succeeded', summary: DONE },
  { capture: 'acp-gemini-yolo', agent: 'gemini', bin: 'gemini', mode: 'write', events: SHELL, status: 'succeeded', summary: DONE },
  { capture: 'acp-opencode-auto', agent: 'opencode', bin: 'opencode', mode: 'write', events: SHELL, status: 'succeeded', summary: DONE },
  {
    capture: 'acp-claude-reject',
    agent: 'claude',
    bin: 'claude-agent-acp',
    mode: 'read-only',
    events: ['message', 'tool_use:started:execute', 'progress', 'tool_use:failed:execute', 'message'],
    status: 'succeeded',
    summary: DONE,
  },
  // codex-acp 0.16.0 ends its turn with stop reason "cancelled" once a command is rejected.
  {
    capture: 'acp-codex-untrusted-reject',
    agent: 'codex',
    bin: 'codex-acp',
    mode: 'read-only',
    events: ['message', 'tool_use:started:execute', 'progress', 'tool_use:failed:execute'],
    status: 'failed',
    summary: 'The agent reported a failure: The agent ended its turn as cancelled (stop reason "cancelled"). I will create the file with a shell command.',
  },
];

describe('transcripts of real ACP agents replayed through `caesar run --transport acp` (fake agent on PATH)', function () {
  this.timeout(90_000);
  const replays = new CaesarRunReplays();
  before(() => replays.prepare());
  after(() => replays.cleanup());

  it('covers every agent with an ACP entry point', () => {
    const withAcp = NATIVE_ADAPTERS.filter((a) => a.acp).map((a) => a.id);
    assert.deepEqual([...new Set(CASES.map((c) => c.agent))].sort(), withAcp.sort());
  });

  for (const c of CASES) {
    it(`${c.capture} (${c.mode}): the task ${c.status === 'failed' ? 'fails' : 'succeeds'} with the replayed session's events`, async () => {
      const adapter = NATIVE_ADAPTERS.find((a) => a.id === c.agent)!;
      const fakes = { [c.bin]: acpReplayerScript(path.join(CAPTURES, `${c.capture}.jsonl`), CAPTURE_WORKSPACE) };
      // `caesar run` checks the agent's own CLI is installed; over ACP it must never be the one started.
      if (adapter.bin !== c.bin) fakes[adapter.bin] = '#!/bin/sh\necho "the stream CLI ran instead of the ACP agent" >&2\nexit 99\n';
      const { run, outcome, events, state } = await replays.run(fakes, [`replay ${c.capture}`, '--agent', c.agent, '--mode', c.mode, '--transport', 'acp']);
      // The session the agent opened (its answer to session/new) is recorded: what session/load resumes (issue 36).
      assert.equal(state.agent_session?.id, openedSession(path.join(CAPTURES, `${c.capture}.jsonl`)));

      const started = events[0];
      assert.ok(started?.type === 'started' && (started.command === c.bin || started.command.startsWith(`${c.bin} `)), JSON.stringify(started));
      assert.equal(events.at(-1)?.type, 'finished');
      const translated = events.slice(1, -1);
      assert.deepEqual(types(translated), c.events, run.stderr);
      for (const e of translated) {
        if (e.type === 'progress') assert.match(e.message, /^Permission answered automatically: .*\(reject_once\) — a read-only task never allows a tool of kind "execute"/);
      }
      assert.equal(outcome.status, c.status);
      assert.equal(outcome.report.summary, c.summary);
      assert.equal(run.code, c.status === 'succeeded' ? 0 : 1);
    });
  }
});

/** The sessionId of the agent's answer to the client's `session/new` in a transcript. */
function openedSession(transcript: string): string {
  const lines = readFileSync(transcript, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as { dir: string; msg: { id?: number; method?: string; result?: { sessionId?: string } } });
  const request = lines.find((l) => l.dir === 'client->agent' && l.msg.method === 'session/new');
  const answer = lines.find((l) => l.dir === 'agent->client' && l.msg.id === request?.msg.id && l.msg.result?.sessionId);
  assert.ok(answer?.msg.result?.sessionId, `${transcript}: no session/new answer`);
  return answer.msg.result.sessionId;
}

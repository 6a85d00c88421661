import { readFileSync } from 'node:fs';
import * as path from 'node:path';

/**
 * The source of a fake ACP agent that replays a transcript of a real one (test/engine/acp/captures/acp-*.jsonl: every
 * JSON-RPC line of a live session, tagged client->agent or agent->client), for an executable put on PATH under the
 * agent's name. It waits for each request the recorded client sent (matched by method, the real client's ids mapped
 * onto the recorded ones) and for each answer to the agent's own requests, and sends the agent's lines as recorded:
 * notifications, its requests (permissions, fs) and its responses. The capture's workspace path becomes the
 * directory the fake runs in. The transcript is embedded: the sandbox shows the agent nothing of the test's folders.
 */
export function acpReplayerScript(transcriptFile: string, captureWorkspace: string): string {
  const transcript = readFileSync(transcriptFile, 'utf8')
    .split('\n')
    .filter((line) => line.trim())
    .map((line) => JSON.parse(line) as { dir: string; msg?: unknown })
    .filter((entry) => entry.msg && (entry.dir === 'client->agent' || entry.dir === 'agent->client'));
  const body = readFileSync(path.join(__dirname, 'acp-replay-agent.js'), 'utf8');
  return `#!${process.execPath}\nconst TRANSCRIPT = ${JSON.stringify(transcript)};\nconst FROM = ${JSON.stringify(captureWorkspace)};\n${body}`;
}

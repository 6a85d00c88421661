// Manual probe (not a test): runs one agent directly through its adapter against a fake server, inside the caller's
// network namespace. Usage: unshare -n sh -c 'ip link set lo up; exec npx tsx test/agents/live/probe.ts <agent> [mode]'
import * as path from 'node:path';
import { NATIVE_ADAPTERS } from '../../../src/agents/native';
import { startAnthropicServer, startChatServer, startGeminiServer, startResponsesServer, reportFor, type Turn } from '../fake-servers';
import { agentEnv, makeRepo, MODELS, pinnedBinDir, tempDir, type LiveAgent } from './harness';
import { runDirect } from './direct';
import { writeScript } from './scripts';

async function main() {
  const agent = process.argv[2] as LiveAgent;
  const mode = (process.argv[3] ?? 'write') as 'write' | 'read-only';
  const tier = (process.argv[4] ?? 'file') as 'file' | 'schema';
  const adapter = NATIVE_ADAPTERS.find((a) => a.id === agent)!;
  const turns: Turn[] = writeScript(agent, 'probe.txt', 'probe\n');
  const start = { codex: startResponsesServer, claude: startAnthropicServer, copilot: startAnthropicServer, opencode: startChatServer, gemini: startGeminiServer }[agent];
  const server = await start(turns);
  const root = tempDir('caesar-probe-');
  let repo = makeRepo(path.join(root, 'repo'));
  if (process.env.PROBE_WT) {
    const { execFileSync } = await import('node:child_process');
    execFileSync('git', ['worktree', 'add', '-q', '-b', 'caesar/t1', '.caesar/wt/t1'], { cwd: repo });
    repo = path.join(repo, '.caesar/wt/t1');
  }
  const env = { ...process.env, ...agentEnv(agent, server.url, path.join(root, 'home')), PATH: `${pinnedBinDir(root)}:${process.env.PATH}` };
  const t0 = Date.now();
  const result = await runDirect(adapter, { workspace: repo, taskRoot: path.join(root, 'tasks'), mode, tier, model: MODELS[agent], objective: 'Create probe.txt containing probe', env, extraArgs: (process.env.PROBE_EXTRA ?? '').split(' ').filter(Boolean) });
  console.log('display:', result.display);
  console.log('exit', result.code, 'in', Date.now() - t0, 'ms');
  console.log('events:', JSON.stringify(result.events, null, 1));
  console.log('summary:', JSON.stringify(result.summary));
  console.log('requests:', server.requests.map((r) => `${r.path} scripted=${r.scripted} task=${r.taskId} report=${r.reportPath}`).join('\n  '));
  console.log('stderr tail:', result.stderr.slice(process.env.PROBE_FULL ? 0 : -1500));
  console.log('stdout head:', result.stdout.slice(0, 600));
  await server.close();
  void reportFor;
}
main().catch((e) => { console.error(e); process.exit(1); });

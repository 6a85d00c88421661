import * as assert from 'node:assert/strict';
import * as path from 'node:path';
import { DOCUMENT_IDS, renderBrief, type Channel, type Task } from '../../src/protocol';
import type { AgentAdapter, BuildContext, SpawnPlan } from '../../src/agents/types';
import { NATIVE_ADAPTERS, antigravityAdapter, claudeAdapter, codexAdapter, copilotAdapter, geminiAdapter, opencodeAdapter } from '../../src/agents/native';
import { channelCoordinates } from '../../src/engine/run/channel-launcher';
import { pickTier } from '../../src/engine/run/task-document';

/**
 * The supervisor's channel coordinates (`<node> <caesar.js> channel serve --task-dir <dir>`) reach every agent that can
 * load an MCP server, through the agent's own per-run mechanism, and never through the user's own configuration:
 * every file laid down lives in the task directory.
 */
const ROOT = '/work/repo';
const TASK_DIR = `${ROOT}/.caesar/tasks/t_1`;
const CLI_JS = __filename; // any existing file stands for dist/caesar.js

function coordinates(): Channel {
  const channel = channelCoordinates(TASK_DIR, { ...process.env, CAESAR_CLI_JS: CLI_JS });
  assert.ok(channel, 'coordinates are built when the CLI script exists');
  return channel;
}

function build(adapter: AgentAdapter, channelRequested = true): { plan: SpawnPlan; channel: Channel; tier: string; prompt: string } {
  const channel = coordinates();
  const tier = channelRequested ? pickTier({ channel: true }, adapter) : pickTier({ channel: false }, adapter);
  const task: Task = {
    protocol: DOCUMENT_IDS.task,
    id: 't_1',
    created_at: '2026-12-01T00:00:00.000Z',
    agent: adapter.id,
    objective: 'o',
    context: '',
    constraints: [],
    acceptance_criteria: [],
    mode: 'write',
    isolation: 'worktree',
    network: true,
    workspace: `${ROOT}/.caesar/wt/t_1`,
    deadline_ms: 600_000,
    depth: 1,
    report_path: `${TASK_DIR}/report.json`,
    events_path: `${TASK_DIR}/events.jsonl`,
    channel: channelRequested ? channel : null,
  };
  const prompt = renderBrief(task, tier);
  const ctx: BuildContext = {
    task,
    taskDir: TASK_DIR,
    prompt,
    promptFile: `${TASK_DIR}/brief.md`,
    tier,
    extraArgs: [],
    reportSchemaFile: `${TASK_DIR}/report.schema.json`,
    finalMessageFile: `${TASK_DIR}/final-message.txt`,
  };
  return { plan: adapter.build(ctx), channel, tier, prompt };
}

function pairValue(args: string[], flag: string, prefix = ''): string[] {
  return args.flatMap((a, i) => (a === flag && (args[i + 1] ?? '').startsWith(prefix) ? [args[i + 1]!] : []));
}

function assertPrivateFiles(plan: SpawnPlan): void {
  for (const file of plan.files ?? []) assert.ok(file.path.startsWith(`${TASK_DIR}/`), `${file.path} lies outside the task directory`);
}

describe('agents: the return channel injected into each agent that can load MCP', () => {
  // pickTier asks whether the channel server can be started at all: make the answer independent of a built dist/.
  let saved: string | undefined;
  before(() => {
    saved = process.env.CAESAR_CLI_JS;
    process.env.CAESAR_CLI_JS = CLI_JS;
  });
  after(() => {
    if (saved === undefined) delete process.env.CAESAR_CLI_JS;
    else process.env.CAESAR_CLI_JS = saved;
  });

  it('the coordinates: this Node, the CLI script, `channel serve --task-dir <dir>`, server name caesar', () => {
    assert.deepEqual(coordinates(), {
      transport: 'mcp-stdio',
      command: process.execPath,
      args: [path.resolve(CLI_JS), 'channel', 'serve', '--task-dir', TASK_DIR],
      server_name: 'caesar',
    });
    assert.equal(channelCoordinates(TASK_DIR, { ...process.env, CAESAR_CLI_JS: '/nonexistent/caesar.js' }), undefined, 'no CLI script: no channel, no exception');
  });

  it('codex: -c mcp_servers.caesar.command/args as TOML, tools approved', () => {
    const { plan, channel, tier } = build(codexAdapter);
    assert.equal(tier, 'channel');
    const values = pairValue(plan.args, '-c', 'mcp_servers.caesar.');
    assert.deepEqual(values, [
      `mcp_servers.caesar.command=${JSON.stringify(channel.command)}`,
      `mcp_servers.caesar.args=${JSON.stringify(channel.args)}`,
      'mcp_servers.caesar.default_tools_approval_mode="approve"',
    ]);
    assert.equal(plan.args[plan.args.length - 1], '-', 'the prompt still comes on stdin');
  });

  it('claude: --mcp-config <taskDir>/claude-mcp-config.json and the four tools allowed by name', () => {
    const { plan, channel } = build(claudeAdapter);
    const [config] = pairValue(plan.args, '--mcp-config');
    assert.equal(config, `${TASK_DIR}/claude-mcp-config.json`);
    const file = plan.files!.find((f) => f.path === config)!;
    assert.deepEqual(JSON.parse(file.content), { mcpServers: { caesar: { type: 'stdio', command: channel.command, args: channel.args } } });
    assert.deepEqual(pairValue(plan.args, '--allowedTools')[0]!.split(','), ['get_task', 'report_progress', 'ask_orchestrator', 'submit_report'].map((t) => `mcp__caesar__${t}`));
    assertPrivateFiles(plan);
  });

  it('copilot: --additional-mcp-config @<taskDir>/copilot-mcp-config.json', () => {
    const { plan, channel } = build(copilotAdapter);
    assert.deepEqual(pairValue(plan.args, '--additional-mcp-config'), [`@${TASK_DIR}/copilot-mcp-config.json`]);
    const file = plan.files!.find((f) => f.path === `${TASK_DIR}/copilot-mcp-config.json`)!;
    assert.deepEqual(JSON.parse(file.content).mcpServers.caesar, { type: 'local', command: channel.command, args: channel.args, tools: ['*'] });
    assertPrivateFiles(plan);
  });

  it('gemini: a private system-settings file in the task directory, named by GEMINI_CLI_SYSTEM_SETTINGS_PATH', () => {
    const { plan, channel, tier } = build(geminiAdapter);
    assert.equal(tier, 'channel');
    const settings = `${TASK_DIR}/gemini-settings.json`;
    assert.equal(plan.env?.GEMINI_CLI_SYSTEM_SETTINGS_PATH, settings);
    const file = plan.files!.find((f) => f.path === settings)!;
    assert.deepEqual(JSON.parse(file.content), { mcpServers: { caesar: { command: channel.command, args: channel.args, trust: true } } });
    assert.equal(plan.env?.HOME, undefined, "the user's HOME (and ~/.gemini/settings.json) is left alone");
    assertPrivateFiles(plan);
  });

  it('opencode: OPENCODE_CONFIG_CONTENT, no file in the workspace or the user config', () => {
    const { plan, channel } = build(opencodeAdapter);
    assert.deepEqual(JSON.parse(plan.env!.OPENCODE_CONFIG_CONTENT!), { mcp: { caesar: { type: 'local', command: [channel.command, ...channel.args], enabled: true } } });
    assert.equal(plan.files, undefined);
  });

  it('every agent that declares the channel gets it; none gets it unless the task asked; antigravity cannot', () => {
    for (const adapter of NATIVE_ADAPTERS) {
      const asked = build(adapter);
      const plain = build(adapter, false);
      const text = JSON.stringify([asked.plan.args, asked.plan.env ?? {}, (asked.plan.files ?? []).map((f) => f.content)]);
      const plainText = JSON.stringify([plain.plan.args, plain.plan.env ?? {}, (plain.plan.files ?? []).map((f) => f.content)]);
      const injected = text.includes('--task-dir') && text.includes('channel') && text.includes('serve');
      assert.equal(injected, adapter.capabilities.channel, adapter.id);
      assert.equal(asked.tier === 'channel', adapter.capabilities.channel, adapter.id);
      assert.ok(!plainText.includes('--task-dir'), `${adapter.id} without --channel`);
      if (adapter.capabilities.channel) {
        assert.match(asked.prompt, /`submit_report`/, adapter.id);
        assert.match(asked.prompt, /`ask_orchestrator`/, adapter.id);
        assert.match(asked.prompt, /`report_progress`/, adapter.id);
      }
    }
    assert.equal(antigravityAdapter.capabilities.channel, false);
    assert.deepEqual(NATIVE_ADAPTERS.filter((a) => a.capabilities.channel).map((a) => a.id).sort(), ['claude', 'codex', 'copilot', 'gemini', 'opencode']);
  });
});

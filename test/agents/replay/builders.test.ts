import * as assert from 'node:assert/strict';
import { DOCUMENT_IDS, type Mode, type ReportTier, type Task } from '../../../src/protocol';
import type { AgentAdapter, BuildContext, SpawnPlan } from '../../../src/agents/types';
import { NATIVE_ADAPTERS, antigravityAdapter, claudeAdapter, codexAdapter, copilotAdapter, geminiAdapter, opencodeAdapter } from '../../../src/agents/native';

const WS = '/work/repo/.caesar/wt/t_1';
const TASK_DIR = '/work/repo/.caesar/tasks/t_1';
const PROMPT = 'You are a delegated sub-agent… a long brief that must not travel on argv';

function ctx(over: { mode?: Mode; network?: boolean; model?: string; tier?: ReportTier; extra?: string[]; channel?: boolean; deadline?: number } = {}): BuildContext {
  const task: Task = {
    protocol: DOCUMENT_IDS.task,
    id: 't_1',
    created_at: '2026-11-29T00:00:00.000Z',
    agent: 'x',
    objective: 'o',
    context: '',
    constraints: [],
    acceptance_criteria: [],
    mode: over.mode ?? 'write',
    isolation: 'worktree',
    network: over.network ?? false,
    workspace: WS,
    deadline_ms: over.deadline ?? 600_000,
    depth: 0,
    report_path: `${TASK_DIR}/report.json`,
    events_path: `${TASK_DIR}/events.jsonl`,
    channel: over.channel ? { transport: 'mcp-stdio', command: '/usr/bin/node', args: ['/opt/caesar.js', 'channel', TASK_DIR], server_name: 'caesar' } : null,
  };
  const c: BuildContext = {
    task,
    taskDir: TASK_DIR,
    prompt: PROMPT,
    promptFile: `${TASK_DIR}/brief.md`,
    tier: over.tier ?? 'file',
    extraArgs: over.extra ?? [],
    reportSchemaFile: `${TASK_DIR}/report.schema.json`,
    finalMessageFile: `${TASK_DIR}/final-message.txt`,
  };
  if (over.model) c.model = over.model;
  return c;
}

/** Whether `flag` is followed by `value` somewhere in args. */
function hasPair(args: string[], flag: string, value: string): boolean {
  return args.some((a, i) => a === flag && args[i + 1] === value);
}

describe('adapter command lines', () => {
  it('the native adapters, in catalog order, each with version args', () => {
    assert.deepEqual(NATIVE_ADAPTERS.map((a) => a.id), ['codex', 'claude', 'opencode', 'copilot', 'gemini', 'antigravity']);
    for (const a of NATIVE_ADAPTERS) assert.deepEqual(a.versionArgs, ['--version']);
  });

  for (const adapter of NATIVE_ADAPTERS) {
    describe(adapter.id, () => {
      it('no shell, cwd is the workspace, extra args come last, display elides the prompt', () => {
        const plan = adapter.build(ctx({ extra: ['--x', 'y'] }));
        assert.equal(plan.cwd, WS);
        assert.deepEqual(plan.args.slice(-2), ['--x', 'y']);
        assert.ok(!plan.display.includes(PROMPT), plan.display);
        assert.ok(plan.display.startsWith(adapter.bin), plan.display);
      });

      it(adapter === antigravityAdapter ? 'keeps the prompt on argv (stdin undocumented; unverified)' : 'keeps the prompt off argv: it goes on stdin', () => {
        const plan = adapter.build(ctx());
        if (adapter === antigravityAdapter) {
          assert.ok(plan.args.includes(PROMPT));
          assert.equal(plan.stdin, undefined);
        } else {
          assert.ok(!plan.args.some((a) => a.includes(PROMPT)), plan.args.join(' '));
          assert.equal(plan.stdin, PROMPT);
          assert.ok(plan.display.endsWith(`< ${TASK_DIR}/brief.md`), plan.display);
        }
      });

      it('passes the model only when one is given', () => {
        const withModel = adapter.build(ctx({ model: 'm-1' })).args;
        const flag = adapter === codexAdapter || adapter === opencodeAdapter || adapter === geminiAdapter ? '-m' : '--model';
        assert.ok(hasPair(withModel, flag, 'm-1'), withModel.join(' '));
        assert.ok(!adapter.build(ctx()).args.includes(flag));
      });
    });
  }
});

describe('codex command line', () => {
  const args = (o: Parameters<typeof ctx>[0]) => codexAdapter.build(ctx(o)).args;
  it('exec --json, sandbox per mode, -C workspace, -o final message, prompt from stdin (`-`)', () => {
    const w = args({ mode: 'write' });
    assert.deepEqual(w.slice(0, 3), ['exec', '--json', '--skip-git-repo-check']);
    assert.ok(hasPair(w, '-s', 'workspace-write') && hasPair(w, '-C', WS) && hasPair(w, '-o', `${TASK_DIR}/final-message.txt`));
    assert.ok(hasPair(w, '--add-dir', TASK_DIR));
    assert.equal(w.at(-1), '-');
    const r = args({ mode: 'read-only' });
    assert.ok(hasPair(r, '-s', 'read-only') && !r.includes('--add-dir'));
  });
  it('network only under the writable sandbox', () => {
    const flag = 'sandbox_workspace_write.network_access=true';
    assert.ok(hasPair(args({ mode: 'write', network: true }), '-c', flag));
    assert.ok(!args({ mode: 'write', network: false }).includes(flag));
    assert.ok(!args({ mode: 'read-only', network: true }).includes(flag));
  });
  it('--output-schema only in the schema tier', () => {
    assert.ok(hasPair(args({ tier: 'schema' }), '--output-schema', `${TASK_DIR}/report.schema.json`));
    assert.ok(!args({ tier: 'file' }).includes('--output-schema'));
  });
  it('channel tier: the MCP server as TOML -c values, approved', () => {
    const a = args({ tier: 'channel', channel: true });
    assert.ok(hasPair(a, '-c', 'mcp_servers.caesar.command="/usr/bin/node"'));
    assert.ok(hasPair(a, '-c', `mcp_servers.caesar.args=["/opt/caesar.js","channel","${TASK_DIR}"]`));
    assert.ok(hasPair(a, '-c', 'mcp_servers.caesar.default_tools_approval_mode="approve"'));
    assert.ok(!args({ tier: 'file', channel: true }).some((x) => x.startsWith('mcp_servers')));
  });
});

describe('claude command line', () => {
  const plan = (o: Parameters<typeof ctx>[0]) => claudeAdapter.build(ctx(o));
  it('-p stream-json --verbose, permission mode per task mode, the task dir added', () => {
    const w = plan({ mode: 'write' }).args;
    assert.deepEqual(w.slice(0, 4), ['-p', '--output-format', 'stream-json', '--verbose']);
    assert.ok(hasPair(w, '--permission-mode', 'acceptEdits') && hasPair(w, '--add-dir', TASK_DIR));
    assert.ok(hasPair(plan({ mode: 'read-only' }).args, '--permission-mode', 'plan'));
  });
  it('--json-schema carries the strict report schema inline, without the draft URI claude refuses', () => {
    const a = plan({ tier: 'schema' }).args;
    const schema = JSON.parse(a[a.indexOf('--json-schema') + 1]!) as Record<string, unknown>;
    assert.equal(schema.$schema, undefined);
    assert.equal(schema.additionalProperties, false);
    assert.ok((schema.required as string[]).includes('summary'));
    assert.ok(!plan({ tier: 'file' }).args.includes('--json-schema'));
  });
  it('channel tier: an --mcp-config file and its tools allowed by name', () => {
    const p = plan({ tier: 'channel', channel: true });
    const file = `${TASK_DIR}/claude-mcp-config.json`;
    assert.ok(hasPair(p.args, '--mcp-config', file));
    assert.deepEqual(JSON.parse(p.files![0]!.content), { mcpServers: { caesar: { type: 'stdio', command: '/usr/bin/node', args: ['/opt/caesar.js', 'channel', TASK_DIR] } } });
    assert.match(p.args[p.args.indexOf('--allowedTools') + 1]!, /^mcp__caesar__get_task,.*mcp__caesar__submit_report$/);
    assert.equal(plan({ tier: 'file' }).files, undefined);
  });
  it('no network flag: the network is open', () => {
    assert.deepEqual(plan({ network: true }).args, plan({ network: false }).args);
    assert.equal(claudeAdapter.capabilities.network, 'open');
  });
});

describe('opencode command line', () => {
  const plan = (o: Parameters<typeof ctx>[0]) => opencodeAdapter.build(ctx(o));
  it('run --format json --dir, --auto in both modes (read-only is confined by the worktree), --thinking', () => {
    for (const mode of ['write', 'read-only'] as const) {
      const a = plan({ mode }).args;
      assert.deepEqual(a.slice(0, 3), ['run', '--format', 'json']);
      assert.ok(hasPair(a, '--dir', WS) && a.includes('--auto') && a.includes('--thinking'));
    }
    assert.equal(opencodeAdapter.capabilities.nativeReadOnly, false);
  });
  it('channel tier: the MCP server through OPENCODE_CONFIG_CONTENT, no file in the workspace', () => {
    const p = plan({ tier: 'channel', channel: true });
    assert.deepEqual(JSON.parse(p.env!.OPENCODE_CONFIG_CONTENT!), {
      mcp: { caesar: { type: 'local', command: ['/usr/bin/node', '/opt/caesar.js', 'channel', TASK_DIR], enabled: true } },
    });
    assert.equal(p.files, undefined);
    assert.equal(plan({ tier: 'file' }).env, undefined);
  });
});

describe('copilot command line', () => {
  const plan = (o: Parameters<typeof ctx>[0]) => copilotAdapter.build(ctx(o));
  it('JSON output, no -p (stdin is the prompt), the task dir added', () => {
    const a = plan({}).args;
    assert.ok(hasPair(a, '--output-format', 'json') && hasPair(a, '--add-dir', TASK_DIR));
    assert.ok(!a.includes('-p') && !a.includes('--prompt'));
  });
  it('write allows every tool; read-only pre-approves only the report file and denies the shell', () => {
    const w = plan({ mode: 'write' }).args;
    assert.ok(w.includes('--allow-all-tools') && !w.some((x) => x.startsWith('--deny-tool') || x.startsWith('--allow-tool')));
    const r = plan({ mode: 'read-only' }).args;
    assert.ok(!r.includes('--allow-all-tools'));
    assert.ok(r.includes(`--allow-tool=write(${TASK_DIR}/report.json)`) && r.includes('--deny-tool=shell'));
    assert.ok(!r.includes('--deny-tool=write'), 'a deny rule on write would beat the report allowance');
  });
  it('--allow-all-urls only with network', () => {
    assert.ok(plan({ network: true }).args.includes('--allow-all-urls'));
    assert.ok(!plan({ network: false }).args.includes('--allow-all-urls'));
  });
  it('channel tier: --additional-mcp-config @file', () => {
    const p = plan({ tier: 'channel', channel: true });
    assert.ok(hasPair(p.args, '--additional-mcp-config', `@${TASK_DIR}/copilot-mcp-config.json`));
    assert.deepEqual(JSON.parse(p.files![0]!.content).mcpServers.caesar.tools, ['*']);
  });
});

describe('gemini command line', () => {
  const plan = (o: Parameters<typeof ctx>[0]) => geminiAdapter.build(ctx(o));
  it('stream-json, --skip-trust, --yolo for write and the default approval mode for read-only', () => {
    const w = plan({ mode: 'write' }).args;
    assert.ok(hasPair(w, '--output-format', 'stream-json') && w.includes('--skip-trust') && w.includes('--yolo'));
    const r = plan({ mode: 'read-only' }).args;
    assert.ok(hasPair(r, '--approval-mode', 'default') && !r.includes('--yolo'));
  });
  it('the task dir is included, -p carries one short line', () => {
    const a = plan({}).args;
    assert.ok(hasPair(a, '--include-directories', TASK_DIR));
    assert.equal(a[a.indexOf('-p') + 1], 'Carry out the task brief given above.');
  });
  it('no schema tier; the channel goes through private system settings (test/agents/channel-injection.test.ts)', () => {
    assert.equal(geminiAdapter.capabilities.schemaTier, false);
    assert.equal(geminiAdapter.capabilities.channel, true);
  });
});

describe('antigravity command line (unverified: documented flags)', () => {
  const args = (o: Parameters<typeof ctx>[0]) => antigravityAdapter.build(ctx(o)).args;
  it('--print, stream-json, mode per task mode, print timeout from the deadline, skip permissions only to write', () => {
    const w = args({ mode: 'write', deadline: 90_000 });
    assert.ok(hasPair(w, '--output-format', 'stream-json') && hasPair(w, '--mode', 'accept-edits') && hasPair(w, '--print-timeout', '90s'));
    assert.ok(w.includes('--dangerously-skip-permissions'));
    const r = args({ mode: 'read-only' });
    assert.ok(hasPair(r, '--mode', 'plan') && !r.includes('--dangerously-skip-permissions'));
    assert.ok(hasPair(r, '--print-timeout', '10m'));
  });
  it('--json-schema only in the schema tier; no channel offered', () => {
    assert.ok(hasPair(args({ tier: 'schema' }), '--json-schema', `${TASK_DIR}/report.schema.json`));
    assert.ok(!args({}).includes('--json-schema'));
    assert.equal(antigravityAdapter.capabilities.channel, false);
  });
});

describe('capabilities', () => {
  it('schema tier where the CLI has one (codex, claude, antigravity), usage where the stream carries it', () => {
    const by = (pick: (a: AgentAdapter) => boolean) => NATIVE_ADAPTERS.filter(pick).map((a) => a.id);
    assert.deepEqual(by((a) => a.capabilities.schemaTier), ['codex', 'claude', 'antigravity']);
    assert.deepEqual(by((a) => a.capabilities.reportsUsage), ['codex', 'claude', 'opencode', 'copilot', 'gemini', 'antigravity']);
    assert.equal(codexAdapter.capabilities.network, 'write-only');
  });
  it('plans are plain data (no functions), so the supervisor can log them', () => {
    const plan: SpawnPlan = codexAdapter.build(ctx());
    assert.deepEqual(JSON.parse(JSON.stringify(plan)), plan);
  });
});

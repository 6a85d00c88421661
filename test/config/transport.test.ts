import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import type { AgentAdapter, AgentCapabilities } from '../../src/agents/types';
import { ConfigError, loadConfig } from '../../src/config';
import { catalogueFromAdapters, type AgentCatalogue } from '../../src/engine/resolve/agent-catalogue';
import { DelegationRefusedError, resolveDelegation, type DelegationRequest } from '../../src/engine/resolve/resolve';
import { caesarInSandbox as caesar } from '../cli/sandbox-cli';
import { fakeProgram, rejects, sandbox, type Sandbox } from './helpers';

/**
 * `[transport] <agent> = "stream" | "acp"` and `[policy] permissions`: loaded with provenance, carried into the launch
 * draft, refused (with the layer to fix) for an agent whose adapter has no ACP command line, and edited by
 * `caesar agents set-transport|unset-transport` and `caesar policy set permissions`.
 */

const CAPS: AgentCapabilities = { nativeReadOnly: true, network: 'open', schemaTier: false, channel: false, model: true, reportsUsage: false };

/** Two installed fake agents: `talker` has an ACP command line, `plain` has none. */
function catalogueIn(bin: string): AgentCatalogue {
  const adapter = (id: string, acp: boolean) => {
    fakeProgram(bin, `fake-${id}`);
    const base = { id, displayName: `Fake ${id}`, bin: `fake-${id}`, capabilities: CAPS };
    return (acp ? { ...base, acp: { plan: () => ({ command: `fake-${id}`, args: ['--acp'], cwd: '/', display: 'fake --acp' }) } } : base) as unknown as AgentAdapter;
  };
  return catalogueFromAdapters([adapter('talker', true), adapter('plain', false)], { env: { PATH: bin } });
}

describe('transport and permissions settings', () => {
  let box: Sandbox;
  let catalogue: AgentCatalogue;
  beforeEach(() => {
    box = sandbox({ git: true, commit: true });
    catalogue = catalogueIn(path.join(box.home, 'bin'));
  });
  afterEach(() => box.cleanup());

  async function resolve(request: Partial<DelegationRequest>) {
    const loaded = await loadConfig({ root: box.root, home: box.home });
    return resolveDelegation({ objective: 'do it', workspace: box.root, ...request }, { loaded, catalogue, root: box.root, env: {} });
  }

  it('loads [transport] per agent and [policy] permissions, each with the layer it came from', async () => {
    box.write(box.globalFile, '[transport]\ntalker = "acp"\nplain = "stream"\n[policy]\npermissions = "allow-in-worktree"\n');
    box.write(box.localFile, '[transport]\nplain = "acp"\n[policy]\npermissions = "deny"\n');
    const loaded = await loadConfig({ root: box.root, home: box.home });
    assert.deepEqual(loaded.config.transports, { talker: 'acp', plain: 'acp' });
    assert.deepEqual(loaded.provenance.transports, { talker: 'global', plain: 'local' });
    assert.equal(loaded.config.policy.permissions, 'deny', 'a repository layer may make permissions stricter');
    assert.equal(loaded.provenance.policy.permissions, 'local');
    const defaults = await loadConfig({ home: path.join(box.home, 'elsewhere') });
    assert.deepEqual([defaults.config.policy.permissions, defaults.provenance.policy.permissions, defaults.config.transports], ['ask', 'default', {}]);
  });

  it('names the key, the line and the accepted values when a transport or permissions value is wrong', async () => {
    box.write(box.projectFile, '[policy]\npermissions = "yes"\n[transport]\ntalker = "websocket"\n');
    const err = await rejects(loadConfig({ root: box.root, home: box.home }));
    assert.ok(err instanceof ConfigError, err.message);
    assert.match(err.message, /line 2: policy\.permissions: .*"ask"\|"allow-in-worktree"\|"deny"/);
    assert.match(err.message, /line 4: transport\.talker: .*"stream"\|"acp"/);
  });

  it('launches over the stream with permissions "ask" by default, and over ACP when the agent is set to it', async () => {
    const bare = await resolve({ agent: 'talker' });
    assert.equal(bare.launch.transport, 'stream');
    assert.equal(bare.launch.permissions, 'ask');
    box.write(box.projectFile, '[transport]\ntalker = "acp"\n[policy]\npermissions = "deny"\n');
    const acp = await resolve({ agent: 'talker' });
    assert.equal(acp.launch.transport, 'acp');
    assert.equal(acp.launch.permissions, 'deny');
    // A request may choose either transport for one task, whatever the configuration says.
    assert.equal((await resolve({ agent: 'talker', transport: 'stream' })).launch.transport, 'stream');
    assert.equal((await resolve({ agent: 'plain' })).launch.transport, 'stream', 'a transport set for one agent is not another one\'s');
  });

  it('refuses ACP for an agent without an ACP command line, naming where it was asked and how to undo it', async () => {
    box.write(box.localFile, '[transport]\nplain = "acp"\n');
    const configured = await rejects(resolve({ agent: 'plain' }));
    assert.ok(configured instanceof DelegationRefusedError, configured.message);
    assert.equal(configured.code, 'transport');
    assert.equal(configured.exitCode, 2);
    assert.match(configured.message, /Agent "plain" \(Fake plain\) cannot run over ACP .*transport "acp" is set for it in the local config, \.caesar\/config\.local\.toml/);
    assert.match(configured.message, /caesar agents unset-transport plain --local$/);
    box.write(box.localFile, '');
    const requested = await rejects(resolve({ agent: 'plain', transport: 'acp' }));
    assert.ok(requested instanceof DelegationRefusedError);
    assert.match(requested.message, /transport "acp" was requested for this task/);
    const bad = await rejects(resolve({ agent: 'talker', transport: 'grpc' as never }));
    assert.match(bad.message, /Invalid transport "grpc": expected one of stream, acp/);
  });

  it('caesar agents set-transport / unset-transport edit [transport] of a layer; list shows it; doctor reports it', async () => {
    const set = await caesar(box, ['agents', 'set-transport', 'gemini', 'acp', '--local']);
    assert.equal(set.code, 0, set.err);
    assert.match(box.read(box.localFile), /\[transport\]\ngemini = "acp"/);
    const list = await caesar(box, ['agents', 'list', '--json']);
    assert.deepEqual(list.json.agents.find((a: { id: string }) => a.id === 'gemini').transport, { value: 'acp', origin: 'local' });
    const doctor = await caesar(box, ['doctor', '--json']);
    assert.deepEqual(doctor.json.agents.find((a: { id: string }) => a.id === 'gemini').acp, { transport: 'acp', caesar_speaks_acp: true }, 'not installed: not probed');
    const wrongLayer = await caesar(box, ['agents', 'unset-transport', 'gemini']);
    assert.equal(wrongLayer.code, 2);
    assert.match(wrongLayer.err, /The project layer does not set a transport for "gemini"; local does: caesar agents unset-transport gemini --local/);
    assert.equal((await caesar(box, ['agents', 'unset-transport', 'gemini', '--local'])).code, 0);
    assert.doesNotMatch(box.read(box.localFile), /gemini/);
    // An agent without an ACP command line is refused before anything is written.
    const antigravity = await caesar(box, ['agents', 'set-transport', 'antigravity', 'acp']);
    assert.equal(antigravity.code, 2);
    assert.match(antigravity.err, /Agent "antigravity" cannot run over ACP/);
    // Every agent can be set back to the stream, and nonsense is refused before anything is written.
    assert.equal((await caesar(box, ['agents', 'set-transport', 'codex', 'stream'])).code, 0);
    assert.match(box.read(box.projectFile), /\[transport\]\ncodex = "stream"/);
    assert.doesNotMatch(box.read(box.projectFile), /antigravity/, 'the refused transport was never written');
    const nonsense = await caesar(box, ['agents', 'set-transport', 'codex', 'smoke-signals']);
    assert.equal(nonsense.code, 2);
    assert.match(nonsense.err, /Unknown transport "smoke-signals": expected stream or acp/);
    const demo = await caesar(box, ['agents', 'set-transport', 'nobody', 'stream']);
    assert.match(demo.err, /Unknown agent "nobody"/);
    const none = await caesar(box, ['agents', 'unset-transport', 'claude']);
    assert.match(none.err, /No layer sets a transport for "claude"/);
  });

  it('caesar policy set permissions checks the value as loading does', async () => {
    assert.equal((await caesar(box, ['policy', 'set', 'permissions', 'deny'])).code, 0);
    assert.match(box.read(box.projectFile), /permissions = "deny"/);
    const bad = await caesar(box, ['policy', 'set', 'permissions', 'sometimes']);
    assert.equal(bad.code, 2);
    assert.match(bad.err, /Invalid value "sometimes" for permissions: .* Give ask, allow-in-worktree or deny\./);
    const show = await caesar(box, ['policy', 'show', '--json']);
    assert.deepEqual(show.json.policy.find((f: { key: string }) => f.key === 'permissions'), { key: 'permissions', value: 'deny', origin: 'project' });
  });

  it('doctor checks ACP support of the installed version: the help of a native ACP agent, the adapter program of another', async () => {
    const bin = path.join(box.home, 'agents');
    // gemini whose help names --acp; copilot whose help does not; claude without its adapter; codex with adapter and bwrap.
    fakeProgram(bin, 'gemini', 'Usage: gemini [options]\n  --acp   Starts the agent in ACP mode');
    fakeProgram(bin, 'copilot', 'Usage: copilot [options]');
    fakeProgram(bin, 'claude', '2.1.332 (Claude Code)');
    fakeProgram(bin, 'codex', 'codex-cli 0.171.0');
    fakeProgram(bin, 'codex-acp');
    fakeProgram(bin, 'bwrap');
    const r = await caesar(box, ['doctor', '--json'], { PATH: bin });
    assert.equal(r.code, 0, r.err);
    const acp = (id: string) => r.json.agents.find((a: { id: string }) => a.id === id).acp;
    assert.equal(acp('gemini').supported, true);
    assert.equal(acp('gemini').detail, 'gemini --acp');
    assert.equal(acp('copilot').supported, false);
    assert.match(acp('copilot').detail, /does not mention copilot --acp/);
    assert.equal(acp('claude').supported, false);
    assert.match(acp('claude').install, /@zed-industries\/claude-agent-acp@0\.23\.1/);
    assert.equal(acp('codex').supported, true);
    assert.equal(acp('opencode').supported, undefined, 'not installed: not checked');
    assert.deepEqual([acp('demo').supported, acp('demo').detail, acp('demo').caesar_speaks_acp], [true, 'built in', true]);
    assert.equal(acp('antigravity'), undefined, 'no ACP entry point: no ACP line');
    assert.equal(acp('opencode').transport, 'stream');
    const human = await caesar(box, ['doctor'], { PATH: bin });
    assert.match(human.out, /ACP: this version speaks it \(gemini --acp\)/);
    assert.match(human.out, /ACP: not available: its ACP adapter claude-agent-acp is not on PATH; install: npm install -g @zed-industries\/claude-agent-acp@0\.23\.1/);
  });

  it('doctor: codex-acp without bwrap is not enough', async () => {
    const bin = path.join(box.home, 'agents');
    fakeProgram(bin, 'codex', 'codex-cli 0.171.0');
    fakeProgram(bin, 'codex-acp');
    const r = await caesar(box, ['doctor', '--json'], { PATH: bin });
    const codex = r.json.agents.find((a: { id: string }) => a.id === 'codex').acp;
    assert.equal(codex.supported, false);
    assert.match(codex.detail, /bwrap is not on PATH/);
    assert.match(codex.install, /bubblewrap/);
  });
});

import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { AgentAdapter, AgentCapabilities } from '../../src/agents/types';
import { loadConfig, recordTrust } from '../../src/config';
import { catalogueFromAdapters, defaultAgentCatalogue, findProgram, probeVersion, type AgentCatalogue } from '../../src/engine/resolve/agent-catalogue';
import { DelegationRefusedError, resolveDelegation, type DelegationRequest } from '../../src/engine/resolve/resolve';
import { fakeProgram, rejects, sandbox, type Sandbox } from './helpers';

const CAPS: AgentCapabilities = { nativeReadOnly: true, network: 'open', schemaTier: false, channel: false, model: true, reportsUsage: false };

/** Adapters whose programs are real executables in `bin` when installed, and absent otherwise. */
function catalogueOf(bin: string, agents: Record<string, { installed: boolean; caps?: Partial<AgentCapabilities> }>): AgentCatalogue {
  const adapters = Object.entries(agents).map(([id, spec]) => {
    if (spec.installed) fakeProgram(bin, `fake-${id}`);
    return { id, displayName: `Fake ${id}`, bin: `fake-${id}`, capabilities: { ...CAPS, ...spec.caps } } as unknown as AgentAdapter;
  });
  return catalogueFromAdapters(adapters, { env: { PATH: bin } });
}

describe('delegation resolution (engine/resolve/resolve)', () => {
  let box: Sandbox;
  let bin: string;
  let catalogue: AgentCatalogue;
  beforeEach(() => {
    box = sandbox({ git: true, commit: true });
    bin = path.join(box.home, 'bin');
    catalogue = catalogueOf(bin, {
      codex: { installed: false, caps: { network: 'write-only' } },
      antigravity: { installed: true },
      gemini: { installed: true },
      claude: { installed: true },
      plain: { installed: true, caps: { model: false, network: 'unknown', nativeReadOnly: false } },
      closable: { installed: true, caps: { network: 'controllable' } },
      wo: { installed: true, caps: { network: 'write-only' } },
    });
  });
  afterEach(() => box.cleanup());

  async function resolve(request: Partial<DelegationRequest>, env: NodeJS.ProcessEnv = {}) {
    const loaded = await loadConfig({ root: box.root, home: box.home });
    return resolveDelegation({ objective: 'do it', workspace: box.root, ...request }, { loaded, catalogue, root: box.root, env });
  }

  async function refusal(request: Partial<DelegationRequest>, env: NodeJS.ProcessEnv = {}): Promise<DelegationRefusedError> {
    const err = await rejects(resolve(request, env));
    assert.ok(err instanceof DelegationRefusedError, err.message);
    return err;
  }

  it('carries [sandbox] into the launch, for the supervisor', async () => {
    box.write(box.projectFile, '[sandbox]\nmode = "required"\nhide = ["~/x"]\n');
    const { launch } = await resolve({ agent: 'claude' });
    assert.deepEqual(launch.sandbox, { mode: 'required', hide: ['~/x'], read_write: [], allow_hosts: [] });
  });

  it('needs an agent or a role, a known role and a known agent', async () => {
    assert.equal((await refusal({})).code, 'usage');
    assert.equal((await refusal({ role: 'nope' })).code, 'unknown-role');
    const unknown = await refusal({ agent: 'nope' });
    assert.equal(unknown.code, 'unknown-agent');
    assert.match(unknown.message, /Known agents: codex, antigravity/);
    assert.equal((await refusal({ agent: 'codex' })).code, 'not-installed');
    const badShape = await refusal({ agent: 'gemini', mode: 'rw' as never });
    assert.equal(badShape.code, 'usage');
    assert.match(badShape.message, /Invalid mode "rw": expected one of read-only, write/);
  });

  it('produces a launch draft with the policy defaults for a bare agent', async () => {
    const { launch, skipped, warnings } = await resolve({ agent: 'gemini', context: 'ctx' });
    assert.deepEqual(skipped, []);
    assert.deepEqual(warnings, []);
    assert.deepEqual(launch, {
      workspace: box.root,
      agent: 'gemini',
      objective: 'do it',
      context: 'ctx',
      constraints: [],
      acceptance_criteria: [],
      mode: 'write',
      isolation: 'auto',
      network: true,
      network_cut: false,
      timeout_ms: 600_000,
      depth: 1,
      channel: false,
      checks: [],
      extra_args: [],
      allow_inplace_write: false,
      worktree_setup: { copy: [], link: [], setup: [] },
      findings: [],
      max_parallel: 4,
      env_policy: 'inherit',
      env_allow: [],
      transport: 'stream',
      permissions: 'ask',
      launcher: { kind: 'local' },
    });
  });

  it('walks the role fallback chain, skipping uninstalled and refused agents with reasons', async () => {
    box.write(box.projectFile, '[policy]\ndenied = ["antigravity"]\n[[role]]\nname = "r"\nagents = ["codex", "antigravity", "claude", "ghost", "gemini"]\nmode = "read-only"\n');
    // From inside a claude task: claude delegating to itself is the recursion allow_recursion = false refuses.
    const { launch, skipped } = await resolve({ role: 'r' }, { CAESAR_DEPTH: '1', CAESAR_AGENT: 'claude' });
    assert.equal(launch.agent, 'gemini');
    assert.equal(launch.role, 'r');
    assert.deepEqual(
      skipped.map((s) => [s.agent, s.reason.split(' ')[0]]),
      [
        ['codex', 'not'],
        ['antigravity', 'Agent'],
        ['claude', 'Agent'],
        ['ghost', 'unknown'],
      ],
    );
    assert.match(skipped[1]!.reason, /denied/);
    assert.match(skipped[2]!.reason, /recursion/);
  });

  it('refuses a role with no usable agent, joining every reason; an empty list has its own message', async () => {
    box.write(box.projectFile, '[[role]]\nname = "r"\nagents = ["codex", "claude"]\nmode = "write"\n[[role]]\nname = "empty"\nagents = []\nmode = "write"\n');
    const none = await refusal({ role: 'r' }, { CAESAR_DEPTH: '1', CAESAR_AGENT: 'claude' });
    assert.equal(none.code, 'no-agent');
    assert.match(none.message, /codex: not installed ; claude: .*recursion/);
    assert.equal(none.skipped.length, 2);
    assert.match((await refusal({ role: 'empty' })).message, /lists no agent: give it some with `caesar role add empty --agents <id,…> --mode write` \(rewrites its \[\[role\]\] entry in \.caesar\/config\.toml/);
  });

  it('lets an explicit agent beat the role pick while the role defaults still apply', async () => {
    box.write(box.projectFile, '[[role]]\nname = "r"\nagents = ["antigravity"]\nmode = "read-only"\nisolation = "worktree"\ntimeout = "2m"\n');
    const { launch } = await resolve({ role: 'r', agent: 'gemini' });
    assert.equal(launch.agent, 'gemini');
    assert.equal(launch.mode, 'read-only');
    assert.equal(launch.isolation, 'worktree');
    assert.equal(launch.timeout_ms, 120_000);
  });

  it('applies the policy with the real depth, in rule order', async () => {
    box.write(box.projectFile, '[policy]\nmax_depth = 1\nallowed = ["gemini", "claude"]\n');
    assert.equal((await resolve({ agent: 'gemini' })).launch.depth, 1);
    const deep = await refusal({ agent: 'gemini' }, { CAESAR_DEPTH: '1' });
    assert.equal(deep.code, 'depth');
    assert.equal((await refusal({ agent: 'antigravity' }, { CAESAR_DEPTH: '1' })).code, 'allowlist', 'allowlist is checked before depth');
    assert.equal((await resolve({ agent: 'claude' })).launch.agent, 'claude', 'claude at the top level is not recursion');
    assert.equal((await resolve({ agent: 'gemini' }, { CAESAR_DEPTH: 'garbage' })).launch.depth, 1);
  });

  it('resolves mode, isolation, network and timeout as explicit > role > policy', async () => {
    box.write(
      box.projectFile,
      '[policy]\ndefault_mode = "read-only"\ndefault_isolation = "worktree"\ndefault_network = "off"\ndefault_timeout = "3m"\n[[role]]\nname = "r"\nagents = ["closable"]\nmode = "write"\nnetwork = "on"\nisolation = "auto"\ntimeout = 45000\n',
    );
    const policyOnly = (await resolve({ agent: 'closable' })).launch;
    assert.deepEqual([policyOnly.mode, policyOnly.isolation, policyOnly.network, policyOnly.timeout_ms], ['read-only', 'worktree', false, 180_000]);
    const role = (await resolve({ role: 'r' })).launch;
    assert.deepEqual([role.mode, role.isolation, role.network, role.timeout_ms], ['write', 'auto', true, 45_000]);
    const explicit = (await resolve({ role: 'r', mode: 'read-only', isolation: 'inplace', network: 'off', timeout: '90s' })).launch;
    assert.deepEqual([explicit.mode, explicit.isolation, explicit.network, explicit.timeout_ms], ['read-only', 'inplace', false, 90_000]);
    const badTimeout = await refusal({ agent: 'closable', timeout: '1.5m' });
    assert.equal(badTimeout.code, 'usage');
    assert.match(badTimeout.message, /accepted|expected/);
    assert.equal((await refusal({ agent: 'closable', timeout: '0s' })).code, 'usage');
  });

  it('refuses an in-place write before anything is written, naming where inplace came from', async () => {
    box.write(box.projectFile, '[policy]\ndefault_isolation = "inplace"\n[[role]]\nname = "w"\nagents = ["gemini"]\nmode = "write"\nisolation = "inplace"\n');
    const before = fs.readdirSync(path.join(box.root, '.caesar'));
    assert.match((await refusal({ agent: 'gemini', isolation: 'inplace' })).message, /explicitly requested/);
    assert.match((await refusal({ role: 'w' })).message, /inherited from role "w"/);
    const fromPolicy = await refusal({ agent: 'gemini' });
    assert.equal(fromPolicy.code, 'inplace-write');
    assert.match(fromPolicy.message, /inherited from the policy default/);
    assert.deepEqual(fs.readdirSync(path.join(box.root, '.caesar')), before, 'no task directory');
    assert.equal((await resolve({ agent: 'gemini', mode: 'read-only' })).launch.isolation, 'inplace', 'read-only in place is fine');
    // Only the user's own layer can allow it: a repository's layers can only tighten (test/reliability/repository-config).
    box.write(box.globalFile, '[policy]\nallow_inplace_write = true\n');
    const allowed = (await resolve({ agent: 'gemini' })).launch;
    assert.equal(allowed.isolation, 'inplace');
    assert.equal(allowed.allow_inplace_write, true);
  });

  it('refuses a write outside a usable repository unless the policy allows in-place writes, naming key, file and command', async () => {
    const bare = sandbox();
    const noCommit = sandbox({ git: true });
    try {
      const resolveIn = async (dir: Sandbox, request: Partial<DelegationRequest>) => {
        const loaded = await loadConfig({ root: dir.root, home: dir.home });
        return resolveDelegation({ objective: 'x', workspace: dir.root, agent: 'gemini', ...request }, { loaded, catalogue, root: dir.root, env: {} });
      };
      const refusedIn = async (dir: Sandbox, request: Partial<DelegationRequest>) => {
        const err = await rejects(resolveIn(dir, request));
        assert.ok(err instanceof DelegationRefusedError, err.message);
        return err;
      };
      const auto = await refusedIn(bare, {});
      assert.equal(auto.code, 'inplace-write');
      assert.match(auto.message, /no worktree is possible here \(.* is not inside a git repository\)/);
      assert.match(auto.message, /allow_inplace_write = false, from the built-in default/);
      assert.match(auto.message, /`caesar policy set allow_inplace_write true --global` \(sets allow_inplace_write in \[policy\] of ~\/\.config\/caesar\/config\.toml\)/);
      assert.match(auto.message, /git init/);
      assert.equal((await refusedIn(bare, { isolation: 'inplace' })).code, 'inplace-write');
      assert.equal((await refusedIn(noCommit, {})).code, 'inplace-write', 'a repository without a commit has no worktree either');
      const worktree = await refusedIn(bare, { isolation: 'worktree', mode: 'read-only' });
      assert.equal(worktree.code, 'no-worktree');
      assert.match(worktree.message, /Worktree isolation is impossible: isolation "worktree" was explicitly requested/);
      assert.equal(fs.existsSync(path.join(bare.root, '.caesar')), false, 'a refusal leaves no task directory');

      assert.equal((await resolveIn(bare, { mode: 'read-only' })).launch.isolation, 'auto', 'reading in place is fine');
      // A repository layer cannot allow it (it can only tighten): the remedy names the user's own layer.
      bare.write(bare.localFile, '[policy]\nallow_inplace_write = true\n');
      const fromLocal = await refusedIn(bare, {});
      assert.equal(fromLocal.code, 'inplace-write');
      assert.match(fromLocal.message, /`caesar policy set allow_inplace_write true --global` \(sets allow_inplace_write in \[policy\] of ~\/\.config\/caesar\/config\.toml\)/);
      bare.write(bare.globalFile, '[policy]\nallow_inplace_write = true\n');
      const allowed = (await resolveIn(bare, {})).launch;
      assert.deepEqual([allowed.isolation, allowed.allow_inplace_write], ['auto', true]);
    } finally {
      bare.cleanup();
      noCommit.cleanup();
    }
  });

  it('resolves the network against the capability, refusing "on" where impossible and warning otherwise', async () => {
    const refused = await refusal({ agent: 'wo', mode: 'read-only', network: 'on' });
    assert.equal(refused.code, 'network');
    const closed = await resolve({ agent: 'wo', mode: 'read-only' });
    assert.equal(closed.launch.network, false);
    assert.equal(closed.launch.findings[0]?.title, 'Network not as requested');
    assert.equal(closed.warnings.length, 1);
    const cannotClose = await resolve({ agent: 'gemini', network: 'off' });
    assert.equal(cannotClose.launch.network, true);
    assert.equal(cannotClose.launch.findings[0]?.severity, 'info');
  });

  it('resolves models: explicit refused on an incapable agent, configured ones dropped with a finding', async () => {
    box.write(box.projectFile, '[models]\nplain = "big"\ngemini = "flash"\n[[role]]\nname = "r"\nagents = ["gemini"]\nmode = "write"\nmodel = "pro"\n');
    assert.equal((await resolve({ agent: 'gemini' })).launch.model, 'flash');
    assert.equal((await resolve({ role: 'r' })).launch.model, 'pro');
    assert.equal((await resolve({ role: 'r', model: 'ultra' })).launch.model, 'ultra');
    assert.equal((await refusal({ agent: 'plain', model: 'x' })).code, 'model');
    const dropped = await resolve({ agent: 'plain' });
    assert.equal(dropped.launch.model, undefined);
    assert.equal('model' in dropped.launch, false);
    assert.deepEqual(dropped.launch.findings.map((f) => f.title), ['Model not applied']);
  });

  it('prepends the role system prompt to the context, blank parts dropped', async () => {
    box.write(box.projectFile, '[[role]]\nname = "r"\nagents = ["gemini"]\nmode = "read-only"\nsystem_prompt_file = "roles/r.md"\n[[role]]\nname = "missing"\nagents = ["gemini"]\nmode = "read-only"\nsystem_prompt_file = "roles/none.md"\n');
    box.write('.caesar/roles/r.md', 'Be careful.\n');
    assert.equal((await resolve({ role: 'r', context: 'The bug is in x.ts' })).launch.context, 'Be careful.\n\n\n---\n\nThe bug is in x.ts');
    assert.equal((await resolve({ role: 'r', context: '  ' })).launch.context, 'Be careful.\n');
    assert.equal((await resolve({ role: 'missing', context: 'c' })).launch.context, 'c', 'a missing prompt file is an empty prompt');
    fs.mkdirSync(path.join(box.root, '.caesar', 'roles', 'none.md'));
    const unreadable = await refusal({ role: 'missing' });
    assert.equal(unreadable.code, 'role-prompt');
    assert.match(unreadable.message, /role "missing"/);
  });

  it('orders the checks: every [[check]], then the role\'s, then the request\'s; an empty requested one is refused', async () => {
    box.write(box.globalFile, '[[check]]\nname = "tests"\ncommand = "npm test"\ntimeout = "2m"\n[[role]]\nname = "fixer"\nagents = ["claude"]\nmode = "write"\nchecks = ["npm run lint"]\n');
    const { launch } = await resolve({ role: 'fixer', checks: ['git diff --check'] });
    assert.deepEqual(launch.checks, [
      { name: 'tests', command: 'npm test', timeout_ms: 120_000 },
      { name: 'fixer-1', command: 'npm run lint', timeout_ms: 600_000 },
      { name: 'check-1', command: 'git diff --check', timeout_ms: 600_000 },
    ]);
    assert.deepEqual((await resolve({ agent: 'claude' })).launch.checks.map((c) => c.name), ['tests'], 'no role: no role checks');
    assert.match((await refusal({ agent: 'claude', checks: [' '] })).message, /Check 1 is empty/);
  });

  it('carries the [worktree] settings, max_parallel and a template agent definition into the launch', async () => {
    box.write(box.projectFile, '[policy]\nmax_parallel = 2\n[worktree]\ncopy = ["node_modules"]\nsetup = ["npm ci"]\n[[agent]]\nid = "gemini"\nbin = "fake-gemini"\nargs = ["-p", "{{prompt}}"]\n');
    await recordTrust(box.home, box.projectFile, box.read(box.projectFile), 'test');
    const { launch } = await resolve({ agent: 'gemini' });
    assert.deepEqual(launch.worktree_setup, { copy: ['node_modules'], link: [], setup: ['npm ci'] });
    assert.equal(launch.max_parallel, 2);
    assert.deepEqual(launch.generic_agent, { id: 'gemini', bin: 'fake-gemini', args: ['-p', '{{prompt}}'] });
  });

  it('untrusted: a repository [[agent]] is unknown to delegation and nothing runs', async () => {
    box.write(box.projectFile, '[[agent]]\nid = "evil"\nbin = "/bin/sh"\nargs = ["-c", "touch pwned", "{{prompt}}"]\n[worktree]\nsetup = ["touch pwned"]\n');
    const loaded = await loadConfig({ root: box.root, home: box.home, trusted: false });
    const real = defaultAgentCatalogue(loaded.config.agents, { PATH: bin });
    assert.ok(!real.ids().includes('evil'));
    const err = await rejects(resolveDelegation({ objective: 'x', workspace: box.root, agent: 'evil' }, { loaded, catalogue: real, root: box.root, env: {} }));
    assert.ok(err instanceof DelegationRefusedError && err.code === 'unknown-agent');
    assert.equal(fs.existsSync(path.join(box.root, 'pwned')), false);
  });
});

describe('agent catalogue (engine/resolve/agent-catalogue)', () => {
  let box: Sandbox;
  beforeEach(() => {
    box = sandbox();
  });
  afterEach(() => box.cleanup());

  it('finds programs on PATH only when executable, and by path', async () => {
    const bin = path.join(box.home, 'bin');
    const tool = fakeProgram(bin, 'tool');
    fs.writeFileSync(path.join(bin, 'noexec'), 'x', { mode: 0o644 });
    assert.equal(await findProgram('tool', { PATH: `/nonexistent${path.delimiter}${bin}` }), tool);
    assert.equal(await findProgram('noexec', { PATH: bin }), undefined);
    assert.equal(await findProgram(tool, { PATH: '' }), tool);
    assert.equal(await findProgram('tool', { PATH: '' }), undefined);
  });

  it('reads the first line of --version, and gives up after the timeout', async () => {
    const bin = path.join(box.home, 'bin');
    const tool = fakeProgram(bin, 'tool', 'tool 9.9\nmore');
    assert.equal(await probeVersion(tool), 'tool 9.9');
    const slow = path.join(bin, 'slow');
    // Answers, but only after 5 s: a probe that waited would return the version.
    fs.writeFileSync(slow, `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} -e "setTimeout(() => console.log('slow 1.0'), 5000)"\n`, { mode: 0o755 });
    assert.equal(await probeVersion(slow, ['--version'], process.env, 300), undefined);
  });

  it('lists every built-in agent plus [[agent]] entries; only the demo agent is available without agent CLIs', async () => {
    const loaded = await loadConfig({ root: box.root, home: box.home });
    const cat = defaultAgentCatalogue([...loaded.config.agents, { id: 'mine', bin: 'mine-cli', args: ['{{prompt}}'] }], { PATH: path.join(box.home, 'empty') });
    assert.deepEqual(cat.ids(), ['codex', 'claude', 'opencode', 'copilot', 'gemini', 'antigravity', 'demo', 'mine']);
    for (const id of cat.ids()) assert.equal(await cat.isInstalled(id), id === 'demo', id);
    assert.match((await cat.version!('demo'))!, /built in/);
  });
});

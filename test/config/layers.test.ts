import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ConfigError, DEFAULT_POLICY, findRoot, homeDir, loadConfig, recordTrust, trustRepositoryConfig } from '../../src/config';
import { rejects, sandbox, type Sandbox } from './helpers';

describe('config layers: load and merge', () => {
  let box: Sandbox;
  beforeEach(() => {
    box = sandbox();
  });
  afterEach(() => box.cleanup());

  const load = (extra: { trusted?: boolean } = {}) => loadConfig({ root: box.root, home: box.home, ...extra });

  it('gives the defaults, all from "default", when no file exists (a missing file is never an error)', async () => {
    const loaded = await load();
    assert.deepEqual(loaded.config.policy, DEFAULT_POLICY);
    assert.equal(loaded.config.policy.default_timeout_ms, 600_000);
    assert.deepEqual(loaded.config.worktree, { copy: [], link: [], setup: [] });
    assert.deepEqual(
      loaded.config.roles.map((r) => r.name),
      ['reviewer', 'implementer', 'investigator'],
    );
    assert.ok(Object.values(loaded.provenance.policy).every((o) => o === 'default'));
    assert.equal(loaded.layers.length, 0);
  });

  it('merges [policy] field by field, most specific layer last, with provenance per field', async () => {
    box.write(box.globalFile, '[policy]\nmax_parallel = 2\ndefault_mode = "read-only"\ndefault_timeout = "5m"\n');
    box.write(box.projectFile, '[policy]\nmax_parallel = 3\n');
    box.write(box.localFile, '[policy]\nmax_depth = 1\n');
    const { config, provenance } = await load();
    assert.equal(config.policy.max_parallel, 3);
    assert.equal(config.policy.default_mode, 'read-only');
    assert.equal(config.policy.default_timeout_ms, 300_000);
    assert.equal(config.policy.max_depth, 1);
    assert.equal(provenance.policy.max_parallel, 'project');
    assert.equal(provenance.policy.default_mode, 'global');
    assert.equal(provenance.policy.default_timeout_ms, 'global');
    assert.equal(provenance.policy.max_depth, 'local');
    assert.equal(provenance.policy.allow_recursion, 'default');
  });

  it('replaces lists instead of merging them ([policy] and [worktree]); a repository layer\'s allowed list only narrows the user\'s', async () => {
    box.write(box.globalFile, '[policy]\nallowed = ["codex", "claude"]\nenv_allow = ["A"]\n[worktree]\ncopy = ["node_modules", ".env"]\n');
    box.write(box.projectFile, '[policy]\nallowed = ["gemini", "claude"]\n[worktree]\ncopy = [".venv/"]\n');
    const narrowed = await load();
    assert.deepEqual(narrowed.config.policy.allowed, ['claude'], 'the repository narrows the user\'s list; gemini is not added');
    assert.equal(narrowed.provenance.policy.allowed, 'project');
    assert.match(narrowed.notes.map((n) => n.message).join('\n'), /names gemini, not in your global allowed list/);
    box.write(box.localFile, '[policy]\nallowed = []\n');
    const { config, provenance } = await load();
    assert.deepEqual(config.policy.allowed, ['codex', 'claude'], 'an empty list (every agent) from a repository layer does not widen the user\'s');
    assert.equal(provenance.policy.allowed, 'global');
    assert.deepEqual(config.worktree.copy, ['.venv'], 'replaced, and the trailing slash normalized');
    assert.equal(provenance.worktree.copy, 'project');
    box.write(box.globalFile, '[policy]\nenv_allow = ["A", "B"]\n');
    box.write(box.localFile, '[policy]\nenv_allow = []\n');
    const emptied = await load();
    assert.deepEqual(emptied.config.policy.env_allow, [], 'an empty list in a lower layer replaces, it does not inherit');
    assert.equal(emptied.provenance.policy.env_allow, 'local');
  });

  it('replaces [[role]] by name and [[agent]] by id whole, and merges [models] key by key', async () => {
    box.write(
      box.globalFile,
      [
        '[models]',
        'codex = "gpt-5"',
        'claude = "opus"',
        '[[role]]',
        'name = "reviewer"',
        'agents = ["claude"]',
        'mode = "read-only"',
        'model = "sonnet"',
        'timeout = "20m"',
        '[[agent]]',
        'id = "mine"',
        'bin = "mine-cli"',
        'args = ["run", "{{prompt}}"]',
        'display_name = "Mine"',
      ].join('\n'),
    );
    box.write(
      box.projectFile,
      [
        '[models]',
        'codex = "gpt-5-mini"',
        '[[role]]',
        'name = "reviewer"',
        'agents = ["codex"]',
        'mode = "read-only"',
        '[[agent]]',
        'id = "mine"',
        'bin = "/opt/mine"',
        'args = ["{{prompt}}"]',
      ].join('\n'),
    );
    const { config, provenance } = await load({ trusted: true });
    const reviewer = config.roles.find((r) => r.name === 'reviewer')!;
    assert.deepEqual(reviewer.agents, ['codex']);
    assert.equal(reviewer.model, undefined, 'whole-entry replacement: the global model does not leak through');
    assert.equal(reviewer.timeout_ms, undefined);
    assert.equal(provenance.roles.reviewer, 'project');
    assert.equal(provenance.roles.implementer, 'default');
    assert.deepEqual(config.agents, [{ id: 'mine', bin: '/opt/mine', args: ['{{prompt}}'] }]);
    assert.equal(provenance.agents.mine, 'project');
    assert.deepEqual(config.models, { codex: 'gpt-5-mini', claude: 'opus' });
    assert.equal(provenance.models.codex, 'project');
    assert.equal(provenance.models.claude, 'global');
  });

  it('takes the global layer from $HOME before os.homedir()', async () => {
    assert.equal(homeDir({ HOME: box.home }), box.home);
    assert.notEqual(homeDir({}), '');
    box.write(box.globalFile, '[policy]\nmax_parallel = 9\n');
    const loaded = await loadConfig({ root: box.root, env: { HOME: box.home } });
    assert.equal(loaded.config.policy.max_parallel, 9);
    assert.equal(loaded.files.global, box.globalFile);
  });

  it('refuses the typo key max_paralel, naming the file, the line and the key', async () => {
    box.write(box.projectFile, '# team settings\n\n[policy]\nmax_depth = 2\nmax_paralel = 8\n');
    const err = await rejects(load());
    assert.ok(err instanceof ConfigError);
    assert.equal(err.file, box.projectFile);
    assert.equal(err.line, 5);
    assert.equal(err.key, 'policy.max_paralel');
    assert.match(err.message, /config\.toml/);
    assert.match(err.message, /line 5: policy\.max_paralel: unknown field \(check for a typo; known fields: .*max_parallel/);
  });

  it('refuses an unknown top-level table and an unknown key in an array of tables, each on its own line', async () => {
    box.write(box.localFile, '[polcy]\nx = 1\n\n[[role]]\nname = "a"\nagents = []\nmode = "write"\n\n[[role]]\nname = "b"\nagents = []\nmode = "write"\ntimout = "5m"\n');
    const err = (await rejects(load())) as ConfigError;
    assert.equal(err.file, box.localFile);
    assert.deepEqual(
      err.problems.map((p) => [p.key, p.line]),
      [
        ['polcy', 1],
        ['role[1].timout', 13],
      ],
    );
  });

  it('refuses bad values with the file, the line and the key', async () => {
    const cases: Array<[string, string, number]> = [
      ['[policy]\ndefault_mode = "rw"\n', 'policy.default_mode', 2],
      ['[policy]\n\nmax_parallel = 0\n', 'policy.max_parallel', 3],
      ['[policy]\nmax_depth = -1\n', 'policy.max_depth', 2],
      ['[policy]\ndefault_timeout = "1.5m"\n', 'policy.default_timeout', 2],
      ['[policy]\ndefault_network = "maybe"\n', 'policy.default_network', 2],
      ['[policy]\nallow_recursion = "yes"\n', 'policy.allow_recursion', 2],
      ['[models]\ncodex = ""\n', 'models.codex', 2],
      ['[[role]]\nname = "r"\nagents = ["codex"]\n', 'role[0].mode', 1],
    ];
    for (const [text, key, line] of cases) {
      box.write(box.projectFile, text);
      const err = (await rejects(load())) as ConfigError;
      assert.ok(err instanceof ConfigError, text);
      assert.equal(err.key, key, text);
      assert.equal(err.line, line, text);
      assert.ok(err.message.includes(box.projectFile), text);
    }
  });

  it('names the line and column of a TOML syntax error', async () => {
    box.write(box.projectFile, '[policy]\nmax_parallel = = 3\n');
    const err = (await rejects(load())) as ConfigError;
    assert.match(err.message, /^Invalid TOML file: .*config\.toml \(line 2, column \d+\) — /);
    assert.equal(err.line, 2);
  });

  it('names the file when it cannot be read (a directory)', async () => {
    fs.mkdirSync(box.projectFile, { recursive: true });
    const err = (await rejects(load())) as ConfigError;
    assert.ok(err instanceof ConfigError);
    assert.ok(err.message.includes(box.projectFile));
  });

  it('validates [worktree] paths at load', async () => {
    const bad: Array<[string, RegExp]> = [
      ['copy = ["/etc"]', /must be relative/],
      ['copy = ["C:\\\\x"]', /must be relative/],
      ['link = ["a/../../b"]', /must not contain "\.\."/],
      ['copy = [".git/hooks"]', /inside \.git/],
      ['link = [".caesar"]', /inside \.caesar/],
      ['copy = [""]', /non-empty/],
      ['setup = [""]', /non-empty/],
    ];
    for (const [line, message] of bad) {
      box.write(box.projectFile, `# x\n[worktree]\n${line}\n`);
      const err = (await rejects(load())) as ConfigError;
      assert.equal(err.line, 3, line);
      assert.match(err.key!, /^worktree\.(copy|link|setup)/, line);
      assert.match(err.message, message, line);
    }
    box.write(box.projectFile, '[worktree]\ncopy = ["./node_modules/", "a//b"]\nlink = [".env"]\nsetup = ["npm ci"]\n');
    const { config } = await load({ trusted: true });
    assert.deepEqual(config.worktree, { copy: ['node_modules', 'a/b'], link: ['.env'], setup: ['npm ci'] });
  });

  it('validates [[agent]] entries at load: id, bin, {{prompt}}, unknown tokens', async () => {
    const cases: Array<[string, string, RegExp]> = [
      ['id = "-bad"\nbin = "x"\nargs = ["{{prompt}}"]', 'agent[0].id', /letter or digit/],
      ['id = "a"\nbin = "  "\nargs = ["{{prompt}}"]', 'agent[0].bin', /empty/],
      ['id = "a"\nbin = "x"\nargs = ["--go"]', 'agent[0].args', /\{\{prompt\}\}/],
      ['id = "a"\nbin = "x"\nargs = ["{{prompt}}", "--cwd={{worksapce}}"]', 'agent[0].args', /unknown token \{\{worksapce\}\}/],
      ['id = "a"\nbin = "x"\nargs = ["{{prompt}}"]\nnetwork_args = ["{{net}}"]', 'agent[0].network_args', /unknown token \{\{net\}\}/],
      ['id = "a"\nbin = "x"\nargs = ["{{prompt}}"]\ncwd_mode = "dir"', 'agent[0].cwd_mode', /process|flag/],
      ['id = "a"\nbin = "x"\nargs = ["{{prompt}}"]\nmodel_flag = "-m"', 'agent[0].model_flag', /unknown field/],
    ];
    for (const [body, key, message] of cases) {
      box.write(box.projectFile, `[policy]\nmax_depth = 1\n\n[[agent]]\n${body}\n`);
      const err = (await rejects(load())) as ConfigError;
      assert.ok(err instanceof ConfigError, body);
      assert.equal(err.key, key, body);
      assert.match(err.message, message, body);
      assert.ok(err.line !== undefined && err.line >= 4, `${body}: line ${err.line}`);
    }
    box.write(box.projectFile, '[[agent]]\nid = "my.agent_2"\nbin = "my-agent"\nargs = ["-p", "{{ prompt }}", "--model={{model}}", "--out={{reportPath}}"]\n');
    const { config } = await load({ trusted: true });
    assert.equal(config.agents[0]!.id, 'my.agent_2');
  });

  it('locates the offending line of a multi-line array element', async () => {
    box.write(box.projectFile, '[[agent]]\nid = "a"\nbin = "x"\nargs = [\n  "{{prompt}}",\n  "{{oops}}",\n]\n');
    const err = (await rejects(load())) as ConfigError;
    assert.equal(err.key, 'agent[0].args');
    assert.equal(err.line, 4);
  });
});

describe('config layers: untrusted workspaces', () => {
  let box: Sandbox;
  beforeEach(() => {
    box = sandbox();
  });
  afterEach(() => box.cleanup());

  it('ignores [[agent]] bins, [worktree] setup and escaping prompt files of the workspace layers, and runs nothing', async () => {
    box.write(
      box.projectFile,
      [
        '[worktree]',
        'copy = ["node_modules"]',
        'setup = ["touch pwned"]',
        '[[agent]]',
        'id = "evil"',
        'bin = "/bin/sh"',
        'args = ["-c", "touch pwned; echo {{prompt}}"]',
        '[[role]]',
        'name = "reviewer"',
        'agents = ["evil"]',
        'mode = "read-only"',
        'system_prompt_file = "../../../home/secret"',
        '[[role]]',
        'name = "inside"',
        'agents = ["codex"]',
        'mode = "read-only"',
        'system_prompt_file = "roles/inside.md"',
      ].join('\n'),
    );
    box.write(box.localFile, '[worktree]\nsetup = ["touch pwned-local"]\n');
    box.write(box.globalFile, '[[agent]]\nid = "mine"\nbin = "/usr/bin/mine"\nargs = ["{{prompt}}"]\n');
    const untrusted = await loadConfig({ root: box.root, home: box.home, trusted: false });
    assert.equal(untrusted.trusted, false);
    assert.deepEqual(
      untrusted.config.agents.map((a) => a.id),
      ['mine'],
      'the global layer is the user\'s own and stays',
    );
    assert.ok(!JSON.stringify(untrusted.config).includes('/bin/sh'));
    assert.deepEqual(untrusted.config.worktree.setup, []);
    assert.deepEqual(untrusted.config.worktree.copy, ['node_modules'], 'copying files runs no program');
    const reviewer = untrusted.config.roles.find((r) => r.name === 'reviewer')!;
    assert.equal(reviewer.system_prompt_file, undefined);
    assert.equal(untrusted.config.roles.find((r) => r.name === 'inside')!.system_prompt_file, 'roles/inside.md');
    assert.equal(untrusted.ignored.length, 4, untrusted.ignored.join('\n'));
    assert.ok(untrusted.ignored.some((n) => n.includes('evil')));
    assert.equal(fs.existsSync(path.join(box.root, 'pwned')), false);
    assert.equal(fs.existsSync(path.join(box.root, 'pwned-local')), false);

    // The CLI's default: the trust store decides. Nothing recorded yet: both repository files are left out and listed.
    const unrecorded = await loadConfig({ root: box.root, home: box.home });
    assert.equal(unrecorded.trusted, false);
    assert.deepEqual(unrecorded.untrusted.map((u) => u.scope), ['project', 'local']);
    assert.deepEqual(unrecorded.config.agents.map((a) => a.id), ['mine']);
    assert.deepEqual(unrecorded.config.worktree.setup, []);
    // Trusting exactly these contents (what `caesar trust` records) uses them whole.
    await recordTrust(box.home, box.projectFile, box.read(box.projectFile), 'test');
    await recordTrust(box.home, box.localFile, box.read(box.localFile), 'test');
    const trusted = await loadConfig({ root: box.root, home: box.home });
    assert.equal(trusted.trusted, true);
    assert.deepEqual(
      trusted.config.agents.map((a) => a.id).sort(),
      ['evil', 'mine'],
    );
    assert.deepEqual(trusted.config.worktree.setup, ['touch pwned-local']);
    assert.deepEqual(trusted.ignored, []);
    // One byte more in a trusted file, and it is untrusted again.
    box.write(box.localFile, '[worktree]\nsetup = ["touch pwned-local "]\n');
    const changed = await loadConfig({ root: box.root, home: box.home });
    assert.deepEqual(changed.untrusted.map((u) => u.scope), ['local']);
    assert.deepEqual(changed.config.worktree.setup, ['touch pwned'], 'the project file is still trusted; the changed local one is left out');
    // A corrupt store trusts nothing, and is not an error.
    box.write(path.join(box.home, '.config/caesar/trusted.json'), '{not json');
    assert.deepEqual((await loadConfig({ root: box.root, home: box.home })).untrusted.map((u) => u.scope), ['project', 'local']);
  });

  it('the editor\'s record (trustRepositoryConfig, when VS Code trusts the folder) is the same trust, recorded once per content', async () => {
    box.write(box.projectFile, '[worktree]\nsetup = ["npm ci"]\n');
    box.write(box.localFile, '[policy]\nmax_parallel = 2\n');
    const recorded = await trustRepositoryConfig(box.root, box.home, 'VS Code Workspace Trust');
    assert.deepEqual(recorded.map((r) => r.file), [box.projectFile], 'a file naming no program is not recorded');
    assert.deepEqual(recorded[0]!.allows, ['[worktree] setup runs in a shell: "npm ci"']);
    assert.deepEqual(await trustRepositoryConfig(box.root, box.home, 'VS Code Workspace Trust'), [], 'already trusted: nothing new to say');
    const loaded = await loadConfig({ root: box.root, home: box.home });
    assert.deepEqual([loaded.trusted, loaded.config.worktree.setup], [true, ['npm ci']]);
  });

  it('a config naming no program needs no trust', async () => {
    box.write(box.projectFile, '[policy]\nmax_parallel = 2\n[worktree]\ncopy = ["node_modules"]\n');
    const loaded = await loadConfig({ root: box.root, home: box.home });
    assert.equal(loaded.trusted, true);
    assert.deepEqual(loaded.untrusted, []);
    assert.equal(loaded.config.policy.max_parallel, 2);
  });
});

describe('config layers: root discovery', () => {
  it('finds the first ancestor with .caesar/ or .git, else the start directory', () => {
    const box = sandbox({ git: true });
    try {
      const deep = path.join(box.root, 'a', 'b');
      fs.mkdirSync(deep, { recursive: true });
      assert.equal(findRoot(deep), box.root);
      fs.mkdirSync(path.join(box.root, 'a', '.caesar'));
      assert.equal(findRoot(deep), path.join(box.root, 'a'));
      const bare = path.join(box.home, 'x');
      fs.mkdirSync(bare);
      assert.equal(findRoot(bare), bare);
    } finally {
      box.cleanup();
    }
  });
});

import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { loadConfig } from '../../src/config';
import { fakeProgram, git, sandbox, type Sandbox } from '../config/helpers';
import { caesarInSandbox } from './sandbox-cli';
import { needs } from '../support/needs';

const caesar = caesarInSandbox;

describe('caesar config commands (in-process)', function () {
  this.timeout(30_000);
  let box: Sandbox;
  afterEach(() => box.cleanup());

  describe('init', () => {
    it('in a git repo: role prompts, a project config with only the detected [worktree], .gitignore lines', async () => {
      box = sandbox({ git: true, commit: true });
      box.write('pnpm-lock.yaml', '');
      box.write('package.json', '{}');
      box.write('.gitignore', 'node_modules\n.env');
      box.write('.env', 'X=1\n');
      const r = await caesar(box, ['init', '--json']);
      assert.equal(r.code, 0, r.err);
      assert.equal(r.json.refreshed, false);
      assert.deepEqual(r.json.worktree, { copy: ['node_modules', '.env'], setup: ['pnpm install --frozen-lockfile --prefer-offline'], marker: 'pnpm-lock.yaml' });
      assert.deepEqual(r.json.trusted, [box.projectFile], 'the setup commands init detected and wrote are trusted as written');
      const loaded = await loadConfig({ root: box.root, home: box.home });
      assert.deepEqual(loaded.untrusted, []);
      assert.deepEqual(loaded.config.worktree, { copy: ['node_modules', '.env'], link: [], setup: ['pnpm install --frozen-lockfile --prefer-offline'] });
      assert.deepEqual(Object.keys(loaded.layers[0]!.data), ['worktree'], 'nothing but [worktree] in the project config');
      for (const role of ['reviewer', 'implementer', 'investigator']) assert.ok(box.read(`.caesar/roles/${role}.md`).length > 100, role);
      assert.equal(box.read('.gitignore'), 'node_modules\n.env\n\n# caesar\n.caesar/config.local.toml\n.caesar/tasks/\n.caesar/wt/\n.caesar/state/\n');
      assert.equal(git(box.root, 'check-ignore', '.caesar/tasks/x').trim(), '.caesar/tasks/x');
    });

    it('a rerun refreshes what is missing without touching the config; --force rewrites config and prompts', async () => {
      box = sandbox({ git: true, commit: true });
      assert.equal((await caesar(box, ['init'])).code, 0);
      box.write(box.projectFile, '# mine\n[policy]\nmax_depth = 1\n');
      box.write('.caesar/roles/reviewer.md', 'custom');
      fs.rmSync(path.join(box.root, '.caesar/roles/implementer.md'));
      const again = await caesar(box, ['init', '--json']);
      assert.equal(again.json.refreshed, true);
      assert.deepEqual(again.json.written, [path.join(box.root, '.caesar/roles/implementer.md')]);
      assert.deepEqual(again.json.gitignore_added, []);
      assert.equal(box.read(box.projectFile), '# mine\n[policy]\nmax_depth = 1\n');
      assert.equal(box.read('.caesar/roles/reviewer.md'), 'custom');
      const forced = await caesar(box, ['init', '--force', '--json']);
      assert.equal(forced.json.refreshed, false);
      assert.ok(!box.read(box.projectFile).includes('max_depth'));
      assert.notEqual(box.read('.caesar/roles/reviewer.md'), 'custom');
    });

    it('outside git: warns that worktrees are unavailable and writes no .gitignore', async () => {
      box = sandbox();
      const r = await caesar(box, ['init']);
      assert.equal(r.code, 0);
      assert.match(r.err, /not inside a git repository/);
      assert.equal(fs.existsSync(path.join(box.root, '.gitignore')), false);
      assert.ok(fs.existsSync(box.projectFile));
    });

    it('--global writes the full default configuration, which loads back as the defaults', async () => {
      box = sandbox();
      const r = await caesar(box, ['init', '--global']);
      assert.equal(r.code, 0, r.err);
      const loaded = await loadConfig({ home: box.home });
      assert.equal(loaded.layers[0]?.scope, 'global');
      assert.ok(Object.values(loaded.provenance.policy).every((o) => o === 'global'));
      assert.equal(loaded.config.policy.default_timeout_ms, 600_000);
      assert.deepEqual(
        loaded.config.roles.map((role) => [role.name, loaded.provenance.roles[role.name]]),
        [
          ['reviewer', 'global'],
          ['implementer', 'global'],
          ['investigator', 'global'],
        ],
      );
      const again = await caesar(box, ['init', '--global']);
      assert.match(again.out, /already exists/);
    });
  });

  describe('policy', () => {
    it('a comment in .caesar/config.toml survives `caesar policy deny x`', async () => {
      box = sandbox({ git: true });
      box.write(box.projectFile, '# Why we deny some agents: see SECURITY.md\n[policy]\nmax_parallel = 2 # our CI is small\n');
      const r = await caesar(box, ['policy', 'deny', 'x']);
      assert.equal(r.code, 0, r.err);
      const text = box.read(box.projectFile);
      assert.ok(text.includes('# Why we deny some agents: see SECURITY.md'), text);
      assert.ok(text.includes('max_parallel = 2 # our CI is small'), text);
      assert.deepEqual((await loadConfig({ root: box.root, home: box.home })).config.policy.denied, ['x']);
      assert.match(r.err, /not a known agent/);
      assert.match(r.err, /did not declare \[policy\] denied/);
    });

    it('show gives each value with its provenance', async () => {
      box = sandbox({ git: true });
      box.write(box.globalFile, '[policy]\nmax_parallel = 6\n');
      box.write(box.localFile, '[policy]\ndefault_timeout = "90s"\n');
      const r = await caesar(box, ['policy', 'show', '--json']);
      const byKey = Object.fromEntries(r.json.policy.map((f: any) => [f.key, f]));
      assert.deepEqual(byKey.max_parallel, { key: 'max_parallel', value: 6, origin: 'global' });
      assert.deepEqual(byKey.default_timeout, { key: 'default_timeout', value: '90s', ms: 90_000, origin: 'local' });
      assert.equal(byKey.max_depth.origin, 'default');
      const text = await caesar(box, ['policy', 'show']);
      assert.match(text.out, /max_parallel\s+6\s+\(global\)/);
    });

    it('allow writes the effective list plus the id into the target layer and warns when it becomes restrictive', async () => {
      box = sandbox({ git: true });
      box.write(box.globalFile, '[policy]\nallowed = ["codex"]\n');
      const r = await caesar(box, ['policy', 'allow', 'gemini', '--local']);
      assert.equal(r.code, 0, r.err);
      assert.equal(box.read(box.localFile), '[policy]\nallowed = [ "codex", "gemini" ]\n');
      assert.equal(box.read(box.globalFile), '[policy]\nallowed = ["codex"]\n');
      box.cleanup();
      box = sandbox({ git: true });
      const restrictive = await caesar(box, ['policy', 'allow', 'codex']);
      assert.match(restrictive.err, /every agent was allowed/);
    });

    it('refuses --global with --local (exit 2) and writes nothing', async () => {
      box = sandbox({ git: true });
      const r = await caesar(box, ['policy', 'deny', 'codex', '--global', '--local']);
      assert.equal(r.code, 2);
      assert.match(r.err, /mutually exclusive/);
      assert.equal(fs.existsSync(box.projectFile), false);
      assert.equal(fs.existsSync(box.globalFile), false);
    });

    it('a typo in a config file exits 2 naming the file and the line', async () => {
      box = sandbox({ git: true });
      box.write(box.projectFile, '[policy]\nmax_paralel = 3\n');
      const r = await caesar(box, ['policy', 'show']);
      assert.equal(r.code, 2);
      assert.ok(r.err.includes(box.projectFile));
      assert.match(r.err, /line 2: policy\.max_paralel: unknown field/);
    });
  });

  describe('agents', () => {
    it('disable then enable edits the denied list, and warns when a more specific layer still decides', async () => {
      box = sandbox({ git: true });
      assert.equal((await caesar(box, ['agents', 'disable', 'codex', '--global'])).code, 0);
      assert.deepEqual((await loadConfig({ root: box.root, home: box.home })).config.policy.denied, ['codex']);
      const list = await caesar(box, ['agents', 'list', '--json']);
      const codex = list.json.agents.find((a: any) => a.id === 'codex');
      assert.equal(codex.allowed, false);
      assert.equal(codex.refusal.remedy, 'caesar agents enable codex --global');
      box.write(box.localFile, '[policy]\ndenied = ["codex", "gemini"]\n');
      const shadowed = await caesar(box, ['agents', 'enable', 'codex', '--global']);
      assert.equal(shadowed.code, 0);
      assert.match(shadowed.err, /also set in the local layer/);
      assert.deepEqual((await loadConfig({ home: box.home })).config.policy.denied, ['gemini'], 'global now holds the effective list minus codex');
    });

    it('set-model / unset-model; unsetting from a layer that does not declare it names the one that does', async () => {
      box = sandbox({ git: true });
      assert.equal((await caesar(box, ['agents', 'set-model', 'codex', 'gpt-5', '--local'])).code, 0);
      const list = await caesar(box, ['agents', 'list', '--json']);
      assert.deepEqual(list.json.agents.find((a: any) => a.id === 'codex').model, { value: 'gpt-5', origin: 'local' });
      const wrong = await caesar(box, ['agents', 'unset-model', 'codex']);
      assert.equal(wrong.code, 2);
      assert.match(wrong.err, /local does: caesar agents unset-model codex --local/);
      assert.equal((await caesar(box, ['agents', 'unset-model', 'codex', '--local'])).code, 0);
      assert.deepEqual((await loadConfig({ root: box.root, home: box.home })).config.models, {});
      assert.equal((await caesar(box, ['agents', 'set-model', 'demo', 'x'])).code, 2, 'the demo agent takes no model');
      assert.equal((await caesar(box, ['agents', 'set-model', 'nope', 'x'])).code, 2);
    });
  });

  describe('doctor', () => {
    it('--json without any agent CLI: every catalogued agent not found, the demo agent available', async () => {
      box = sandbox({ git: true });
      box.write(box.projectFile, '[[agent]]\nid = "mine"\nbin = "mine-cli"\nargs = ["{{prompt}}"]\n[policy]\ndenied = ["gemini"]\n');
      assert.equal((await caesar(box, ['trust'])).code, 0, 'the project file names a program: trusted as a user would');
      const r = await caesar(box, ['doctor', '--json']);
      assert.equal(r.code, 0, r.err);
      const ids = r.json.agents.map((a: any) => a.id);
      assert.deepEqual(ids, ['codex', 'claude', 'opencode', 'copilot', 'gemini', 'antigravity', 'demo', 'mine']);
      for (const agent of r.json.agents) {
        assert.equal(agent.installed, agent.id === 'demo', agent.id);
        assert.ok(agent.capabilities, agent.id);
      }
      assert.deepEqual(r.json.missing, ['codex', 'claude', 'opencode', 'copilot', 'gemini', 'antigravity', 'mine']);
      assert.deepEqual(
        r.json.denied.map((d: any) => [d.id, d.rule]),
        [['gemini', 'denied']],
        'recursion is decided by depth, not by name: claude is not refused from a terminal',
      );
      assert.match(r.json.agents.find((a: any) => a.id === 'demo').version, /built in/);
      assert.match(r.json.agents.find((a: any) => a.id === 'codex').install_hint, /^npm install -g @openai\/codex/);
      assert.equal(r.json.agents.find((a: any) => a.id === 'demo').install_hint, undefined, 'nothing to install for what is there');
      assert.equal(r.json.agents.find((a: any) => a.id === 'mine').install_hint, undefined, 'a template agent has no known installer');
      const human = await caesar(box, ['doctor']);
      assert.match(human.out, /To install: codex, claude/);
      assert.match(human.out, /^ {2}gemini +npm install -g @google\/gemini-cli/m);
    });

    it('finds an installed agent on PATH and reports the first line of its --version', async () => {
      box = sandbox({ git: true });
      const bin = path.join(box.home, 'bin');
      fakeProgram(bin, 'codex', 'codex-cli 0.99.0');
      const r = await caesar(box, ['doctor', '--json'], { PATH: bin });
      const codex = r.json.agents.find((a: any) => a.id === 'codex');
      assert.equal(codex.installed, true);
      assert.equal(codex.version, 'codex-cli 0.99.0');
      assert.equal(codex.location, path.join(bin, 'codex'));
      const human = await caesar(box, ['doctor'], { PATH: bin });
      assert.match(human.out, /codex .*found, codex-cli 0\.99\.0 — allowed/);
      assert.match(human.out, /To install: claude, opencode/);
    });

    it('says whether agents run sandboxed, and when not, the cause, its fix and what happens to tasks', async function () {
      await needs(this, 'bubblewrap', 'socat'); // its second half: the doctor where both are
      box = sandbox({ git: true });
      const none = await caesar(box, ['doctor', '--json']);
      assert.deepEqual({ ...none.json.sandbox, fix: undefined }, { mode: 'auto', available: false, cause: 'bubblewrap (bwrap) is not installed', fix: undefined });
      assert.match(none.json.sandbox.fix, /apt install bubblewrap/);
      assert.match((await caesar(box, ['doctor'])).out, /✗ sandbox: not available: bubblewrap \(bwrap\) is not installed; tasks run unconfined, each with a high finding \(mode auto\)\n {4}fix: .*apt install bubblewrap/);
      box.write(box.projectFile, '[sandbox]\nmode = "required"\n');
      assert.match((await caesar(box, ['doctor'])).out, /tasks are refused \(mode required\)/);
      if (process.platform === 'linux' && fs.existsSync('/usr/bin/bwrap')) {
        const found = await caesar(box, ['doctor'], { PATH: '/usr/bin' });
        assert.match(found.out, /✓ sandbox: agents run confined by \/usr\/bin\/bwrap \(mode required\)/);
        if (fs.existsSync('/usr/bin/socat')) assert.match(found.out, /✓ network: .*reaches only its model endpoint, bridged by \/usr\/bin\/socat/);
        const noSocat = await caesar(box, ['doctor'], { PATH: '/usr/bin', CAESAR_SOCAT: '' });
        assert.match(noSocat.out, /✗ network: socat is not installed.*\n {4}fix: `sudo apt install socat`/);
      }
    });

    it('explains each agent\'s capabilities in words, and names the command and file of each policy remedy', async () => {
      box = sandbox({ git: true });
      box.write(box.projectFile, '[[agent]]\nid = "mine"\nbin = "mine-cli"\nargs = ["{{prompt}}"]\n');
      assert.equal((await caesar(box, ['trust'])).code, 0);
      const human = await caesar(box, ['doctor']);
      assert.equal(human.code, 0, human.err);
      assert.doesNotMatch(human.out, /nativeReadOnly|schemaTier|reportsUsage|network (open|controllable|write-only|unknown);/, 'no bare capability flags');
      const lines = human.out.split('\n');
      const describe = (id: string) => lines[lines.findIndex((l) => l.includes(` ${id} `)) + 1]!;
      assert.match(describe('codex'), /can confine itself to reading; returns its report as structured output; takes a model name; reports tokens and cost/);
      assert.match(describe('codex'), /network only in write tasks/);
      assert.match(describe('mine'), /has no read-only mode \(read-only tasks run in a worktree\); writes its report to a file/);
      assert.match(describe('mine'), /network unknown \(its \[\[agent\]\] entry declares no network_args\)/);
      assert.doesNotMatch(human.out, /claude: .*allow_recursion/, 'claude is not refused at depth 0');
    });
  });

  describe('role', () => {
    it('add, list (with today\'s pick), show (with prompt and provenance), remove', async () => {
      box = sandbox({ git: true });
      const bin = path.join(box.home, 'bin');
      fakeProgram(bin, 'gemini');
      const env = { PATH: bin };
      box.write('.caesar/roles/qa.md', 'Check everything.\n');
      const add = await caesar(box, ['role', 'add', 'qa', '--agents', 'codex,gemini', '--mode', 'read-only', '--timeout', '5m', '--prompt-file', 'roles/qa.md', '--local'], env);
      assert.equal(add.code, 0, add.err);
      const list = await caesar(box, ['role', 'list', '--json'], env);
      const qa = list.json.roles.find((r: any) => r.name === 'qa');
      assert.equal(qa.picks, 'gemini');
      assert.deepEqual(qa.skipped, [{ agent: 'codex', reason: 'not installed' }]);
      assert.equal(qa.origin, 'local');
      const show = await caesar(box, ['role', 'show', 'qa', '--json'], env);
      assert.equal(show.json.system_prompt, 'Check everything.\n');
      assert.equal(show.json.timeout, '5m');
      const wrongLayer = await caesar(box, ['role', 'remove', 'qa']);
      assert.equal(wrongLayer.code, 2);
      assert.match(wrongLayer.err, /declared in the local layer: caesar role remove qa --local/);
      assert.equal((await caesar(box, ['role', 'remove', 'qa', '--local'])).code, 0);
      assert.equal((await caesar(box, ['role', 'show', 'qa'])).code, 2);
    });

    it('refuses bad choices and durations with exit 2, and removing a built-in default role', async () => {
      box = sandbox({ git: true });
      assert.equal((await caesar(box, ['role', 'add', 'x', '--agents', 'codex', '--mode', 'rw'])).code, 2);
      assert.equal((await caesar(box, ['role', 'add', 'x', '--agents', 'codex', '--mode', 'write', '--timeout', '1.5m'])).code, 2);
      assert.equal((await caesar(box, ['role', 'add', 'x', '--mode', 'write'])).code, 2, '--agents is required');
      const builtin = await caesar(box, ['role', 'remove', 'reviewer']);
      assert.equal(builtin.code, 2);
      assert.match(builtin.err, /built-in default/);
      assert.equal(fs.existsSync(box.projectFile), false);
    });
  });
});

import { strict as assert } from 'node:assert';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { parse as parseToml } from 'smol-toml';
import { buildCli, makeRepo } from '../engine/runtime/helpers';

interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** The built caesar.js with a private HOME, so every client config it writes is a temp file. */
function caesar(cwd: string, home: string, args: string[]): Promise<CliRun> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [process.env.CAESAR_CLI_JS!, ...args], {
      cwd,
      env: { ...process.env, HOME: home, XDG_CONFIG_HOME: path.join(home, '.config'), CODEX_HOME: '', COPILOT_HOME: '', PATH: path.dirname(process.execPath) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

const readJson = (file: string) => JSON.parse(readFileSync(file, 'utf8'));

describe('caesar mcp install / uninstall (built caesar.js, temp HOME)', function () {
  this.timeout(60_000);
  let repo: string;
  let home: string;
  before(async () => {
    await buildCli();
  });
  beforeEach(() => {
    repo = makeRepo();
    home = realpathSync(mkdtempSync(path.join(tmpdir(), 'caesar-home-')));
  });

  it('merges into each JSON client config, keeping the other servers and settings, and uninstall removes only caesar', async () => {
    const cases: Array<{ client: string; file: string; container: string; check: (entry: any) => void }> = [
      { client: 'claude', file: path.join(home, '.claude.json'), container: 'mcpServers', check: (e) => assert.deepEqual(e.args.slice(-4), ['mcp', 'serve', '--root', repo]) },
      { client: 'copilot', file: path.join(home, '.copilot/mcp-config.json'), container: 'mcpServers', check: (e) => assert.deepEqual(e.tools, ['*']) },
      { client: 'gemini', file: path.join(home, '.gemini/settings.json'), container: 'mcpServers', check: (e) => assert.equal(e.command, process.execPath) },
      { client: 'opencode', file: path.join(home, '.config/opencode/opencode.json'), container: 'mcp', check: (e) => assert.deepEqual([e.type, e.enabled, e.command.slice(-4)], ['local', true, ['mcp', 'serve', '--root', repo]]) },
      { client: 'vscode', file: path.join(home, '.config/Code/User/mcp.json'), container: 'servers', check: (e) => assert.equal(e.type, 'stdio') },
    ];
    for (const c of cases) {
      mkdirSync(path.dirname(c.file), { recursive: true });
      writeFileSync(c.file, JSON.stringify({ theme: 'dark', [c.container]: { other: { command: 'other-server' } } }, null, 2));
      const run = await caesar(repo, home, ['mcp', 'install', c.client]);
      assert.equal(run.code, 0, `${c.client}: ${run.stderr}`);
      assert.match(run.stdout, /Registered caesar/);
      const doc = readJson(c.file);
      assert.equal(doc.theme, 'dark', `${c.client} keeps other settings`);
      assert.deepEqual(doc[c.container].other, { command: 'other-server' }, `${c.client} keeps other servers`);
      c.check(doc[c.container].caesar);
      const again = await caesar(repo, home, ['mcp', 'install', c.client]);
      assert.match(again.stdout, /already registered, nothing changed/, c.client);
      const removed = await caesar(repo, home, ['mcp', 'uninstall', c.client]);
      assert.equal(removed.code, 0, removed.stderr);
      assert.deepEqual(readJson(c.file), { theme: 'dark', [c.container]: { other: { command: 'other-server' } } }, `${c.client} uninstall undoes install`);
    }
  });

  it('edits codex TOML as text: comments and other servers survive install and uninstall', async () => {
    const file = path.join(home, '.codex/config.toml');
    mkdirSync(path.dirname(file), { recursive: true });
    const original = '# my codex settings\nmodel = "o3" # keep this\n\n[mcp_servers.other]\ncommand = "other"\n';
    writeFileSync(file, original);
    const run = await caesar(repo, home, ['mcp', 'install', 'codex']);
    assert.equal(run.code, 0, run.stderr);
    const text = readFileSync(file, 'utf8');
    assert.ok(text.startsWith(original.trimEnd()), 'the user\'s lines are untouched');
    const doc = parseToml(text) as any;
    assert.equal(doc.mcp_servers.other.command, 'other');
    assert.deepEqual(doc.mcp_servers.caesar.args.slice(-4), ['mcp', 'serve', '--root', repo]);
    const removed = await caesar(repo, home, ['mcp', 'uninstall', 'codex']);
    assert.equal(removed.code, 0, removed.stderr);
    assert.equal(readFileSync(file, 'utf8'), original);
  });

  it('--dry-run prints the change and writes nothing; --scope project writes the repository\'s file', async () => {
    const dry = await caesar(repo, home, ['mcp', 'install', 'vscode', '--scope', 'project', '--dry-run']);
    assert.equal(dry.code, 0, dry.stderr);
    assert.match(dry.stdout, /\.vscode\/mcp\.json \(new file\):/);
    assert.match(dry.stdout, /^\+ {5}"caesar": \{$/m);
    assert.ok(!existsSync(path.join(repo, '.vscode/mcp.json')), 'a dry run writes nothing');
    const real = await caesar(repo, home, ['mcp', 'install', 'claude', '--scope', 'project']);
    assert.equal(real.code, 0, real.stderr);
    assert.equal(readJson(path.join(repo, '.mcp.json')).mcpServers.caesar.type, 'stdio');
  });

  it('refuses to overwrite a config that does not parse, an unknown client and an unsupported scope (exit 2)', async () => {
    const file = path.join(home, '.gemini/settings.json');
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, '{ "theme": "dark", // a comment\n}');
    const broken = await caesar(repo, home, ['mcp', 'install', 'gemini']);
    assert.equal(broken.code, 2);
    assert.match(broken.stderr, /is not valid JSON/);
    assert.equal(readFileSync(file, 'utf8'), '{ "theme": "dark", // a comment\n}', 'left as it was');
    const unknown = await caesar(repo, home, ['mcp', 'install', 'emacs']);
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr, /Unknown MCP client "emacs"/);
    const scope = await caesar(repo, home, ['mcp', 'install', 'copilot', '--scope', 'project']);
    assert.equal(scope.code, 2);
    assert.match(scope.stderr, /user configuration only/);
  });
});

import { strict as assert } from 'node:assert';
import { randomBytes } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import type { AgentAdapter } from '../../../src/agents/types';
import { builtinAdapters } from '../../../src/agents/registry';
import { loadConfig } from '../../../src/config';
import { catalogueFromAdapters } from '../../../src/engine/resolve/agent-catalogue';
import { minimalEnv } from '../../../src/engine/sandbox/agent-env';
import { readLaunchSpec } from '../../../src/engine/store/launch-spec';
import { resolveDelegation, type DelegationRequest } from '../../../src/engine/resolve/resolve';
import { taskPaths } from '../../../src/protocol';
import { caesarInSandbox } from '../../cli/sandbox-cli';
import { fakeProgram, sandbox, type Sandbox } from '../../config/helpers';
import { FIXTURE_AGENT, buildCli, makeRepo, startFixture, trustedHome, waitForFinished } from '../runtime/helpers';
import { tempDir } from './helpers';

/*
 * Issue 13 item 4: the caller's whole environment (cloud keys, tokens, the editor's IPC handles) reached every agent.
 * `[policy] env = "minimal"` (or a request asking for it: the editor does) passes on only the base set, caesar's own
 * variables, the agent's documented keys and `[policy] env_allow`. Whatever the policy, no secret value is written to
 * the task's files. Canaries: a random secret in the caller's environment, looked for in the agent's environment
 * (dumped by the fixture to a file outside the task folder) and in every file of the task folder.
 */

const CANARY_NAME = 'CAESAR_TEST_CANARY_SECRET';
const canary = () => `canary-${randomBytes(12).toString('hex')}`;

/** Every regular file under `dir` (the task folder: events.jsonl, raw.log, state.json, launch.json, result.json…). */
function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const file = path.join(dir, name);
    const stats = statSync(file);
    return stats.isDirectory() ? filesUnder(file) : stats.isFile() ? [file] : [];
  });
}

function assertNowhereInTask(root: string, id: string, secret: string): void {
  const dir = taskPaths(root, id).dir;
  const files = filesUnder(dir);
  for (const name of ['events.jsonl', 'raw.log', 'state.json', 'launch.json', 'result.json']) {
    assert.ok(files.includes(path.join(dir, name)), `${name} exists`);
  }
  for (const file of files) assert.ok(!readFileSync(file, 'utf8').includes(secret), `the secret was written to ${path.relative(dir, file)}`);
}

/**
 * Where the fixture dumps the environment it saw: a folder of the test's, outside the task folder and the worktree
 * (whose diff result.json carries). The agent runs sandboxed, so the folder is made writable to it with `[sandbox]
 * read_write`, as a user would for a cache.
 */
function envDump(): { envFile: string; sandbox: { read_write: string[] } } {
  const dir = tempDir('caesar-sec-env-');
  return { envFile: path.join(dir, 'env.json'), sandbox: { read_write: [dir] } };
}

describe('security: the agent environment and secrets (issue 13.4)', function () {
  this.timeout(60_000);

  it('minimal: a canary in the caller environment never reaches the agent nor any task file; allowed names do', async () => {
    const root = makeRepo();
    const { envFile, sandbox } = envDump();
    const secret = canary();
    const { id } = await startFixture(
      root,
      { mode: 'dump-env', envFile },
      { env_policy: 'minimal', env_allow: ['CAESAR_TEST_ALLOWED', 'CAESAR_TEST_PREFIX_*'], sandbox },
      { [CANARY_NAME]: secret, AWS_SECRET_ACCESS_KEY: secret, CAESAR_TEST_ALLOWED: 'allowed-1', CAESAR_TEST_PREFIX_X: 'allowed-2' },
    );
    const done = await waitForFinished(root, id);
    assert.equal(done.state.status, 'succeeded', done.state.error);
    const seen = JSON.parse(readFileSync(envFile, 'utf8')) as Record<string, string>;
    assert.equal(seen[CANARY_NAME], undefined, 'the canary reached the agent');
    assert.equal(seen.AWS_SECRET_ACCESS_KEY, undefined, 'a cloud key reached the agent');
    assert.ok(!JSON.stringify(seen).includes(secret), 'the secret value reached the agent under another name');
    assert.equal(seen.CAESAR_TEST_ALLOWED, 'allowed-1');
    assert.equal(seen.CAESAR_TEST_PREFIX_X, 'allowed-2');
    assert.equal(seen.PATH, process.env.PATH);
    assert.equal(seen.HOME, process.env.HOME);
    assert.equal(seen.CAESAR_TASK_ID, id);
    assert.equal(seen.CAESAR_REPORT_PATH, taskPaths(root, id).report);
    assert.equal(seen.CAESAR_KILL_GRACE_MS, '500');
    const launch = await readLaunchSpec(root, id);
    assert.equal(launch.env_policy, 'minimal');
    assert.deepEqual(launch.env_allow, ['CAESAR_TEST_ALLOWED', 'CAESAR_TEST_PREFIX_*']);
    assertNowhereInTask(root, id, secret);
  });

  it('inherit: the canary reaches the agent (as before) but no task file', async () => {
    const root = makeRepo();
    const { envFile, sandbox } = envDump();
    const secret = canary();
    const { id } = await startFixture(root, { mode: 'dump-env', envFile }, { sandbox }, { [CANARY_NAME]: secret });
    const done = await waitForFinished(root, id);
    assert.equal(done.state.status, 'succeeded', done.state.error);
    const seen = JSON.parse(readFileSync(envFile, 'utf8')) as Record<string, string>;
    assert.equal(seen[CANARY_NAME], secret);
    assert.equal((await readLaunchSpec(root, id)).env_policy, 'inherit');
    assertNowhereInTask(root, id, secret);
  });

  it('`caesar run --env minimal` (a real CLI process, the fixture as [[agent]]): the canary stays behind; --env bogus is a usage error', async () => {
    const cli = await buildCli();
    const root = makeRepo();
    mkdirSync(path.join(root, '.caesar'), { recursive: true });
    writeFileSync(path.join(root, '.caesar/config.toml'), `[[agent]]\nid = "fixture"\nbin = "${process.execPath}"\nargs = ["${FIXTURE_AGENT}", "{{prompt}}"]\n`);
    const { envFile, sandbox } = envDump();
    const secret = canary();
    const home = trustedHome(cli, root);
    // A repository's layer cannot make paths writable: the user's own layer does.
    mkdirSync(path.join(home, '.config/caesar'), { recursive: true });
    writeFileSync(path.join(home, '.config/caesar/config.toml'), `[sandbox]\nread_write = ${JSON.stringify(sandbox.read_write)}\n`);
    const run = (args: string[]) =>
      spawnSync(process.execPath, [cli, 'run', 'x', '--agent', 'fixture', '--json', ...args], {
        cwd: root,
        env: { ...process.env, HOME: home, [CANARY_NAME]: secret, CAESAR_KILL_GRACE_MS: '500' },
        encoding: 'utf8',
        timeout: 30_000,
      });
    const ok = run(['--env', 'minimal', '--context', JSON.stringify({ mode: 'dump-env', envFile })]);
    assert.equal(ok.status, 0, ok.stderr);
    const out = JSON.parse(ok.stdout) as { task_id: string };
    const seen = JSON.parse(readFileSync(envFile, 'utf8')) as Record<string, string>;
    assert.equal(seen[CANARY_NAME], undefined, 'the canary reached the agent');
    assert.equal(seen.CAESAR_TASK_ID, out.task_id);
    assert.equal((await readLaunchSpec(root, out.task_id)).env_policy, 'minimal');
    assertNowhereInTask(root, out.task_id, secret);
    assert.ok(!ok.stdout.includes(secret) && !ok.stderr.includes(secret), 'the CLI printed the secret');

    const bad = run(['--env', 'bogus']);
    assert.equal(bad.status, 2, bad.stderr);
    assert.match(bad.stderr, /Invalid env "bogus": expected one of inherit, minimal\./);
  });

  it('minimal keeps each adapter its documented keys and nothing else', () => {
    const source = {
      PATH: '/bin',
      HOME: '/home/u',
      LANG: 'C.UTF-8',
      LC_ALL: 'C.UTF-8',
      ANTHROPIC_API_KEY: 'a',
      OPENAI_API_KEY: 'o',
      CODEX_HOME: '/c',
      GEMINI_API_KEY: 'g',
      GH_TOKEN: 'gh',
      AWS_SECRET_ACCESS_KEY: 's',
      VSCODE_IPC_HOOK_CLI: '/run/vscode.sock',
      CAESAR_TEST_CANARY_SECRET: 'x',
    };
    const keysOf = (id: string) => Object.keys(minimalEnv(source, builtinAdapters().find((a) => a.id === id)!.envKeys ?? [], [])).sort();
    const base = ['HOME', 'LANG', 'LC_ALL', 'PATH'];
    assert.deepEqual(keysOf('claude'), [...base, 'ANTHROPIC_API_KEY'].sort());
    assert.deepEqual(keysOf('codex'), [...base, 'CODEX_HOME', 'OPENAI_API_KEY'].sort());
    assert.deepEqual(keysOf('gemini'), [...base, 'GEMINI_API_KEY'].sort());
    assert.deepEqual(keysOf('copilot'), [...base, 'GH_TOKEN'].sort());
    assert.deepEqual(Object.keys(minimalEnv(source, [], ['AWS_*'])).sort(), [...base, 'AWS_SECRET_ACCESS_KEY'].sort());
    for (const adapter of builtinAdapters()) assert.ok(Array.isArray(adapter.envKeys), `${adapter.id} declares its env keys`);
  });

  describe('choosing the policy', () => {
    let box: Sandbox;
    beforeEach(() => {
      box = sandbox({ git: true, commit: true });
    });
    afterEach(() => box.cleanup());

    async function resolved(request: Partial<DelegationRequest> = {}) {
      const bin = path.join(box.home, 'bin');
      fakeProgram(bin, 'fake-claude');
      const adapter = { id: 'claude', displayName: 'Fake', bin: 'fake-claude', capabilities: { nativeReadOnly: true, network: 'open', schemaTier: false, channel: false, model: true, reportsUsage: false } };
      const catalogue = catalogueFromAdapters([adapter as unknown as AgentAdapter], { env: { PATH: bin } });
      const loaded = await loadConfig({ root: box.root, home: box.home });
      const { launch } = await resolveDelegation({ objective: 'do it', workspace: box.root, agent: 'claude', ...request }, { loaded, catalogue, root: box.root, env: {} });
      return launch;
    }

    it('inherit by default; minimal from the config, or from the request (the editor); a request never loosens it', async () => {
      assert.equal((await resolved()).env_policy, 'inherit');
      assert.equal((await resolved({ env: 'minimal' })).env_policy, 'minimal');
      box.write('.caesar/config.toml', '[policy]\nenv = "minimal"\nenv_allow = ["AWS_PROFILE", "HTTPS_*"]\n');
      const fromConfig = await resolved();
      assert.equal(fromConfig.env_policy, 'minimal');
      assert.deepEqual(fromConfig.env_allow, ['AWS_PROFILE', 'HTTPS_*']);
      assert.equal((await resolved({ env: 'inherit' })).env_policy, 'minimal');
    });

    it('`caesar policy set env minimal` and `env_allow a,b` work through the generic policy set; bad values are refused', async () => {
      const set = await caesarInSandbox(box, ['policy', 'set', 'env', 'minimal']);
      assert.equal(set.code, 0, set.err);
      const allow = await caesarInSandbox(box, ['policy', 'set', 'env_allow', 'AWS_PROFILE,HTTPS_PROXY']);
      assert.equal(allow.code, 0, allow.err);
      const loaded = await loadConfig({ root: box.root, home: box.home });
      assert.equal(loaded.config.policy.env, 'minimal');
      assert.deepEqual(loaded.config.policy.env_allow, ['AWS_PROFILE', 'HTTPS_PROXY']);
      assert.equal((await resolved()).env_policy, 'minimal');

      const bad = await caesarInSandbox(box, ['policy', 'set', 'env', 'everything']);
      assert.equal(bad.code, 2);
      assert.match(bad.err, /Invalid value "everything" for env: .*Give inherit or minimal\./);
      const badName = await caesarInSandbox(box, ['policy', 'set', 'env_allow', 'A=B']);
      assert.equal(badName.code, 2);
      assert.ok(existsSync(box.projectFile));
    });
  });
});

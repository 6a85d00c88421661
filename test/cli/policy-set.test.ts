import { strict as assert } from 'node:assert';
import { DEFAULT_POLICY, POLICY_TOML_KEYS, loadConfig, type PolicyConfig } from '../../src/config';
import { sandbox, type Sandbox } from '../config/helpers';
import { caesarInSandbox } from './sandbox-cli';

const caesar = caesarInSandbox;

describe('caesar policy set', function () {
  this.timeout(30_000);
  let box: Sandbox;
  beforeEach(() => {
    box = sandbox({ git: true, commit: true });
  });
  afterEach(() => box.cleanup());

  it('sets every policy key, each value read as loading reads it', async () => {
    const cases: Array<[string, string, Partial<PolicyConfig>]> = [
      ['allowed', 'codex,claude', { allowed: ['codex', 'claude'] }],
      ['denied', 'gemini', { denied: ['gemini'] }],
      ['max_parallel', '2', { max_parallel: 2 }],
      ['default_isolation', 'worktree', { default_isolation: 'worktree' }],
      ['default_mode', 'read-only', { default_mode: 'read-only' }],
      ['default_network', 'off', { default_network: 'off' }],
      ['default_timeout', '90s', { default_timeout_ms: 90_000 }],
      ['allow_recursion', 'true', { allow_recursion: true }],
      ['allow_inplace_write', 'true', { allow_inplace_write: true }],
      ['max_depth', '0', { max_depth: 0 }],
      ['default_channel', 'true', { default_channel: true }],
      ['env', 'minimal', { env: 'minimal' }],
      ['env_allow', 'AWS_PROFILE,HTTPS_*', { env_allow: ['AWS_PROFILE', 'HTTPS_*'] }],
      ['permissions', 'allow-in-worktree', { permissions: 'allow-in-worktree' }],
    ];
    assert.deepEqual(cases.map(([key]) => key).sort(), [...POLICY_TOML_KEYS].sort(), 'a case for every policy key');
    const expected: PolicyConfig = { ...DEFAULT_POLICY };
    // In the user's own (global) layer, where every key counts: a repository's layers can only tighten some of them
    // (test/reliability/repository-config.test.ts).
    for (const [key, value, effect] of cases) {
      const r = await caesar(box, ['policy', 'set', key, value, '--global']);
      assert.equal(r.code, 0, `${key}: ${r.err}`);
      assert.match(r.out, new RegExp(`^${key} = .* in the global layer \\(${box.globalFile.replace(/[.]/g, '\\.')}\\)$`));
      Object.assign(expected, effect);
      const loaded = await loadConfig({ root: box.root, home: box.home });
      assert.deepEqual(loaded.config.policy, expected, key);
      for (const changed of Object.keys(effect) as Array<keyof PolicyConfig>) assert.equal(loaded.provenance.policy[changed], 'global', changed);
    }
    assert.equal((await caesar(box, ['policy', 'set', 'allowed', '""', '--global'])).code, 0);
    assert.deepEqual((await loadConfig({ root: box.root, home: box.home })).config.policy.allowed, [], '"" empties a list');
  });

  it('writes the layer --global or --local names, keeps the comments of the file, and says when a layer shadows it', async () => {
    box.write(box.projectFile, '# shared with the team\n[policy]\nmax_parallel = 3 # our CI has 4 cores\n');
    assert.equal((await caesar(box, ['policy', 'set', 'max_parallel', '6'])).code, 0);
    assert.equal(box.read(box.projectFile), '# shared with the team\n[policy]\nmax_parallel = 6 # our CI has 4 cores\n');

    const local = await caesar(box, ['policy', 'set', 'default_isolation', 'worktree', '--local']);
    assert.equal(local.code, 0, local.err);
    assert.match(box.read(box.localFile), /default_isolation = "worktree"/);
    const global = await caesar(box, ['policy', 'set', 'default_timeout', '20m', '--global']);
    assert.equal(global.code, 0, global.err);
    assert.match(box.read(box.globalFile), /default_timeout = "20m"/);
    const loaded = await loadConfig({ root: box.root, home: box.home });
    assert.deepEqual(
      [loaded.config.policy.default_isolation, loaded.provenance.policy.default_isolation, loaded.config.policy.default_timeout_ms, loaded.provenance.policy.default_timeout_ms],
      ['worktree', 'local', 1_200_000, 'global'],
    );

    const shadowed = await caesar(box, ['policy', 'set', 'default_isolation', 'inplace']);
    assert.equal(shadowed.code, 0, shadowed.err);
    assert.match(shadowed.err, /\[policy\] default_isolation is also set in the local layer, .*config\.local\.toml, which takes precedence: .*\(or change it there: caesar policy set default_isolation inplace --local\)/);
    assert.equal((await caesar(box, ['policy', 'set', 'max_depth', '1', '--global', '--local'])).code, 2);
  });

  it('refuses an unknown key or a value the schema rejects, naming what it expects, and writes nothing', async () => {
    box.write(box.projectFile, '[policy]\nmax_parallel = 3\n');
    const unknown = await caesar(box, ['policy', 'set', 'max_paralel', '2']);
    assert.equal(unknown.code, 2);
    assert.match(unknown.err, /Unknown policy key "max_paralel"\. The keys are: allowed, denied, max_parallel, .*allow_inplace_write, max_depth/);
    for (const [key, value, expected] of [
      ['max_parallel', '0', /Give a whole number of 1 or more/],
      ['max_parallel', 'many', /expected number/],
      ['default_isolation', 'sideways', /expected one of "auto"\|"inplace"\|"worktree"/],
      ['default_timeout', '1.5m', /Give a duration such as 90s, 10m or 1h/],
      ['allow_inplace_write', 'yes', /Give true or false/],
    ] as const) {
      const r = await caesar(box, ['policy', 'set', key, value]);
      assert.equal(r.code, 2, `${key} ${value}`);
      assert.match(r.err, new RegExp(`Invalid value "${value.replace('.', '\\.')}" for ${key}`));
      assert.match(r.err, expected);
    }
    assert.equal(box.read(box.projectFile), '[policy]\nmax_parallel = 3\n');
  });
});

import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import { DEFAULT_CHECK_TIMEOUT_MS, describePrograms, loadConfig, programsOf, recordTrust } from '../../src/config';
import { sandbox, type Sandbox } from './helpers';

/** `[[check]]` and a role's `checks` are shell commands: a repository's layer names programs with them. */
describe('config: [[check]] and role checks', () => {
  let box: Sandbox;
  beforeEach(() => {
    box = sandbox();
  });
  afterEach(() => box.cleanup());

  const PROJECT = [
    '[[check]]',
    'name = "tests"',
    'command = "npm test"',
    'timeout = "90s"',
    '[[role]]',
    'name = "fixer"',
    'agents = ["codex"]',
    'mode = "write"',
    'checks = ["make lint"]',
  ].join('\n');

  it('merges [[check]] by name (a later layer replaces it) with the default timeout when none is given', async () => {
    box.write(box.globalFile, '[[check]]\nname = "tests"\ncommand = "true"\n[[check]]\nname = "build"\ncommand = "make"\n');
    box.write(box.projectFile, '[[check]]\nname = "tests"\ncommand = "npm test"\ntimeout = "90s"\n');
    const loaded = await loadConfig({ root: box.root, home: box.home, trusted: true });
    assert.deepEqual(loaded.config.checks, [
      { name: 'tests', command: 'npm test', timeout_ms: 90_000 },
      { name: 'build', command: 'make', timeout_ms: DEFAULT_CHECK_TIMEOUT_MS },
    ]);
    assert.equal(loaded.provenance.checks.tests, 'project');
    assert.equal(loaded.provenance.checks.build, 'global');
  });

  it('counts the checks of a repository layer among the programs it names, and describes them', async () => {
    box.write(box.projectFile, PROJECT);
    const loaded = await loadConfig({ root: box.root, home: box.home, trusted: true });
    const programs = await programsOf(loaded.layers.find((l) => l.scope === 'project')!.data, box.root);
    assert.deepEqual(programs.checks, [
      { name: 'tests', command: 'npm test' },
      { name: 'role "fixer"', command: 'make lint' },
    ]);
    const lines = describePrograms(programs);
    assert.ok(lines.includes('check tests runs in a shell: "npm test"'), lines.join('\n'));
    assert.ok(lines.includes('check role "fixer" runs in a shell: "make lint"'), lines.join('\n'));
  });

  it('leaves them out of an untrusted workspace (the editor) and of an untrusted file until it is trusted (the CLI)', async () => {
    box.write(box.projectFile, PROJECT);
    const editor = await loadConfig({ root: box.root, home: box.home, trusted: false });
    assert.deepEqual(editor.config.checks, []);
    assert.equal(editor.config.roles.find((r) => r.name === 'fixer')!.checks, undefined);
    assert.ok(editor.ignored.some((n) => n.includes('[[check]] tests ignored')), editor.ignored.join('\n'));
    assert.ok(editor.ignored.some((n) => n.includes('role "fixer" checks ignored')), editor.ignored.join('\n'));

    const cli = await loadConfig({ root: box.root, home: box.home });
    assert.deepEqual(cli.config.checks, []);
    assert.equal(cli.untrusted.length, 1);
    assert.ok(cli.untrusted[0]!.programs.checks.length === 2);

    await recordTrust(box.home, box.projectFile, fs.readFileSync(box.projectFile, 'utf8'), 'test');
    const trusted = await loadConfig({ root: box.root, home: box.home });
    assert.deepEqual(trusted.config.checks, [{ name: 'tests', command: 'npm test', timeout_ms: 90_000 }]);
    assert.deepEqual(trusted.config.roles.find((r) => r.name === 'fixer')!.checks, ['make lint']);
  });

  it('refuses a malformed [[check]] with a message naming the field', async () => {
    box.write(box.globalFile, '[[check]]\nname = "bad name"\ncommand = ""\n');
    await assert.rejects(loadConfig({ root: box.root, home: box.home }), (err: Error) => /check/.test(err.message) && /name|command/.test(err.message));
  });
});

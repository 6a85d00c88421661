import { strict as assert } from 'node:assert';
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { explainFailure, locateBwrap, sandboxPreflight, resetSandboxPreflight } from '../../../src/engine/sandbox/preflight';
import { sandboxMounts, type Mount, type SandboxInput } from '../../../src/engine/sandbox/policy';
import { bwrapArgs } from '../../../src/engine/sandbox/bwrap';
import { prepareSandbox } from '../../../src/engine/sandbox';
import { checkoutReadOnlyUnder } from '../../../src/engine/sandbox/sandbox';
import { needs } from '../../support/needs';

describe('sandbox: preflight', () => {
  afterEach(() => resetSandboxPreflight());

  it('names each cause with its fix, from the kernel switches', () => {
    const sysctls = (values: Record<string, string>) => (name: string) => values[name];
    const userns = explainFailure('/usr/bin/bwrap', 'setting up uid map: Permission denied', sysctls({ 'kernel.unprivileged_userns_clone': '0' }));
    assert.ok(!userns.available && /user namespaces are disabled/.test(userns.cause) && /kernel\.unprivileged_userns_clone=1/.test(userns.fix));
    const max = explainFailure('/usr/bin/bwrap', 'No space left on device', sysctls({ 'user.max_user_namespaces': '0' }));
    assert.ok(!max.available && /max_user_namespaces = 0/.test(max.cause) && /user\.max_user_namespaces=/.test(max.fix));
    const apparmor = explainFailure('/usr/bin/bwrap', 'setting up uid map: Permission denied', sysctls({ 'kernel.apparmor_restrict_unprivileged_userns': '1' }));
    assert.ok(!apparmor.available && /AppArmor/.test(apparmor.cause) && /apparmor_restrict_unprivileged_userns=0/.test(apparmor.fix));
    const other = explainFailure('/usr/bin/bwrap', 'Creating new namespace failed', sysctls({}));
    assert.ok(!other.available && /Creating new namespace failed/.test(other.cause));
  });

  it('finds bwrap on PATH, or where $CAESAR_BWRAP says; an empty $CAESAR_BWRAP means none', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'caesar-bwrap-path-'));
    assert.equal(locateBwrap({ PATH: dir }), undefined);
    assert.equal(locateBwrap({ PATH: '/usr/bin', CAESAR_BWRAP: '' }), undefined);
    assert.equal(locateBwrap({ PATH: dir, CAESAR_BWRAP: '/opt/bwrap' }), '/opt/bwrap');
    const missing = await sandboxPreflight({ PATH: dir });
    assert.ok(!missing.available && /not installed/.test(missing.cause) && /apt install bubblewrap/.test(missing.fix));
  });

  it('a bwrap that fails is explained, not trusted', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'caesar-bwrap-fake-'));
    const fake = path.join(dir, 'bwrap');
    writeFileSync(fake, '#!/bin/sh\necho "bwrap: No permissions to creating new namespace" >&2\nexit 1\n', { mode: 0o755 });
    const verdict = await sandboxPreflight({ CAESAR_BWRAP: fake });
    assert.ok(!verdict.available && /No permissions to creating new namespace/.test(verdict.cause), JSON.stringify(verdict));
  });
});

describe('sandbox: mounts', () => {
  const base = (over: Partial<SandboxInput> = {}): SandboxInput => {
    const root = mkdtempSync(path.join(tmpdir(), 'caesar-policy-'));
    mkdirSync(path.join(root, '.git', 'worktrees', 't1'), { recursive: true });
    const worktree = path.join(root, '.caesar', 'wt', 't1');
    mkdirSync(worktree, { recursive: true });
    writeFileSync(path.join(worktree, '.git'), `gitdir: ${path.join(root, '.git', 'worktrees', 't1')}\n`);
    const taskDir = path.join(root, '.caesar', 'tasks', 't1');
    mkdirSync(taskDir, { recursive: true });
    return {
      agentId: 'codex', mode: 'write', cwd: worktree, workspace: worktree, worktree, gitRoot: root, root, taskDir,
      taskView: path.join(taskDir, 'sandbox-view'), emptyFile: path.join(taskDir, 'sandbox-empty'),
      env: { HOME: path.join(root, 'home'), PATH: '/usr/bin' }, command: 'codex', args: [], hide: [], readWrite: [], ...over,
    };
  };
  /** Where the last such mount is (the one that wins): -1 when there is none. */
  const index = (mounts: Mount[], kind: Mount['kind'], p: string) => mounts.findLastIndex((m) => m.kind === kind && m.path === p);

  it('a read_write folder above a secret or a repository leaves them hidden and read-only; naming one, or a path in one, opens just that', () => {
    const input = base();
    const home = input.env.HOME!;
    mkdirSync(path.join(home, '.ssh'), { recursive: true });
    const wide = sandboxMounts({ ...input, readWrite: [path.dirname(input.root!), home] }, []);
    const last = (p: string) => Math.max(index(wide, 'tmpfs', p), index(wide, 'ro', p), index(wide, 'rw', p));
    assert.equal(last(path.join(home, '.ssh')), index(wide, 'tmpfs', path.join(home, '.ssh')), '~/.ssh hidden over the read_write home');
    assert.ok(index(wide, 'tmpfs', path.join(home, '.ssh')) > index(wide, 'rw', home));
    for (const guarded of [path.join(input.root!, '.git'), path.join(input.root!, '.caesar')]) {
      assert.ok(index(wide, 'ro', guarded) > index(wide, 'rw', path.dirname(input.root!)), `${guarded} read-only over the read_write parent`);
    }
    assert.ok(index(wide, 'rw', input.worktree!) > index(wide, 'ro', path.join(input.root!, '.caesar')), 'the worktree stays writable');
    const hooks = path.join(input.root!, '.git', 'hooks');
    const named = sandboxMounts({ ...input, readWrite: [path.join(home, '.ssh'), hooks] }, []);
    assert.equal(index(named, 'tmpfs', path.join(home, '.ssh')), -1, 'named itself: not hidden');
    assert.ok(index(named, 'ro', path.join(input.root!, '.git')) > 0, 'a path inside it named: the rest stays read-only');
    assert.ok(index(named, 'rw', hooks) > index(named, 'ro', path.join(input.root!, '.git')), 'and that path alone is opened, after the guard');
  });

  it('shows, read-only, the install under /tmp that a PATH folder there links its tools into (a cache made with mktemp -d)', () => {
    const cache = realpathSync(mkdtempSync(path.join('/tmp', 'caesar-policy-cache-')));
    mkdirSync(path.join(cache, 'agents', 'tool@1', 'bin'), { recursive: true });
    writeFileSync(path.join(cache, 'agents', 'tool@1', 'bin', 'tool'), '#!/bin/sh\n', { mode: 0o755 });
    const bin = realpathSync(mkdtempSync(path.join('/tmp', 'caesar-policy-bin-')));
    symlinkSync(path.join(cache, 'agents', 'tool@1', 'bin', 'tool'), path.join(bin, 'tool'));
    const mounts = sandboxMounts(base({ command: 'tool', env: { HOME: '/nonexistent', PATH: `${bin}:/usr/bin` } }), []);
    assert.ok(index(mounts, 'ro', bin) > 0, 'the PATH folder under /tmp');
    assert.ok(index(mounts, 'ro', cache) > 0, `the install its link points into: ${JSON.stringify(mounts.filter((m) => m.kind === 'ro'))}`);
    rmSync(cache, { recursive: true, force: true });
    rmSync(bin, { recursive: true, force: true });
  });

  it('worktree writable after .caesar is made read-only again; its git entry writable after .git', () => {
    const input = base();
    const mounts = sandboxMounts(input, ['task.json', 'state.json', 'agent-events.jsonl', 'questions']);
    assert.ok(index(mounts, 'ro', path.join(input.root, '.caesar')) < index(mounts, 'rw', input.worktree!));
    assert.ok(index(mounts, 'ro', path.join(input.root, '.git')) < index(mounts, 'rw', path.join(input.root, '.git', 'worktrees', 't1')));
    assert.ok(index(mounts, 'ro', path.join(input.taskDir, 'task.json')) > index(mounts, 'rw', input.taskDir), 'task.json read-only inside the view');
    // state.json is the supervisor's, rewritten as the agent starts: never bound from the live file, an empty one instead.
    const state = mounts.filter((m) => m.path === path.join(input.taskDir, 'state.json'));
    assert.deepEqual(state.map((m) => [m.kind, (m as { source?: string }).source]), [['empty', input.emptyFile]]);
    assert.ok(index(mounts, 'rw', path.join(input.taskDir, 'agent-events.jsonl')) > 0);
    assert.equal(mounts.filter((m) => m.kind === 'rw' && m.path === path.join(input.taskDir, 'task.json')).length, 0);
  });

  it('a read-only task has no writable workspace, worktree or git entry', () => {
    const input = base({ mode: 'read-only' });
    const mounts = sandboxMounts(input, []);
    assert.equal(index(mounts, 'rw', input.worktree!), -1);
    assert.equal(index(mounts, 'rw', path.join(input.root, '.git', 'worktrees', 't1')), -1);
  });

  it('a .git file pointing outside <common>/worktrees/ gets no writable entry', () => {
    const input = base();
    writeFileSync(path.join(input.worktree!, '.git'), `gitdir: ${path.join(input.root, '.git')}\n`);
    const mounts = sandboxMounts(input, []);
    assert.equal(mounts.filter((m) => m.kind === 'rw' && m.path.startsWith(path.join(input.root, '.git'))).length, 0);
  });

  it('hides the user\'s secrets and the other agents\' state, keeps its own writable', () => {
    const input = base();
    const home = input.env.HOME!;
    for (const dir of ['.ssh', '.claude', '.codex', '.config/gh']) mkdirSync(path.join(home, dir), { recursive: true });
    writeFileSync(path.join(home, '.netrc'), 'machine x password y\n');
    const mounts = sandboxMounts(input, []);
    for (const dir of ['.ssh', '.claude', '.config/gh']) assert.ok(index(mounts, 'tmpfs', path.join(home, dir)) >= 0, dir);
    assert.ok(mounts.some((m) => m.kind === 'empty' && m.path === path.join(home, '.netrc')));
    assert.equal(index(mounts, 'tmpfs', path.join(home, '.codex')), -1);
    assert.ok(index(mounts, 'rw', path.join(home, '.codex')) >= 0);
  });

  it('turns mounts into bwrap arguments with the namespaces and the process rules', () => {
    const args = bwrapArgs([{ kind: 'ro', path: '/' }, { kind: 'rw', path: '/w', optional: true }], { cwd: '/w', setEnv: { TMPDIR: '/tmp' }, unsetEnv: ['SSH_AUTH_SOCK'] });
    assert.deepEqual(args.slice(0, 6), ['--ro-bind', '/', '/', '--bind-try', '/w', '/w']);
    for (const flag of ['--unshare-all', '--share-net', '--die-with-parent', '--new-session']) assert.ok(args.includes(flag), flag);
    assert.deepEqual(args.slice(-2), ['--chdir', '/w']);
  });
});

describe('sandbox: prepareSandbox', () => {
  it('creates the agent CLI\'s missing state dirs before it starts (inside, their parents are read-only)', async function () {
    await needs(this, 'bubblewrap');
    const root = mkdtempSync(path.join(tmpdir(), 'caesar-prepare-'));
    const taskDir = path.join(root, '.caesar', 'tasks', 't1');
    mkdirSync(taskDir, { recursive: true });
    const home = path.join(root, 'home');
    const prepared = await prepareSandbox({
      settings: { mode: 'required' }, plan: { command: '/bin/true', args: [], cwd: root, display: 'true' },
      env: { HOME: home, XDG_DATA_HOME: path.join(home, '.local/share') }, agentId: 'opencode', mode: 'write', workspace: root, paths: { root, dir: taskDir },
    });
    assert.deepEqual(prepared.record, { confined: true });
    for (const dir of ['.config/opencode', '.local/share/opencode', '.local/state/opencode', '.cache/opencode']) {
      assert.ok(statSync(path.join(home, dir)).isDirectory(), dir);
    }
    await prepared.finish();
    const claude = await prepareSandbox({
      settings: { mode: 'required' }, plan: { command: '/bin/true', args: [], cwd: root, display: 'true' },
      env: { HOME: home }, agentId: 'claude', mode: 'write', workspace: root, paths: { root, dir: taskDir },
    });
    assert.equal(readFileSync(path.join(home, '.claude.json'), 'utf8'), '{}\n', 'claude hangs when it cannot create it');
    writeFileSync(path.join(home, '.claude.json'), '{"mine":1}');
    await claude.finish();
    await prepareSandbox({ settings: { mode: 'required' }, plan: { command: '/bin/true', args: [], cwd: root, display: 'true' }, env: { HOME: home }, agentId: 'claude', mode: 'write', workspace: root, paths: { root, dir: taskDir } }).then((p) => p.finish());
    assert.equal(readFileSync(path.join(home, '.claude.json'), 'utf8'), '{"mine":1}', 'an existing one is left as it is');
  });
});

describe('sandbox: is the checkout read-only to a confined agent (the checkout guard is left out then)', () => {
  const base = realpathSync(mkdtempSync(path.join(tmpdir(), 'caesar-ro-checkout-')));
  const checkout = path.join(base, 'repo');
  mkdirSync(path.join(checkout, '.caesar', 'wt', 't1'), { recursive: true });
  mkdirSync(path.join(checkout, 'src'), { recursive: true });
  mkdirSync(path.join(checkout, '.git', 'worktrees', 't1'), { recursive: true });
  mkdirSync(path.join(base, 'elsewhere'), { recursive: true });
  symlinkSync(path.join(checkout, 'src'), path.join(base, 'link-to-src'));
  after(() => rmSync(base, { recursive: true, force: true }));
  const rw = (p: string, source?: string): Mount => ({ kind: 'rw', path: p, ...(source ? { source } : {}) });
  const readOnly = (...mounts: Mount[]) => checkoutReadOnlyUnder([{ kind: 'ro', path: '/' }, { kind: 'tmpfs', path: '/tmp' }, ...mounts], checkout);

  it('read-only with its worktree, git entry and task folder writable (under .caesar and .git), or folders elsewhere', () => {
    assert.equal(readOnly(rw(path.join(checkout, '.caesar', 'wt', 't1')), rw(path.join(checkout, '.git', 'worktrees', 't1')), rw(path.join(base, 'elsewhere'))), true);
    assert.equal(readOnly(rw(path.join(checkout, '.caesar', 'tasks', 't1'), path.join(checkout, '.caesar', 'tasks', 't1', 'view'))), true);
    assert.equal(readOnly({ kind: 'tmpfs', path: checkout }), true, 'a tmpfs is the sandbox\'s memory');
    assert.equal(checkoutReadOnlyUnder([rw(`${checkout}-sibling`)], checkout), true, 'a sibling whose name starts the same');
  });

  it('writable: the checkout itself, a folder above it, a folder in it, a link into it, a source in it', () => {
    assert.equal(readOnly(rw(checkout)), false);
    assert.equal(readOnly(rw(base)), false);
    assert.equal(readOnly(rw('/')), false);
    assert.equal(readOnly(rw(path.join(checkout, 'src'))), false);
    assert.equal(readOnly(rw(path.join(base, 'link-to-src'))), false, 'a link is bound as its target');
    assert.equal(readOnly(rw(path.join(base, 'elsewhere'), path.join(checkout, 'src'))), false);
    assert.equal(readOnly(rw(path.join(base, '..repo-like'))), true, 'a sibling folder named with two dots');
    assert.equal(readOnly(rw(path.join(checkout, '..data'))), false, 'a folder in the checkout whose name starts with two dots');
  });
});

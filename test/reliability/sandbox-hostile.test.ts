import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { taskPaths } from '../../src/protocol';
import { git, makeRepo, startFixture, waitForFinished, type Finished } from '../engine/runtime/helpers';
import { probeAgent, probeResults, type Probe } from '../engine/sandbox/helpers';
import { needs } from '../support/needs';

/**
 * Issue 21's attack list, tried from inside a sandboxed task by a bash agent: each write outside what the task owns
 * is refused by the kernel, and the target is verified unchanged from outside. The same probes with the sandbox off
 * succeed (the last test), so each assertion here can fail.
 */
(process.platform === 'linux' ? describe : describe.skip)('reliability: a sandboxed agent writes only what its task owns', function () {
  this.timeout(90_000);
  let root: string;
  let home: string;
  let common: string;
  let sibling: { id: string; dir: string; worktree: string };
  let finished: Finished;
  let results: Map<string, string>;
  let initial: Record<string, string>;
  const marker = `caesar-escapee-${process.pid}-${Date.now()}`;

  const attacks = (): Probe[] => {
    const own = '$(dirname "$CAESAR_TASK_FILE")';
    return [
      ['git config', `echo '[core] fsmonitor = touch /tmp/pwned' >> ${common}/config`],
      ['git hooks', `echo 'touch /tmp/pwned' > ${common}/hooks/post-checkout && chmod +x ${common}/hooks/post-checkout`],
      ['git info/attributes', `mkdir -p ${common}/info && echo '* filter=evil' >> ${common}/info/attributes`],
      ['git refs', `git -C ${root} update-ref refs/heads/main HEAD~0 -m x && echo 0000000000000000000000000000000000000000 > ${common}/refs/heads/evil`],
      ['git packed-refs', `echo x >> ${common}/packed-refs`],
      ['git objects/pack deletion', `rm ${common}/objects/pack/*.pack`],
      ['git other worktree entry', `echo x > ${common}/worktrees/${path.basename(sibling.worktree)}/HEAD`],
      ['caesar config.toml', `echo '[worktree]' >> ${root}/.caesar/config.toml`],
      ['sibling worktree', `echo injected >> ${sibling.worktree}/README.md`],
      ['sibling state.json', `echo '{}' > ${sibling.dir}/state.json`],
      ['sibling result.json', `echo '{}' > ${sibling.dir}/result.json`],
      ['sibling events.jsonl', `echo '{}' >> ${sibling.dir}/events.jsonl`],
      ['sibling applied.json', `echo '{}' > ${sibling.dir}/applied.json`],
      ['own task.json', `echo '{}' > "$CAESAR_TASK_FILE"`],
      ['own state.json', `echo '{}' > ${own}/state.json`],
      ['own events.jsonl', `echo '{"type":"finished"}' >> ${own}/events.jsonl`],
      ['checkout tracked file', `echo injected >> ${root}/README.md`],
      ['checkout node_modules', `mkdir -p ${root}/node_modules/x && echo evil > ${root}/node_modules/x/index.js`],
      ['checkout .env', `echo SECRET=stolen > ${root}/.env`],
      ['home', `echo x > ${home}/.bashrc`],
      ['read ~/.ssh', `cat ${home}/.ssh/id_ed25519 | grep -q PRIVATE`],
      ['read another agent credentials', `cat ${home}/.claude/.credentials.json | grep -q token`],
      // Processes: the PID namespace shows none of the host's (the test runner stands for the supervisor).
      ['signal a host process', `kill -0 ${process.pid}`],
      ['read a host process environment', `grep -q . /proc/${process.pid}/environ`],
      // Run as root (a container, CI), bwrap keeps the capabilities unless told: umount of a read-only bind reveals
      // the host's writable file beneath, and /proc/sys writes the host kernel's settings (core_pattern runs a program).
      ['hold a capability', `! grep -qE '^CapEff:[[:space:]]+0+$' /proc/self/status`],
      ['undo a read-only mount', `umount ${root}/.caesar && echo '[worktree]' >> ${root}/.caesar/config.toml`],
      ['kernel settings', 'cat /proc/sys/kernel/printk_ratelimit > /proc/sys/kernel/printk_ratelimit'],
      ['cgroup', 'echo $$ > /sys/fs/cgroup/cgroup.procs'],
      // TIOCSTI pushes input into a terminal: the agent has none (bwrap --new-session, no controlling tty).
      ['terminal injection', `python3 -c 'import fcntl, termios, os; fcntl.ioctl(os.open("/dev/tty", os.O_RDWR), termios.TIOCSTI, b"x")'`],
    ];
  };
  // What the task owns: these must keep working inside the sandbox.
  const allowed: Probe[] = [
    ['worktree write', 'echo mine > agent.txt'],
    ['private tmp', 'echo t > /tmp/caesar-probe && test -f /tmp/caesar-probe'],
    ['git status in worktree', 'git status --porcelain'],
    ['outbox', `echo '{"protocol":"caesar.event/v1","type":"message","text":"hi"}' >> "$CAESAR_EVENTS_PATH"`],
    // A private /dev/shm: written inside, never seen by the host (checked below).
    ['private shm', `echo x > /dev/shm/${marker}`],
  ];

  before(async function () {
    await needs(this, 'bubblewrap');
    root = makeRepo({ 'README.md': '# test repo\n' });
    git(root, 'gc', '-q'); // a pack file the attack tries to delete
    common = path.join(root, '.git');
    mkdirSync(path.join(root, '.caesar'), { recursive: true });
    writeFileSync(path.join(root, '.caesar', 'config.toml'), '[policy]\nmax_parallel = 4\n');
    home = mkdtempSync(path.join(tmpdir(), 'caesar-sandbox-home-'));
    mkdirSync(path.join(home, '.ssh'));
    writeFileSync(path.join(home, '.ssh', 'id_ed25519'), '-----BEGIN OPENSSH PRIVATE KEY-----\n');
    mkdirSync(path.join(home, '.claude'));
    writeFileSync(path.join(home, '.claude', '.credentials.json'), '{"token":"secret"}');
    writeFileSync(path.join(home, '.bashrc'), '# mine\n');
    const env = { HOME: home };
    const first = await startFixture(root, {}, { ...probeAgent([]), sandbox: { mode: 'required' } }, env);
    await waitForFinished(root, first.id);
    sibling = { id: first.id, dir: first.taskDir, worktree: JSON.parse(readFileSync(path.join(first.taskDir, 'state.json'), 'utf8')).worktree };
    initial = snapshot();
    // It drops CAESAR_TASK_ID, so the supervisor's sweep by environment cannot find it; the probe waits until it runs.
    const escape = `setsid env -u CAESAR_TASK_ID bash -c '(exec -a ${marker} sleep 300 &) ; touch escaped' </dev/null >/dev/null 2>&1 & for i in $(seq 100); do [ -f escaped ] && exit 0; sleep 0.1; done; exit 1`;
    const { id } = await startFixture(root, {}, { ...probeAgent([...attacks(), ...allowed, ['escapee', escape]]), sandbox: { mode: 'required' } }, env);
    finished = await waitForFinished(root, id);
    results = probeResults(finished.state.worktree!);
  });

  /** The files the attacks aim at, as the host sees them. */
  function snapshot(): Record<string, string> {
    const read = (file: string) => {
      try {
        return readFileSync(file, 'utf8');
      } catch {
        return '(absent)';
      }
    };
    const files = [
      `${common}/config`, `${common}/hooks/post-checkout`, `${common}/info/attributes`, `${common}/packed-refs`, `${common}/refs/heads/evil`,
      `${common}/worktrees/${path.basename(sibling.worktree)}/HEAD`, `${root}/.caesar/config.toml`, `${sibling.worktree}/README.md`,
      `${sibling.dir}/state.json`, `${sibling.dir}/result.json`, `${sibling.dir}/events.jsonl`, `${sibling.dir}/applied.json`,
      `${root}/README.md`, `${root}/node_modules/x/index.js`, `${root}/.env`, `${home}/.bashrc`,
    ];
    const snap = Object.fromEntries(files.map((f) => [f, read(f)]));
    snap.packs = readdirSync(path.join(common, 'objects', 'pack')).sort().join(',');
    snap.main = git(root, 'rev-parse', 'main');
    return snap;
  }

  it('the task ran confined and succeeded', () => {
    assert.deepEqual(finished.state.sandbox, { confined: true });
    assert.equal(finished.state.status, 'succeeded', JSON.stringify(finished.result.report));
  });

  it('refuses every write of the attack list, and the host sees each target unchanged', () => {
    for (const [label] of attacks()) assert.equal(results.get(label), 'refused', `${label}: ${results.get(label)}`);
    const after = snapshot();
    for (const key of Object.keys(initial)) assert.equal(after[key], initial[key], `${key} changed`);
  });

  it('the task files of its own stay the supervisor\'s: task.json, state.json and events.jsonl untouched', () => {
    const paths = taskPaths(root, finished.state.id);
    assert.equal(JSON.parse(readFileSync(paths.task, 'utf8')).id, finished.state.id);
    assert.equal(finished.badLines, 0);
    assert.equal(finished.events.filter((e) => e.type === 'finished').length, 1);
  });

  it('lets the agent write what it owns: its worktree, a private /tmp, git status, its outbox, its report', () => {
    for (const [label] of allowed) assert.equal(results.get(label), 'ok', label);
    assert.equal(existsSync(`/dev/shm/${marker}`), false, 'the host sees the agent\'s /dev/shm');
    assert.equal(readFileSync(path.join(finished.state.worktree!, 'agent.txt'), 'utf8'), 'mine\n');
    assert.equal(finished.result.report.summary, 'Ran the probes.');
    assert.ok(finished.events.some((e) => e.type === 'message' && (e as { text?: string }).text === 'hi'));
  });

  it('a setsid process that dropped its task id does not outlive the task', () => {
    assert.equal(results.get('escapee'), 'ok');
    const alive = execFileSync('ps', ['-eo', 'args'], { encoding: 'utf8' }).split('\n').filter((l) => l.includes(marker));
    assert.deepEqual(alive, []);
  });
});

import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { git, makeRepo, startFixture, waitForFinished } from '../engine/runtime/helpers';
import { probeAgent, type Probe } from '../engine/sandbox/helpers';

// The attack list of sandbox-hostile.test.ts, shared by the sandboxed run and its controls.

/** The scene the attacks aim at: a repository, a finished sibling task, a home with secrets. */
export interface Scene {
  root: string;
  home: string;
  common: string;
  sibling: { id: string; dir: string; worktree: string };
}

export const AS_ROOT = process.getuid?.() === 0;
const READ_ONLY = /Read-only file system/;
const HIDDEN = /No such file or directory/;

/**
 * Issue 21's attack list, each with how the sandbox refuses it (the message on the probe's stderr): a probe that
 * failed for another reason, or could not even try (its tool missing), is not counted as refused.
 */
/** The class of an attack of the list, by its label: what the hostile suite reports held/total for. */
export function attackClass(label: string): string {
  if (label.startsWith('git ')) return 'the repository\'s git dir';
  if (/^(sibling|own) /.test(label) || label === 'caesar config.toml') return 'Caesar\'s records and config';
  if (label.startsWith('checkout ')) return 'the user\'s checkout';
  if (/host process/.test(label)) return 'host processes';
  if (/^(home|read )/.test(label)) return 'home and secrets';
  if (label === 'terminal injection') return 'the terminal';
  return 'kernel, mounts and capabilities';
}

export function attacks(scene: Scene): Array<{ probe: Probe; refusal: RegExp }> {
  const { root, home, common, sibling } = scene;
  const own = '$(dirname "$CAESAR_TASK_FILE")';
  const list: Array<[string, string, RegExp]> = [
    ['git config', `echo '[core] fsmonitor = touch ${home}/pwned' >> ${common}/config`, READ_ONLY],
    ['git hooks', `echo 'touch ${home}/pwned' > ${common}/hooks/post-checkout && chmod +x ${common}/hooks/post-checkout`, READ_ONLY],
    ['git info/attributes', `mkdir -p ${common}/info && echo '* filter=evil' >> ${common}/info/attributes`, READ_ONLY],
    ['git refs', `git -C ${root} update-ref refs/heads/planted HEAD && echo 0000000000000000000000000000000000000000 > ${common}/refs/heads/evil`, READ_ONLY],
    ['git packed-refs', `echo x >> ${common}/packed-refs`, READ_ONLY],
    ['git objects/pack deletion', `rm ${common}/objects/pack/*.pack`, READ_ONLY],
    ['git other worktree entry', `echo x > ${common}/worktrees/${path.basename(sibling.worktree)}/HEAD`, READ_ONLY],
    ['caesar config.toml', `echo '[worktree]' >> ${root}/.caesar/config.toml`, READ_ONLY],
    ['sibling worktree', `echo injected >> ${sibling.worktree}/README.md`, READ_ONLY],
    ['sibling state.json', `echo '{}' > ${sibling.dir}/state.json`, READ_ONLY],
    ['sibling result.json', `echo '{}' > ${sibling.dir}/result.json`, READ_ONLY],
    ['sibling events.jsonl', `echo '{}' >> ${sibling.dir}/events.jsonl`, READ_ONLY],
    ['sibling applied.json', `echo '{}' > ${sibling.dir}/applied.json`, READ_ONLY],
    ['own task.json', `echo '{}' > "$CAESAR_TASK_FILE"`, READ_ONLY],
    ['own state.json', `echo '{}' > ${own}/state.json`, READ_ONLY],
    ['own events.jsonl', `echo '{"type":"finished"}' >> ${own}/events.jsonl`, READ_ONLY],
    ['checkout tracked file', `echo injected >> ${root}/README.md`, READ_ONLY],
    ['checkout node_modules', `mkdir -p ${root}/node_modules/x && echo evil > ${root}/node_modules/x/index.js`, READ_ONLY],
    ['checkout .env', `echo SECRET=stolen > ${root}/.env`, READ_ONLY],
    ['home', `echo x > ${home}/.bashrc`, READ_ONLY],
    ['read ~/.ssh', `cat ${home}/.ssh/id_ed25519 | grep -q PRIVATE`, HIDDEN],
    ['read another agent credentials', `cat ${home}/.claude/.credentials.json | grep -q token`, HIDDEN],
    // Processes: the PID namespace shows none of the host's (the test runner stands for the supervisor).
    ['signal a host process', `kill -0 ${process.pid}`, /No such process/],
    ['read a host process environment', `grep -q . /proc/${process.pid}/environ`, HIDDEN],
    // Run as root (a container, CI), bwrap keeps the capabilities unless told: umount of a read-only bind reveals
    // the host's writable file beneath, and /proc/sys writes the host kernel's settings (core_pattern runs a program).
    // The capability probe fails silently (grep finds CapEff all zero); the last test shows them kept without the defence.
    ['hold a capability', `! grep -qE '^CapEff:[[:space:]]+0+$' /proc/self/status`, /^exit 1: $/],
    ['undo a read-only mount', `{ ! mountpoint -q ${root}/.caesar || umount ${root}/.caesar; } && echo '[worktree]' >> ${root}/.caesar/config.toml`, /must be superuser to unmount|Operation not permitted/],
    ['kernel settings', 'cat /proc/sys/kernel/printk_ratelimit > /proc/sys/kernel/printk_ratelimit', READ_ONLY],
    ['cgroup', 'echo $$ > /sys/fs/cgroup/cgroup.procs', READ_ONLY],
    // TIOCSTI pushes input into a terminal: the agent has none (bwrap --new-session, no controlling tty).
    ['terminal injection', TIOCSTI, /No such device or address: '\/dev\/tty'/],
  ];
  return list.map(([label, command, refusal]) => ({ probe: [label, command], refusal }));
}

export const TIOCSTI = `python3 -c 'import fcntl, termios, os; fcntl.ioctl(os.open("/dev/tty", os.O_RDWR), termios.TIOCSTI, b"x")'`;

/** A repository with a packed store, a .caesar config, a finished sibling task, and a home with secrets. */
export async function plantScene(mode: 'required' | 'off'): Promise<Scene> {
  const root = makeRepo({ 'README.md': '# test repo\n' });
  git(root, 'gc', '-q'); // a pack file the attack tries to delete; main is in packed-refs, which it tries to write
  mkdirSync(path.join(root, '.caesar'), { recursive: true });
  writeFileSync(path.join(root, '.caesar', 'config.toml'), '[policy]\nmax_parallel = 4\n');
  const home = mkdtempSync(path.join(tmpdir(), 'caesar-sandbox-home-'));
  mkdirSync(path.join(home, '.ssh'));
  writeFileSync(path.join(home, '.ssh', 'id_ed25519'), '-----BEGIN OPENSSH PRIVATE KEY-----\n');
  mkdirSync(path.join(home, '.claude'));
  writeFileSync(path.join(home, '.claude', '.credentials.json'), '{"token":"secret"}');
  writeFileSync(path.join(home, '.bashrc'), '# mine\n');
  const first = await startFixture(root, {}, { ...probeAgent([]), sandbox: { mode } }, { HOME: home });
  await waitForFinished(root, first.id);
  const worktree = JSON.parse(readFileSync(path.join(first.taskDir, 'state.json'), 'utf8')).worktree;
  return { root, home, common: path.join(root, '.git'), sibling: { id: first.id, dir: first.taskDir, worktree } };
}

/** The files the attacks aim at, as the host sees them. */
export function snapshot({ root, home, common, sibling }: Scene): Record<string, string> {
  const read = (file: string) => {
    try {
      return readFileSync(file, 'utf8');
    } catch {
      return '(absent)';
    }
  };
  const files = [
    `${common}/config`, `${common}/hooks/post-checkout`, `${common}/info/attributes`, `${common}/packed-refs`, `${common}/refs/heads/evil`, `${common}/refs/heads/planted`,
    `${common}/worktrees/${path.basename(sibling.worktree)}/HEAD`, `${root}/.caesar/config.toml`, `${sibling.worktree}/README.md`,
    `${sibling.dir}/state.json`, `${sibling.dir}/result.json`, `${sibling.dir}/events.jsonl`, `${sibling.dir}/applied.json`,
    `${root}/README.md`, `${root}/node_modules/x/index.js`, `${root}/.env`, `${home}/.bashrc`,
  ];
  const snap = Object.fromEntries(files.map((f) => [f, read(f)]));
  snap.packs = readdirSync(path.join(common, 'objects', 'pack')).sort().join(',');
  return snap;
}

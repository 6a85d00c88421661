import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { taskPaths } from '../../src/protocol';
import type { Mount } from '../../src/engine/sandbox/policy';
import { bwrapArgs, ROOT_AGENT_ID } from '../../src/engine/sandbox/bwrap';
import { worktreePath } from '../../src/engine/git/worktree';
import { startFixture, waitFor, waitForFinished, type Finished } from '../engine/runtime/helpers';
import { assertRefused, probeAgent, probeErrors, probeResults, type Probe } from '../engine/sandbox/helpers';
import { AS_ROOT, attackClass, attacks, plantScene, snapshot, TIOCSTI, type Scene } from './sandbox-attacks';
import { needs } from '../support/needs';

/**
 * Issue 21's attack list, tried from inside a sandboxed task by a bash agent: each write outside what the task owns
 * is refused by the kernel, and the target is verified unchanged from outside. The controls: the same probes in a
 * task with the sandbox off succeed and change every target, and the probes the host cannot show (capabilities, a
 * terminal) succeed in bubblewrap run with the product's own arguments less the defence (the two describes below).
 */
(process.platform === 'linux' ? describe : describe.skip)('reliability: a sandboxed agent writes only what its task owns', function () {
  this.timeout(90_000);
  let scene: Scene;
  let finished: Finished;
  let results: Map<string, string>;
  let initial: Record<string, string>;
  const marker = `caesar-escapee-${process.pid}-${Date.now()}`;

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
    scene = await plantScene('required');
    initial = snapshot(scene);
    // It drops CAESAR_TASK_ID, so the supervisor's sweep by environment cannot find it; the probe waits until it runs.
    const escape = `setsid env -u CAESAR_TASK_ID bash -c '(exec -a ${marker} sleep 300 &) ; touch escaped' </dev/null >/dev/null 2>&1 & for i in $(seq 100); do [ -f escaped ] && exit 0; sleep 0.1; done; exit 1`;
    const probes = [...attacks(scene).map((a) => a.probe), ...allowed, ['escapee', escape] as Probe];
    const { id } = await startFixture(scene.root, {}, { ...probeAgent(probes), sandbox: { mode: 'required' } }, { HOME: scene.home });
    finished = await waitForFinished(scene.root, id);
    results = probeResults(finished.state.worktree!);
  });

  it('the task ran confined and succeeded', () => {
    assert.deepEqual(finished.state.sandbox, { confined: true });
    assert.equal(finished.state.status, 'succeeded', JSON.stringify(finished.result.report));
  });

  it('refuses every write of the attack list, and the host sees each target unchanged', () => {
    // Held/total per class first (issue 34, item 5), so a log shows the whole picture, then each attack asserted.
    const held = new Map<string, { held: number; total: number }>();
    for (const attack of attacks(scene)) {
      const tally = held.get(attackClass(attack.probe[0])) ?? { held: 0, total: 0 };
      tally.total++;
      try {
        assertRefused(finished.state.worktree!, new Map([[attack.probe[0], attack.refusal]]));
        tally.held++;
      } catch {
        // counted as not held; the assertion below names it
      }
      held.set(attackClass(attack.probe[0]), tally);
    }
    for (const [kind, { held: n, total }] of held) console.log(`      held ${n}/${total}: ${kind}`);
    assertRefused(finished.state.worktree!, new Map(attacks(scene).map((a) => [a.probe[0], a.refusal])));
    const after = snapshot(scene);
    for (const key of Object.keys(initial)) assert.equal(after[key], initial[key], `${key} changed`);
  });

  it('the task files of its own stay the supervisor\'s: task.json, state.json and events.jsonl untouched', () => {
    const paths = taskPaths(scene.root, finished.state.id);
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

/**
 * The control: the same attacks in a task with the sandbox off (the same supervisor, the same probe agent) all succeed
 * and change every target, so each refusal above is the sandbox's. Two cannot be shown here: a terminal (the
 * supervisor gives none to any agent) and, unless the tests run as root, the capabilities; the next describe does.
 */
describe('reliability: the control: the same attacks with the sandbox off succeed', function () {
  this.timeout(90_000);

  it('every attack of the list succeeds unconfined, and the host sees each target changed', async () => {
    const scene = await plantScene('off');
    const initial = snapshot(scene);
    const rootOnly = ['hold a capability', 'kernel settings', 'cgroup'];
    const shown = attacks(scene).filter(({ probe: [label] }) => label !== 'terminal injection' && (AS_ROOT || !rootOnly.includes(label)));
    const { id } = await startFixture(scene.root, {}, { ...probeAgent(shown.map((a) => a.probe)), sandbox: { mode: 'off' } }, { HOME: scene.home });
    // Unconfined, the attacks forge the task's own state.json and a `finished` event: wait on the probes' results,
    // then on the supervisor's result.json, never on what the agent could fake.
    const worktree = worktreePath(scene.root, id);
    const last = shown.at(-1)!.probe[0];
    await waitFor('the probes to run', () => existsSync(path.join(worktree, 'probe-results.txt')) && probeResults(worktree).has(last), 60_000);
    await waitFor('the supervisor to finish', () => existsSync(taskPaths(scene.root, id).result), 30_000);
    const results = probeResults(worktree);
    const errors = probeErrors(worktree);
    for (const { probe: [label] } of shown) assert.equal(results.get(label), 'ok', `${label}: ${results.get(label)} ${errors.get(label) ?? ''}`);
    const after = snapshot(scene);
    for (const key of Object.keys(initial)) assert.notEqual(after[key], initial[key], `${key} unchanged: the attack did nothing`);
  });
});

/**
 * The control of the probes only bubblewrap itself can show: run with the product's own arguments (bwrapArgs) they
 * are refused; with the defence taken out of those arguments, the same probes succeed.
 */
(process.platform === 'linux' ? describe : describe.skip)('reliability: the control: bubblewrap without the defence lets them through', function () {
  this.timeout(30_000);
  let scratch: string;
  let guarded: string;
  before(async function () {
    await needs(this, 'bubblewrap');
    scratch = mkdtempSync(path.join(tmpdir(), 'caesar-bwrap-control-'));
    guarded = path.join(scratch, 'guarded');
    mkdirSync(guarded);
    writeFileSync(path.join(guarded, 'file'), 'mine\n');
  });

  /** What `command` printed in bwrap with the product's arguments, less the `removed` ones, under a terminal (script). */
  function inBwrap(command: string, removed: string[][]): string {
    const mounts: Mount[] = [{ kind: 'ro', path: '/' }, { kind: 'dev', path: '/dev' }, { kind: 'proc', path: '/proc' }, { kind: 'tmpfs', path: '/tmp' }];
    // A writable folder with a read-only bind inside, as a task's checkout holds its guarded .caesar/.
    mounts.push({ kind: 'rw', path: scratch }, { kind: 'ro', path: guarded });
    let args = bwrapArgs(mounts, { cwd: '/', setEnv: {}, unsetEnv: [] });
    for (const flag of removed) args = withoutFlag(args, flag);
    const line = ['bwrap', ...args, '--', 'bash', '-c', command].map((a) => `'${a.replace(/'/g, "'\\''")}'`).join(' ');
    try {
      return execFileSync('script', ['-qec', line, '/dev/null'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    } catch (err) {
      return (err as { stdout: string }).stdout; // the probe's own failure: its output says which
    }
  }

  const umount = () => `umount ${guarded} && echo injected >> ${guarded}/file && echo DONE`;

  it('a terminal: --new-session refuses TIOCSTI; without it the agent pushes input into the terminal', () => {
    const probe = `${TIOCSTI} && echo DONE`;
    const refused = inBwrap(probe, []);
    assert.match(refused, /No such device or address/, refused);
    assert.doesNotMatch(refused, /DONE/, refused);
    const allowed = inBwrap(probe, [['--new-session']]);
    assert.match(allowed, /DONE/, allowed);
  });

  it('run as root: the capabilities dropped refuse umount and /proc/sys; kept, both go through', async function () {
    await needs(this, 'root'); // bubblewrap gives an ordinary user no capabilities to keep
    const probe = `grep CapEff /proc/self/status; ${umount()}`;
    const refused = inBwrap(probe, []);
    assert.match(refused, /CapEff:\s+0+\s/, refused);
    assert.match(refused, /must be superuser to unmount|Operation not permitted/, refused);
    assert.equal(readFileSync(path.join(guarded, 'file'), 'utf8'), 'mine\n');
    const defence = [['--cap-drop', 'ALL'], ['--uid', ROOT_AGENT_ID], ['--gid', ROOT_AGENT_ID]];
    const allowed = inBwrap(probe, defence);
    assert.match(allowed, /DONE/, allowed);
    assert.equal(readFileSync(path.join(guarded, 'file'), 'utf8'), 'mine\ninjected\n');
    const sysctl = 'cat /proc/sys/kernel/printk_ratelimit > /proc/sys/kernel/printk_ratelimit && echo DONE';
    assert.match(inBwrap(sysctl, []), /Read-only file system/);
    assert.match(inBwrap(sysctl, [...defence, ['--ro-bind', '/proc/sys', '/proc/sys']]), /DONE/);
  });
});

/** `args` without the first run of `flag` (a flag with its values), which must be there. */
function withoutFlag(args: string[], flag: string[]): string[] {
  const at = args.findIndex((_, i) => flag.every((part, j) => args[i + j] === part));
  if (at < 0) throw new Error(`the product's bwrap arguments no longer hold ${flag.join(' ')}`);
  return [...args.slice(0, at), ...args.slice(at + flag.length)];
}

import { strict as assert } from 'node:assert';
import { existsSync, readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import * as path from 'node:path';
import { delegate } from '../../../src/engine/launch/delegate';
import { requestCancel } from '../../../src/engine/store/requests';
import { taskPaths } from '../../../src/protocol';
import { buildCli, git, groupGone, makeRepo, pidAlive, startFixture, waitFor, waitForFinished } from '../runtime/helpers';
import { assertRefused, probeAgent, probeErrors, probeResults } from './helpers';
import { needs } from '../../support/needs';

/** Real tasks through the real supervisor, each with the bash probe agent, sandboxed (or not) as configured. */
(process.platform === 'linux' ? describe : describe.skip)('sandbox: tasks', function () {
  this.timeout(60_000);
  before(async function () {
    await needs(this, 'bubblewrap');
  });

  it('a read-only task cannot write its workspace: read-only is a fact, not a wish', async () => {
    const root = makeRepo();
    const { id } = await startFixture(root, {}, { ...probeAgent([['write', 'echo x > written.txt']]), mode: 'read-only', sandbox: { mode: 'required' } });
    const done = await waitForFinished(root, id);
    assert.deepEqual(done.state.sandbox, { confined: true });
    assert.ok(done.state.worktree);
    assert.equal(existsSync(path.join(done.state.worktree, 'written.txt')), false);
    assert.equal(existsSync(path.join(done.state.worktree, 'probe-results.txt')), false, 'not even its own results file');
    assert.equal(done.result.report.summary, 'Ran the probes.', 'its report still lands');
    // The control: the same read-only task with the sandbox off writes its workspace (detected afterwards only).
    const open = await startFixture(root, {}, { ...probeAgent([['write', 'echo x > written.txt']]), mode: 'read-only', sandbox: { mode: 'off' } });
    const unconfined = await waitForFinished(root, open.id);
    assert.equal(probeResults(unconfined.state.worktree!).get('write'), 'ok', 'the control: unconfined, the write did not happen either');
    assert.equal(existsSync(path.join(unconfined.state.worktree!, 'written.txt')), true);
  });

  it('a read-only task moved into a worktree: its findings say the sandbox refuses writes, not that they are only detected', async () => {
    const root = makeRepo();
    const { id } = await startFixture(root, {}, { ...probeAgent([['write', 'echo x > written.txt']]), mode: 'read-only', isolation: 'inplace', sandbox: { mode: 'required' } });
    const done = await waitForFinished(root, id);
    assert.deepEqual(done.state.sandbox, { confined: true });
    const degraded = done.result.report.findings.find((f) => f.title === 'Degraded isolation');
    assert.ok(degraded, JSON.stringify(done.result.report.findings));
    assert.match(degraded.detail, /the sandbox mounts it read-only too/);
    assert.doesNotMatch(degraded.detail, /detected afterwards, not prevented/);
  });

  it('an in-place write task writes the checkout but not its .git or .caesar', async () => {
    const root = makeRepo();
    const probes: Array<[string, string]> = [
      ['checkout', 'echo x > inplace.txt'],
      ['git config', `echo x >> ${root}/.git/config`],
      ['caesar', `echo x > ${root}/.caesar/planted`],
    ];
    const { id } = await startFixture(root, {}, { ...probeAgent(probes), isolation: 'inplace', allow_inplace_write: true, sandbox: { mode: 'required' } });
    const done = await waitForFinished(root, id);
    const results = probeResults(root);
    assert.equal(results.get('checkout'), 'ok');
    assertRefused(root, new Map([['git config', /Read-only file system/], ['caesar', /Read-only file system/]]));
    assert.equal(existsSync(path.join(root, '.caesar', 'planted')), false);
    assert.equal(done.state.status, 'succeeded');
    // The control: the same probes with the sandbox off write both.
    const open = await startFixture(root, {}, { ...probeAgent(probes), isolation: 'inplace', allow_inplace_write: true, sandbox: { mode: 'off' } });
    await waitForFinished(root, open.id);
    assert.deepEqual(['git config', 'caesar'].map((label) => probeResults(root).get(label)), ['ok', 'ok'], 'the control: unconfined, the writes did not happen either');
    assert.equal(existsSync(path.join(root, '.caesar', 'planted')), true);
  });

  it('a result.json and an applied.json the agent plants in its task folder never reach it, and the findings say so', async () => {
    const root = makeRepo();
    const forged = '{"protocol":"caesar.result/v1","forged":true}';
    const probes: Array<[string, string]> = [
      ['plant', `echo '${forged}' > "$(dirname "$CAESAR_TASK_FILE")/result.json"`],
      ['applied', `echo '{"forged":true}' > "$(dirname "$CAESAR_TASK_FILE")/applied.json"`],
    ];
    const { id } = await startFixture(root, {}, { ...probeAgent(probes), sandbox: { mode: 'required' } });
    const done = await waitForFinished(root, id);
    assert.notEqual(readFileSync(taskPaths(root, id).result, 'utf8').trim(), forged);
    assert.equal(existsSync(taskPaths(root, id).applied), false, 'a forged applied.json reached the task folder');
    const finding = done.result.report.findings.find((f) => f.title === 'Sandbox kept a write out of the task folder');
    assert.ok(finding && /result\.json/.test(finding.detail) && /applied\.json/.test(finding.detail), JSON.stringify(done.result.report.findings));
    assert.equal(existsSync(path.join(taskPaths(root, id).dir, 'sandbox-view')), false, 'the view is removed');
    // The control: unconfined, the forged applied.json stays in the task folder (the task then reads as applied).
    const open = await startFixture(root, {}, { ...probeAgent(probes), sandbox: { mode: 'off' } });
    await waitForFinished(root, open.id);
    assert.equal(existsSync(taskPaths(root, open.id).applied), true, 'the control: unconfined, the forged applied.json did not land either');
  });

  it('cancel ends the whole sandbox, a setsid process without its task id included', async () => {
    const root = makeRepo();
    const marker = `caesar-cancel-escapee-${process.pid}-${Date.now()}`;
    const probe: [string, string] = ['escape', `setsid env -u CAESAR_TASK_ID bash -c '(exec -a ${marker} sleep 300 &)' </dev/null >/dev/null 2>&1 & sleep 300`];
    const { id } = await startFixture(root, {}, { ...probeAgent([probe]), sandbox: { mode: 'required' } });
    const escapee = await waitFor('the escapee to run', () => hostPidOf(marker));
    const state = JSON.parse(readFileSync(taskPaths(root, id).state, 'utf8'));
    await requestCancel(root, id, 'test');
    const done = await waitForFinished(root, id);
    assert.equal(done.state.status, 'cancelled');
    await waitFor('the escapee to be gone', () => !pidAlive(escapee));
    assert.ok(groupGone(state.agent_pid));
  });

  it('the control: unconfined, the same setsid process without its task id outlives the cancel', async () => {
    const root = makeRepo();
    const marker = `caesar-cancel-control-${process.pid}-${Date.now()}`;
    const probe: [string, string] = ['escape', `setsid env -u CAESAR_TASK_ID bash -c '(exec -a ${marker} sleep 300 &)' </dev/null >/dev/null 2>&1 & sleep 300`];
    const { id } = await startFixture(root, {}, { ...probeAgent([probe]), sandbox: { mode: 'off' } });
    const escapee = await waitFor('the escapee to run', () => hostPidOf(marker));
    try {
      await requestCancel(root, id, 'test');
      assert.equal((await waitForFinished(root, id)).state.status, 'cancelled');
      assert.equal(pidAlive(escapee), true, 'the control: the escapee ended without the sandbox too');
    } finally {
      process.kill(escapee, 'SIGKILL');
    }
  });

  it('a machine without bubblewrap still runs the task, with a high finding naming the cause and the fix', async () => {
    const root = makeRepo();
    const { id } = await startFixture(root, {}, { ...probeAgent([['home', `echo x > ${root}/outside.txt`]]), sandbox: { mode: 'auto' } }, { CAESAR_BWRAP: '' });
    const done = await waitForFinished(root, id);
    assert.equal(done.state.status, 'succeeded');
    assert.equal(done.state.sandbox?.confined, false);
    const finding = done.result.report.findings.find((f) => f.title === 'Not sandboxed');
    assert.ok(finding, JSON.stringify(done.result.report.findings));
    assert.equal(finding.severity, 'high');
    // Read after its title ("Not sandboxed: …"): the reason as a sentence, never "Not sandboxed: not sandboxed: …".
    assert.match(finding.detail, /^Bubblewrap \(bwrap\) is not installed.*apt install bubblewrap/);
    assert.equal(probeResults(done.state.worktree!).get('home'), 'ok', 'unconfined indeed');
  });

  it('the built-in default is auto: a task that does not set the mode is confined', async () => {
    const root = makeRepo();
    const { id } = await startFixture(root, {}, probeAgent([]), { CAESAR_SANDBOX: '' });
    const done = await waitForFinished(root, id);
    assert.deepEqual(done.state.sandbox, { confined: true });
  });

  it('mode "required" on a machine without bubblewrap refuses to start the agent', async () => {
    const root = makeRepo();
    const { id } = await startFixture(root, {}, { ...probeAgent([['ran', `touch ${root}/ran`]]), sandbox: { mode: 'required' } }, { CAESAR_BWRAP: '' });
    const done = await waitForFinished(root, id);
    assert.equal(done.state.status, 'failed');
    assert.match(done.state.error ?? '', /mode = "required".*bubblewrap \(bwrap\) is not installed/);
    assert.equal(existsSync(path.join(root, 'ran')), false);
    assert.equal(done.events.some((e) => e.type === 'started'), false, 'the agent never started');
  });

  it('the demo agent works sandboxed: its edit lands in the worktree', async () => {
    const root = makeRepo();
    await buildCli();
    const { id } = await delegate(
      { root, workspace: root, agent: 'demo', objective: 'Write NOTES.md please', mode: 'write', isolation: 'worktree', network: true, timeout_ms: 30_000, sandbox: { mode: 'required' } },
      { env: { CAESAR_DEMO_DELAY_MS: '5' } },
    );
    const done = await waitForFinished(root, id);
    assert.equal(done.state.status, 'succeeded', `${done.state.error} ${readFileSync(taskPaths(root, id).rawLog, 'utf8')}`);
    assert.deepEqual(done.state.sandbox, { confined: true });
    assert.deepEqual(done.result.diff?.files.map((f) => [f.path, f.action]), [['NOTES.md', 'created']]);
  });

  it('[sandbox] read_write opens a path, hide closes one', async () => {
    const root = makeRepo();
    const shared = path.join(root, '..', `${path.basename(root)}-shared`);
    mkdirSync(shared);
    const secret = path.join(root, 'secret.txt');
    writeFileSync(secret, 'hunter2\n');
    git(root, 'add', 'secret.txt');
    git(root, 'commit', '-qm', 'secret');
    const probes: Array<[string, string]> = [['shared', `echo x > ${shared}/out.txt`], ['secret', `cat ${secret}`], ['secret shown', `grep -q hunter2 ${secret}`]];
    const { id } = await startFixture(root, {}, { ...probeAgent(probes), sandbox: { mode: 'required', read_write: [shared], hide: [secret] } });
    const done = await waitForFinished(root, id);
    const results = probeResults(done.state.worktree!);
    assert.equal(results.get('shared'), 'ok');
    assert.equal(readFileSync(path.join(shared, 'out.txt'), 'utf8'), 'x\n');
    assert.equal(results.get('secret'), 'ok', '/dev/null reads empty');
    assert.deepEqual([results.get('secret shown'), probeErrors(done.state.worktree!).get('secret shown')], ['refused', 'exit 1: '], 'the secret was shown');
    assert.equal(readFileSync(secret, 'utf8'), 'hunter2\n');
    // The control: the same sandbox without read_write and hide refuses the write (the folder, under the host's /tmp,
    // is not even there in the private /tmp) and shows the secret.
    const plain = await startFixture(root, {}, { ...probeAgent(probes), sandbox: { mode: 'required' } });
    const closed = await waitForFinished(root, plain.id);
    assertRefused(closed.state.worktree!, new Map([['shared', /out\.txt: (No such file or directory|Read-only file system)/]]));
    assert.equal(probeResults(closed.state.worktree!).get('secret shown'), 'ok', 'the control: the secret was not readable without hide either');
  });
});

/** The host pid of the process whose argv[0] is `marker` (the escapee's pid inside its namespace means nothing here). */
function hostPidOf(marker: string): number | undefined {
  for (const entry of require('node:fs').readdirSync('/proc') as string[]) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, 'utf8').startsWith(`${marker}\0`)) return Number(entry);
    } catch {
      /* gone */
    }
  }
  return undefined;
}

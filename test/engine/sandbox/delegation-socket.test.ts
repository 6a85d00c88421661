import { strict as assert } from 'node:assert';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { TaskStore } from '../../../src/engine/store/store';
import { tasksDir } from '../../../src/protocol';
import { REPO_ROOT, makeRepo, startFixture, waitForFinished } from '../runtime/helpers';
import { probeAgent } from './helpers';
import { needs } from '../../support/needs';

/*
 * Delegation from inside the sandbox, through the task's supervisor (src/engine/tasks/delegation-server.ts): a real
 * sandboxed task whose bash agent runs `caesar run` (the CLI bundle) or sends raw lines to the socket, a real child
 * task started on the host by the supervisor.
 */

const REQUEST = path.join(REPO_ROOT, 'test/fixtures/delegation-request.mjs');

/** A HOME whose global layer holds `config` (the user's own layer: the only one that may loosen the policy). */
function homeWith(config: string): string {
  const home = mkdtempSync(path.join(tmpdir(), 'caesar-deleg-home-'));
  mkdirSync(path.join(home, '.config', 'caesar'), { recursive: true });
  writeFileSync(path.join(home, '.config', 'caesar', 'config.toml'), config);
  return home;
}

/** The bash probe agent, also configured by id in the user's layer (so a request may name it: recursion). */
const PROBE_AGENT = `[[agent]]\nid = "probe"\nbin = "/bin/bash"\nargs = [${JSON.stringify(path.join(REPO_ROOT, 'test/fixtures/probe-agent.sh'))}, "{{prompt}}"]\n`;

function sendRaw(out: string, line: string): string {
  return `node ${REQUEST} ${out} '${line.replace(/'/g, `'\\''`)}'`;
}

function reply(worktree: string, name: string): { ok: boolean; code?: string; error?: string; value?: unknown } {
  return JSON.parse(readFileSync(path.join(worktree, name), 'utf8'));
}

function taskIds(root: string): string[] {
  return existsSync(tasksDir(root)) ? readdirSync(tasksDir(root)).filter((n) => !n.startsWith('.')) : [];
}

(process.platform === 'linux' ? describe : describe.skip)('sandbox: delegation through the supervisor', function () {
  this.timeout(120_000);
  before(async function () {
    await needs(this, 'bubblewrap');
  });

  it('`caesar run` inside a sandboxed task starts a real sub-task on the host, follows it to the end and prints it', async () => {
    const root = makeRepo();
    const home = homeWith('[policy]\nmax_depth = 2\n');
    const run = `node "$CAESAR_CLI_JS" run --agent demo --json "Write NOTES.md please" > inner.json 2> inner.err; echo $? > inner.code`;
    // Another process inside (not the one that delegated) reads the child's log through the same supervisor.
    const logs = `node "$CAESAR_CLI_JS" logs --root ${root} "$(node -p 'require("./inner.json").task_id')" > logs.out 2> logs.err`;
    const { id } = await startFixture(root, {}, { ...probeAgent([['run', run], ['logs', logs]]), depth: 1, sandbox: { mode: 'required' } }, { HOME: home, CAESAR_DEMO_DELAY_MS: '5' });
    const parent = await waitForFinished(root, id, 90_000);
    const worktree = parent.state.worktree!;
    const inner = (name: string) => readFileSync(path.join(worktree, name), 'utf8');
    assert.deepEqual(parent.state.sandbox, { confined: true });
    assert.equal(inner('inner.code').trim(), '0', `caesar run inside failed: ${inner('inner.err')} ${inner('inner.json')}`);
    const outcome = JSON.parse(inner('inner.json')) as { task_id: string; status: string; diff: { files: { path: string }[] } };
    assert.equal(outcome.status, 'succeeded', inner('inner.err'));
    assert.deepEqual(outcome.diff.files.map((f) => f.path), ['NOTES.md'], 'what the CLI inside printed is the child\'s verified result');
    assert.match(inner('logs.out'), /finished/, `caesar logs inside: ${inner('logs.err')}`);
    assert.doesNotMatch(inner('logs.err'), /unverified|not Caesar/i);

    // The child, as the host sees it: its own supervisor's sealed records, its parent recorded, confined as well.
    const child = await new TaskStore(root).summary(outcome.task_id);
    assert.ok(child, `no child task ${outcome.task_id} under ${root}`);
    assert.equal(child.observed, 'succeeded');
    assert.deepEqual(child.unverified, []);
    assert.equal(child.state.parent_task_id, id);
    assert.equal(child.state.depth, parent.state.depth + 1);
    assert.equal(child.state.agent, 'demo');
    assert.deepEqual(child.state.sandbox, { confined: true }, 'a sub-task of a sandboxed task is sandboxed');
    assert.ok(child.state.worktree && child.state.worktree !== worktree, 'it works in a worktree of its own');
    assert.equal(child.state.workspace, root, "its workspace is the parent's, not the folder the agent ran in");
    assert.deepEqual(taskIds(root).sort(), [id, outcome.task_id].sort());
  });

  it('hostile requests are refused with a clear reason and create nothing', async () => {
    const root = makeRepo();
    const other = makeRepo();
    const home = homeWith(`[policy]\nmax_depth = 2\nallow_recursion = false\n\n${PROBE_AGENT}`);
    const delegateLine = (extra: Record<string, unknown>, request: Record<string, unknown> = {}) =>
      JSON.stringify({ op: 'delegate', root, workspace: root, request: { objective: 'x', agent: 'demo', ...request }, ...extra });
    const probes: Array<[string, string]> = [
      ['workspace', sendRaw('workspace.json', delegateLine({ workspace: '/etc' }))],
      ['repository', sendRaw('repository.json', delegateLine({ root: other, workspace: other }))],
      ['recursion', sendRaw('recursion.json', delegateLine({}, { agent: 'probe' }))],
      ['depth field', sendRaw('depth.json', delegateLine({}, { depth: 0 }))],
      ['malformed', sendRaw('malformed.json', '{"op":"delegate", not json')],
      ['unknown op', sendRaw('op.json', JSON.stringify({ op: 'write', path: '/etc/passwd' }))],
      ['oversized', `node ${REQUEST} oversized.json --oversized ${5 * 1024 * 1024}`],
      ['cancel', sendRaw('cancel.json', JSON.stringify({ op: 'cancel', task_id: 'not-my-child', by: 'cli' }))],
      ['cli', `node "$CAESAR_CLI_JS" run --agent demo --root "$HOME" "x" > cli.out 2> cli.err; echo $? > cli.code`],
      ['no socket', `env -u CAESAR_DELEGATION_SOCKET node "$CAESAR_CLI_JS" run --agent demo "x" > nosocket.out 2> nosocket.err; echo $? > nosocket.code`],
    ];
    const { id } = await startFixture(root, {}, { ...probeAgent(probes), depth: 1, sandbox: { mode: 'required' } }, { HOME: home });
    const parent = await waitForFinished(root, id, 90_000);
    const worktree = parent.state.worktree!;
    const refused = (name: string, code: string, message: RegExp) => {
      const answer = reply(worktree, name);
      assert.equal(answer.ok, false, `${name}: ${JSON.stringify(answer)}`);
      assert.equal(answer.code, code, `${name}: ${JSON.stringify(answer)}`);
      assert.match(answer.error ?? '', message, name);
    };
    refused('workspace.json', 'usage', /workspace "\/etc" is outside this task's workspace/);
    refused('repository.json', 'usage', /only within its own repository .*the request named/);
    refused('recursion.json', 'recursion', /would delegate to itself .*allow_recursion = false/);
    refused('depth.json', 'malformed', /malformed request/);
    refused('malformed.json', 'malformed', /not JSON/);
    refused('op.json', 'malformed', /malformed request/);
    refused('oversized.json', 'too-large', /over \d+ bytes/);
    refused('cancel.json', 'request:unknown_task', /not started by this task/);
    assert.equal(readFileSync(path.join(worktree, 'cli.code'), 'utf8').trim(), '2', 'the CLI inside exits as for any refused delegation');
    assert.match(readFileSync(path.join(worktree, 'cli.err'), 'utf8'), /only within its own repository/);
    assert.equal(readFileSync(path.join(worktree, 'nosocket.code'), 'utf8').trim(), '2');
    assert.match(readFileSync(path.join(worktree, 'nosocket.err'), 'utf8'), /inside a sandboxed task, .*without \$CAESAR_DELEGATION_SOCKET/);
    assert.deepEqual(taskIds(root), [id], 'no task was created');
    assert.deepEqual(taskIds(other), [], 'nothing in the other repository either');
    assert.deepEqual(taskIds(home), [], 'nor in the folder the CLI named');
  });

  it("a task whose network is cut cannot open it through a sub-task: network on and checks refused, the child's cut", async () => {
    const root = makeRepo();
    const home = homeWith('[policy]\nmax_depth = 2\n');
    const run = (name: string, args: string) => `node "$CAESAR_CLI_JS" run --agent demo ${args} "Write NOTES.md please" > ${name}.out 2> ${name}.err; echo $? > ${name}.code`;
    const probes: Array<[string, string]> = [
      ['on', run('on', '--network on')],
      ['check', run('check', "--check 'curl http://example.com'")],
      ['cut', run('cut', '--json')],
    ];
    const { id } = await startFixture(root, {}, { ...probeAgent(probes), depth: 1, network: false, network_cut: true, sandbox: { mode: 'required' } }, { HOME: home, CAESAR_DEMO_DELAY_MS: '5' });
    const parent = await waitForFinished(root, id, 90_000);
    const read = (name: string) => readFileSync(path.join(parent.state.worktree!, name), 'utf8');
    assert.equal(parent.state.network, false, 'the parent ran with its network cut');
    assert.equal(read('on.code').trim(), '2', read('on.err'));
    assert.match(read('on.err'), /network is cut, so a sub-task's network cannot be on/);
    assert.equal(read('check.code').trim(), '2', read('check.err'));
    assert.match(read('check.err'), /a check runs on the host's network/);
    assert.equal(read('cut.code').trim(), '0', read('cut.err'));
    const child = await new TaskStore(root).summary((JSON.parse(read('cut.out')) as { task_id: string }).task_id);
    assert.equal(child?.state.network, false, 'the child ran with its network cut as well');
    assert.deepEqual(taskIds(root).sort(), [id, child!.id].sort(), 'the refused ones created nothing');
  });

  it('a delegation deeper than max_depth is refused, from the depth the supervisor knows', async () => {
    const root = makeRepo();
    const home = homeWith('[policy]\nmax_depth = 1\n');
    // The agent lies about its depth in its own environment: the supervisor goes by the parent's launch.
    const probes: Array<[string, string]> = [['depth', `CAESAR_DEPTH=0 node "$CAESAR_CLI_JS" run --agent demo "x" > depth.out 2> depth.err; echo $? > depth.code`]];
    const { id } = await startFixture(root, {}, { ...probeAgent(probes), depth: 1, sandbox: { mode: 'required' } }, { HOME: home });
    const parent = await waitForFinished(root, id, 90_000);
    const read = (name: string) => readFileSync(path.join(parent.state.worktree!, name), 'utf8');
    assert.equal(read('depth.code').trim(), '2', read('depth.err'));
    assert.match(read('depth.err'), /would have depth 2 and max_depth is 1/);
    assert.deepEqual(taskIds(root), [id]);
  });
});

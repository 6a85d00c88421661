import { strict as assert } from 'node:assert';
import { spawn } from 'node:child_process';
import { TaskStore, type TaskSummary } from '../../../src/engine/store/store';
import { taskLifecycle } from '../../../src/common/lifecycle';
import { actionHints, cliAdvice, mcpAdvice, nextActions } from '../../../src/common/next-actions';
import { buildCli, makeRepo } from '../../engine/runtime/helpers';
import { call, serve, structured, textOf, type Served } from '../../mcp/orchestrator-helpers';

// The terminal and an MCP client advise the same next steps as the editor offers, because all three read
// src/common/next-actions.ts: real tasks of the demo agent, the real CLI (dist bundle) and the real MCP server.

interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

function cli(cwd: string, args: string[]): Promise<CliRun> {
  const child = spawn(process.execPath, [process.env.CAESAR_CLI_JS!, ...args], {
    cwd,
    env: { ...process.env, CAESAR_KILL_GRACE_MS: '500', CAESAR_DEMO_DELAY_MS: '5', NO_COLOR: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
}

const actionsOf = (summary: TaskSummary) => nextActions(taskLifecycle(summary));

describe('next-step advice: the CLI and the MCP tools say what the one lifecycle allows', function () {
  this.timeout(120_000);
  let repo: string;
  let served: Served | undefined;

  before(async () => {
    await buildCli();
    repo = makeRepo();
  });
  after(async () => served?.close());

  it('names the same actions in `caesar ps`, `caesar run` and caesar_status, and none of them offers Apply after Apply', async () => {
    const run = await cli(repo, ['run', '--agent', 'demo', '--isolation', 'worktree', 'Write ADVICE.md']);
    assert.equal(run.code, 0, run.stderr);
    const id = /Task (t_[0-9a-f]+):/.exec(run.stdout)![1]!;
    const store = new TaskStore(repo);
    const before = (await store.summary(id))!;
    assert.equal(taskLifecycle(before).phase, 'review');

    // The terminal: run's last line and ps's line under the table are the module's words for this task.
    const advice = cliAdvice(actionsOf(before), id);
    assert.equal(advice, `next: caesar diff ${id}  ·  caesar apply ${id}  ·  caesar discard ${id}`);
    assert.ok(run.stdout.trimEnd().endsWith(advice), run.stdout);
    const ps = await cli(repo, ['ps']);
    assert.ok(ps.stdout.includes(`changes to review — ${advice}`), ps.stdout);

    // The MCP server: caesar_status gives the same list, each action with its tool, and says it in its text.
    served = await serve(repo);
    const status = await call(served.client, 'caesar_status', { task_id: id });
    const hints = actionHints(actionsOf(before), 'mcp', id);
    assert.deepEqual(structured(status).next_actions, hints);
    assert.deepEqual(hints.map((h) => h.how), ['caesar_diff', 'caesar_apply', 'caesar_land']);
    assert.ok(textOf(status).endsWith(mcpAdvice(hints)), textOf(status));
    // Same words on both: each action both name has the label the editor's menus and the timeline show.
    for (const h of hints) assert.equal(h.label, actionsOf(before).find((a) => a.id === h.id)!.label);

    // Apply from the terminal: neither surface offers it again.
    const apply = await cli(repo, ['apply', id]);
    assert.equal(apply.code, 0, apply.stderr);
    assert.match(apply.stdout, new RegExp(`next: caesar discard ${id}`));
    assert.doesNotMatch(apply.stdout, /next:.*caesar apply/);
    const afterPs = await cli(repo, ['ps']);
    assert.ok(!afterPs.stdout.includes(`caesar apply ${id}`), afterPs.stdout);
    const afterStatus = await call(served.client, 'caesar_status', { task_id: id });
    const after = structured(afterStatus).next_actions as { how: string }[];
    assert.ok(!after.some((h) => h.how === 'caesar_apply' || h.how === 'caesar_land'), JSON.stringify(after));
    assert.doesNotMatch(textOf(afterStatus), /caesar_apply|caesar_land/);
  });
});

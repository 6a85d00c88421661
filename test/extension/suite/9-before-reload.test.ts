import * as assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { caesar, rowsOf, workspaceDir } from './helpers';

// Runs last before the window reload (index.ts reloads after this file); reattach.test.ts checks the other side.
describe('before reload', () => {
  it('starts a long task and opens its timeline', async function () {
    const stateDir = process.env.CAESAR_TEST_STATE_DIR;
    const bin = process.env.CAESAR_TEST_BIN_DIR;
    if (!stateDir || !bin) this.skip(); // only the code-server run reloads the window (see index.ts)
    this.timeout(60_000);
    const api = await caesar();
    const objective = `Long task across a reload (${Date.now()})`;
    // Detached, like a task started from another terminal: it must outlive this window's extension host.
    const child = spawn(path.join(bin!, 'caesar'), ['run', '--agent', 'fixture', '--isolation', 'worktree', objective], {
      cwd: workspaceDir(), detached: true, stdio: 'ignore', env: { ...process.env, PATH: `${bin}:${process.env.PATH}`, FIXTURE_GATE: path.join(stateDir!, 'reattach.gate') },
    });
    child.unref();
    const tree = await api.waitForTree(
      (t) => t.some((x) => x.label === objective && rowsOf(x).some((c) => c.label === 'slow_step' && c.icon === 'loading~spin')),
      30_000,
    );
    const id = tree.find((x) => x.label === objective)!.id;
    await vscode.commands.executeCommand('caesar.openTimeline', id);
    const stats = await api.timeline.waitForStats(id, (s) => s.caughtUp && s.received > 5 && s.rendered > 0, 30_000);
    assert.ok(stats.rows > 0);
    writeFileSync(path.join(stateDir!, 'reattach.json'), JSON.stringify({ id, objective, eventsBefore: stats.received }));
  });
});

import * as assert from 'node:assert/strict';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { CaesarApi, TreeItemSnapshot } from '../../../src/extension/api';
import type { ContinuedTask } from '../../../src/engine/tasks';
import { EXTENSION_ID, caesar, runInTerminal, until, workspaceDir } from './helpers';

// Continue with Feedback on a real task: the fixture agent runs in a worktree from a terminal (`caesar run`), review
// comments are left on its result through the command the Comments widget calls, and the follow-up task is checked on
// disk: its worktree, its brief, the comments file.

const FAST = { FIXTURE_DELAY_MS: '20', FIXTURE_SLOW_MS: '20' };
const byObjective = (tree: TreeItemSnapshot[], objective: string) => tree.find((t) => t.label === objective);

async function fixtureTask(api: CaesarApi, name: string, files: Record<string, string>): Promise<string> {
  const objective = `Follow-up test ${name} (${Date.now()})`;
  const exited = runInTerminal(`caesar ${name}`, `caesar run --agent fixture --isolation worktree ${JSON.stringify(objective)}`, { ...FAST, FIXTURE_FILES: JSON.stringify(files) });
  const tree = await api.waitForTree((t) => byObjective(t, objective)?.icon === 'pass', 60_000);
  assert.equal(await exited, 0, 'caesar run exited 0');
  return byObjective(tree, objective)!.id;
}

function json(file: string): Record<string, unknown> {
  return JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
}

describe('Follow-up: review comments and Continue with Feedback', () => {
  let api: CaesarApi;
  before(async () => {
    api = await caesar();
  });
  after(() => {
    for (const rel of ['followup', 'fixture-notes.md']) rmSync(path.join(workspaceDir(), rel), { recursive: true, force: true });
  });

  it('contributes its commands, each registered, and the walkthrough', async () => {
    const pkg = vscode.extensions.getExtension(EXTENSION_ID)!.packageJSON as { contributes: { commands: { command: string }[]; walkthroughs: { id: string; steps: { id: string; description: string }[] }[] } };
    const contributed = pkg.contributes.commands.map((c) => c.command);
    const registered = new Set(await vscode.commands.getCommands(true));
    for (const id of ['caesar.continueWithFeedback', 'caesar.review.addComment', 'caesar.review.deleteComment', 'caesar.compareTasks', 'caesar.compareFile', 'caesar.openWalkthrough']) {
      assert.ok(contributed.includes(id), `${id} is contributed in package.json`);
      assert.ok(registered.has(id), `${id} is registered`);
    }
    const walkthrough = pkg.contributes.walkthroughs.find((w) => w.id === 'caesar.getStarted')!;
    assert.deepEqual(walkthrough.steps.map((s) => s.id), ['delegate', 'watch', 'answer', 'review', 'apply']);
    // Each step's button runs a real, registered command.
    for (const step of walkthrough.steps) {
      const commands = [...step.description.matchAll(/\(command:([\w.]+)/g)].map((m) => m[1]!);
      assert.ok(commands.length > 0, `step ${step.id} has a button`);
      for (const command of commands) assert.ok(registered.has(command), `step ${step.id}: ${command} is registered`);
    }
  });

  it("stores review comments in the task folder, and Continue with Feedback starts a task on the same agent from the old task's files with the comments", async function () {
    this.timeout(180_000);
    const id = await fixtureTask(api, 'continue', { 'followup/one.txt': 'one\n' });
    const old = (await api.store.summary(id))!;
    const worktree = old.state.worktree!;
    const oneTxt = vscode.Uri.file(path.join(worktree, 'followup', 'one.txt'));
    // A comment stored by an earlier session (a window since reloaded): read back from the task folder, never lost.
    const commentsFile = path.join(old.state.root, '.caesar', 'tasks', id, 'review-comments.json');
    writeFileSync(commentsFile, JSON.stringify({ version: 1, comments: [{ id: 'earlier', file: 'followup/one.txt', line: 1, text: 'from an earlier session' }] }));
    await vscode.commands.executeCommand('caesar.review.addComment', oneTxt, 1, 'write "two" here');
    await vscode.commands.executeCommand('caesar.review.addComment', vscode.Uri.file(path.join(worktree, 'fixture-notes.md')), 3, 'drop this line');

    const stored = json(commentsFile) as { version: number; comments: { file: string; line: number; text: string; sent_in?: string }[] };
    assert.equal(stored.version, 1);
    assert.deepEqual(stored.comments.map((c) => [c.file, c.line, c.text]), [['followup/one.txt', 1, 'from an earlier session'], ['followup/one.txt', 1, 'write "two" here'], ['fixture-notes.md', 3, 'drop this line']]);

    // Without feedback given, the input box says which task it continues (its title and agent), not only the agent.
    const asking = vscode.commands.executeCommand('caesar.continueWithFeedback', id);
    const box = await api.pickers.waitFor(/^Caesar: Continue with Feedback — /, 10_000);
    assert.equal(box.title, `Caesar: Continue with Feedback — ${old.state.objective} (fixture)`);
    box.input.hide();
    assert.equal(await asking, undefined, 'dismissed: nothing started');

    const continued = (await vscode.commands.executeCommand('caesar.continueWithFeedback', id, 'Also write followup/two.txt')) as ContinuedTask;
    assert.ok(continued?.id && continued.id !== id, 'a new task was delegated');
    assert.equal(continued.launch.agent, 'fixture');
    const taskDir = path.join(old.state.root, '.caesar', 'tasks', continued.id);
    const launch = json(path.join(taskDir, 'launch.json'));
    assert.equal(launch.parent_task_id, id);
    assert.match(String(launch.base_commit), /^[0-9a-f]{40}$/);
    assert.equal(launch.objective, 'Also write followup/two.txt');
    assert.match(String(launch.context), /- fixture-notes\.md:3: drop this line\n- followup\/one\.txt:1: from an earlier session\n- followup\/one\.txt:1: write "two" here/);

    const done = await until('the follow-up task to succeed', async () => {
      const s = await api.store.summary(continued.id);
      return s && s.observed !== 'pending' && s.observed !== 'running' ? s : undefined;
    }, 90_000);
    assert.equal(done.observed, 'succeeded', done.state.error);
    assert.equal(done.state.parent_task_id, id);
    assert.equal(done.state.base_ref, old.state.base_ref, 'diffed against the first base: its result holds both tasks’ work');
    assert.equal(readFileSync(path.join(done.state.worktree!, 'followup', 'one.txt'), 'utf8'), 'one\n', "the follow-up's worktree started with the old task's files");
    assert.ok(done.result?.diff?.files.some((f) => f.path === 'followup/one.txt'), "the old task's file is part of the follow-up's diff");

    const after = json(commentsFile) as typeof stored;
    assert.deepEqual(after.comments.map((c) => c.sent_in), [continued.id, continued.id, continued.id], 'the comments are marked as sent, kept as history');
    assert.match(readFileSync(path.join(workspaceDir(), 'README.md'), 'utf8'), /^# Test workspace/, 'the workspace was not touched');
  });
});

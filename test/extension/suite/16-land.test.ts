import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { CaesarApi, TreeItemSnapshot } from '../../../src/extension/api';
import type { LandShown } from '../../../src/extension/land';
import { EXTENSION_ID, caesar, runInTerminal, until, workspaceDir } from './helpers';

// Land from the editor on real tasks: the fixture agent runs three tasks in worktrees from a terminal (`caesar run`),
// the user commits on HEAD meanwhile, then "Land Selected Tasks" lands the two compatible ones in the order chosen
// and stops at the third, whose conflict goes back to the agent as a follow-up from the new HEAD.

const FAST = { FIXTURE_DELAY_MS: '20', FIXTURE_SLOW_MS: '20' };
const byObjective = (tree: TreeItemSnapshot[], objective: string) => tree.find((t) => t.label === objective);

async function fixtureTask(api: CaesarApi, name: string, files: Record<string, string>, check = ''): Promise<string> {
  const objective = `Land test ${name} (${Date.now()})`;
  const checkFlag = check ? ` --check ${JSON.stringify(check)}` : '';
  const exited = runInTerminal(`caesar ${name}`, `caesar run --agent fixture --isolation worktree${checkFlag} ${JSON.stringify(objective)}`, { ...FAST, FIXTURE_FILES: JSON.stringify(files) });
  // A check that fails in the task itself shows as a warning ("succeeded · checks failed") and fails `caesar run`.
  const tree = await api.waitForTree((t) => (check ? 'warning' : 'pass') === byObjective(t, objective)?.icon, 60_000);
  assert.equal(await exited, check ? 1 : 0, `caesar run (${name}) exit code`);
  return byObjective(tree, objective)!.id;
}

function git(...args: string[]): string {
  const r = spawnSync('git', args, { cwd: workspaceDir(), encoding: 'utf8' });
  assert.equal(r.status, 0, `git ${args.join(' ')}: ${r.stderr}`);
  return r.stdout.trim();
}

const file = (rel: string) => path.join(workspaceDir(), ...rel.split('/'));

describe('Land: tasks landed in order onto a moved HEAD', () => {
  let api: CaesarApi;
  let headBefore: string;
  before(async () => {
    api = await caesar();
    rmSync(file('fixture-notes.md'), { force: true });
    headBefore = git('rev-parse', 'HEAD');
  });
  after(() => {
    // The user's commit and what landed go: the next suites find the workspace as it was.
    rmSync(file('land'), { recursive: true, force: true });
    rmSync(file('fixture-notes.md'), { force: true });
    git('reset', '-q', '--keep', headBefore);
  });

  it('contributes Land and Land Selected Tasks, each registered', async () => {
    const contributed = (vscode.extensions.getExtension(EXTENSION_ID)!.packageJSON as { contributes: { commands: { command: string }[] } }).contributes.commands.map((c) => c.command);
    const registered = new Set(await vscode.commands.getCommands(true));
    for (const id of ['caesar.land', 'caesar.landSelected']) {
      assert.ok(contributed.includes(id), `${id} is contributed`);
      assert.ok(registered.has(id), `${id} is registered`);
    }
  });

  it('lands two compatible tasks (checks re-run on the combined result), stops at the conflicting third, sends its conflict back', async function () {
    this.timeout(240_000);
    // Its check fails in the task (no land/user.txt there yet) and passes on the combined result.
    const first = await fixtureTask(api, 'first', { 'land/a.txt': 'first\n' }, 'test -f land/user.txt');
    const second = await fixtureTask(api, 'second', { 'land/b.txt': 'second\n' });
    const third = await fixtureTask(api, 'third', { 'land/a.txt': 'third\n' });
    mkdirSync(file('land'), { recursive: true });
    writeFileSync(file('land/user.txt'), 'the user moves the base\n');
    git('add', 'land/user.txt');
    git('commit', '-qm', 'land test: the user moves the base');

    const shown = (await vscode.commands.executeCommand('caesar.landSelected', [first, second, third], { onConflict: 'send' })) as LandShown;
    assert.deepEqual(shown.tasks.map((t) => [t.task_id, t.status]), [[first, 'landed'], [second, 'landed'], [third, 'conflict']]);
    // The first task's check could only pass with the user's commit under it: it ran on the combined result.
    assert.equal(shown.tasks[0]!.checks?.[0]?.exit_code, 0);
    assert.equal(readFileSync(file('land/a.txt'), 'utf8'), 'first\n');
    assert.equal(readFileSync(file('land/b.txt'), 'utf8'), 'second\n');
    assert.deepEqual(shown.tasks[2]!.conflicts?.map((c) => c.path), ['land/a.txt']);
    assert.equal(existsSync(path.join(api.root, '.caesar', 'tasks', third, 'applied.json')), false, 'nothing of the third was applied');

    // The follow-up is a new task of the same agent, from the new HEAD.
    const followUp = shown.follow_up_task!;
    assert.ok(followUp, 'the conflict went back to the agent');
    // Nested under the task it continues, as every follow-up is.
    await api.waitForTree((t) => /1 subtask/.test(t.find((x) => x.id === third)?.description ?? ''), 30_000);
    const stateFile = path.join(api.root, '.caesar', 'tasks', followUp, 'state.json');
    await until('the follow-up has finished', () => existsSync(stateFile) && /"status": "(succeeded|failed)"/.test(readFileSync(stateFile, 'utf8')), 60_000);
    const state = JSON.parse(readFileSync(stateFile, 'utf8')) as { base_ref: string; worktree: string };
    assert.equal(git('rev-parse', `${shown.tasks[2]!.follow_up!.base_commit}^1`), state.base_ref);
    assert.match(readFileSync(path.join(state.worktree, 'land', 'a.txt'), 'utf8'), /<<<<<<< [\s\S]*third[\s\S]*>>>>>>> /);
  });
});

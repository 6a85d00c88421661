import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { DelegateOutcome } from '../../../src/extension/delegate/delegateCommands';
import { caesar } from '../suite/helpers';

/*
 * Runs in a second code-server launched WITHOUT --disable-workspace-trust, on a .code-workspace of two folders
 * (test/extension/run.mjs: multi-a and multi-b, one finished task each), never trusted. Every git this extension host
 * runs is logged (CAESAR_TEST_GIT_LOG) by a wrapper put first on its PATH below; the built-in git extension is off.
 */

const gitRuns = (): string[] => {
  const log = process.env.CAESAR_TEST_GIT_LOG;
  return log && existsSync(log) ? readFileSync(log, 'utf8').split('\n').filter(Boolean) : [];
};

describe('untrusted multi-root workspace', () => {
  before(() => {
    // code-server rebuilds the extension host's PATH: the wrapper's folder comes in its own variable.
    const bin = process.env.CAESAR_TEST_GIT_BIN;
    if (bin) process.env.PATH = `${bin}${path.delimiter}${process.env.PATH ?? ''}`;
  });

  it('is not trusted, and lists both folders’ tasks grouped by folder', async () => {
    assert.equal(vscode.workspace.isTrusted, false, 'this run must not grant trust');
    const api = await caesar();
    assert.equal(api.roots.length, 2);
    const tree = await api.waitForTree((t) => t.length === 2 && t.every((f) => f.children.length === 1), 15_000);
    assert.deepEqual(tree.map((f) => f.label), ['multi-a', 'multi-b']);
    assert.deepEqual(tree.map((f) => f.contextValue), ['folder', 'folder']);
    assert.deepEqual(tree.map((f) => f.children[0]!.label), ['Edit the README of a', 'Edit the README of b']);
    assert.match(tree[0]!.description, /^1 task$/);
  });

  it('opening a changed file runs no git: the base side says review is unavailable here', async () => {
    const api = await caesar();
    const before = gitRuns().length;
    const taskId = 'multi-a-task-1';
    await vscode.commands.executeCommand('caesar.openChange', taskId, 'README.md');
    assert.equal(vscode.window.tabGroups.activeTabGroup.activeTab?.input instanceof vscode.TabInputTextDiff, false, 'no diff was opened');
    const head = readFileSync(path.join(api.roots[0]!, '.git', 'refs', 'heads', 'main'), 'utf8').trim();
    const base = vscode.Uri.from({ scheme: 'caesar-base', path: '/README.md', query: JSON.stringify({ task: taskId, commit: head, root: api.roots[0] }) });
    const doc = await vscode.workspace.openTextDocument(base);
    assert.match(doc.getText(), /not trusted/);
    assert.doesNotMatch(doc.getText(), /# Test workspace/);
    assert.deepEqual(gitRuns().slice(before), [], 'git ran in an untrusted workspace');
  });

  it('delegate refuses with the trust message, and starts nothing', async () => {
    const api = await caesar();
    const before = gitRuns().length;
    const count = (await api.treeSnapshot()).flatMap((f) => f.children).length;
    const outcome = (await vscode.commands.executeCommand('caesar.delegate', { objective: 'Say hello', agent: 'fixture' })) as DelegateOutcome;
    assert.equal(outcome.tasks.length, 0);
    assert.match(outcome.refused[0]!.message, /untrusted workspace/);
    assert.equal((await api.treeSnapshot()).flatMap((f) => f.children).length, count);
    assert.deepEqual(gitRuns().slice(before), [], 'git ran in an untrusted workspace');
  });

  it('with several folders, delegate asks which folder first', async () => {
    const api = await caesar();
    // The folder question comes before anything runs; the probe lets the flow get that far, then it is cancelled.
    const previous = api.delegation.setTrustProbe!(() => true);
    try {
      const pending = vscode.commands.executeCommand('caesar.delegate');
      const step = await api.delegation.waitForStep('folder', 15_000);
      const items = (step.input as vscode.QuickPick<vscode.QuickPickItem>).items.map((i) => i.label);
      assert.deepEqual(items, ['multi-a', 'multi-b']);
      step.input.hide();
      assert.equal(await pending, undefined);
    } finally {
      api.delegation.setTrustProbe!(previous);
    }
  });

  it('(control) a git run from this extension host is logged, so the empty logs above mean something', () => {
    const before = gitRuns().length;
    assert.equal(spawnSync('git', ['--version'], { env: process.env }).status, 0);
    assert.equal(gitRuns().length, before + 1, `the git wrapper is not first on PATH (${process.env.PATH})`);
  });
});

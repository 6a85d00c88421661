import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';
import { EXTENSION_ID, caesar, record, workspaceDir } from './helpers';

describe('activation', () => {
  it('activates in the workspace and registers its commands and view', async () => {
    const api = await caesar();
    assert.equal(vscode.extensions.getExtension(EXTENSION_ID)?.isActive, true);
    assert.equal(api.root, workspaceDir());
    const commands = await vscode.commands.getCommands(true);
    for (const c of ['caesar.openTimeline', 'caesar.delegate', 'caesar.showLog', 'caesar.openChange', 'caesar.tasks.focus']) {
      assert.ok(commands.includes(c), `command ${c} is registered`);
    }
    // A figure for the editor benchmark (bench/), not a pass/fail line: timings vary with the machine's load.
    record('activationMs', { activate: api.activationMs, bundleEvaluation: api.bundleEvaluationMs, loadAndActivate: api.loadAndActivateMs });
  });
});

import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';
import { caesar, event, handWrittenTask, until } from './helpers';

/** The editor tabs that show a Caesar timeline (webview panels of the extension's view type). */
const timelineTabs = () =>
  vscode.window.tabGroups.all.flatMap((g) => g.tabs).filter((t) => t.input instanceof vscode.TabInputWebview && t.input.viewType.endsWith('caesar.timeline'));

/**
 * `npm start` turns on `caesar.showOnStartup` in its private profile, so a newcomer's window opens on the Caesar view
 * and the running demo task's timeline instead of a welcome page.
 */
describe('showOnStartup (what npm start opens)', () => {
  afterEach(async () => {
    await vscode.workspace.getConfiguration().update('caesar.showOnStartup', undefined, vscode.ConfigurationTarget.Global);
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
  });

  it('does nothing while the setting is off', async () => {
    const api = await caesar();
    const id = 'startup-off-running';
    handWrittenTask(api.root, id, { status: 'running', objective: 'Off', supervisor_pid: process.pid, started_at: new Date().toISOString() }, [
      event(id, 0, new Date(), { type: 'started', agent: 'fixture', command: 'fixture' }),
    ]);
    await api.waitForTree((t) => t.some((n) => n.id.endsWith(id)), 5_000);
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    await vscode.commands.executeCommand('workbench.view.explorer');
    await until('the Tasks view hidden behind the Explorer', () => !api.viewVisible(), 10_000);
    await until('no timeline open before', () => api.timeline.openTaskIds().length === 0, 10_000);
    await api.showOnStartup();
    // Ignoring the setting would have opened a panel by now (timelines.open runs before showOnStartup resolves) and
    // revealed the view (its command is awaited): ask the extension's panels, the editor's tabs, and the view.
    assert.deepEqual(api.timeline.openTaskIds(), [], 'no timeline opened');
    assert.deepEqual(timelineTabs(), [], 'no timeline tab in the editor');
    assert.equal(api.viewVisible(), false, 'the Tasks view was not revealed');
  });

  it('reveals the Tasks view and opens the newest running task\'s timeline when on', async () => {
    const api = await caesar();
    await vscode.commands.executeCommand('workbench.view.explorer');
    const id = 'startup-on-running';
    handWrittenTask(api.root, id, { status: 'running', objective: 'Show me first', supervisor_pid: process.pid, started_at: new Date().toISOString() }, [
      event(id, 0, new Date(), { type: 'started', agent: 'fixture', command: 'fixture' }),
    ]);
    await api.waitForTree((t) => t.some((n) => n.id.endsWith(id)), 5_000);
    await vscode.workspace.getConfiguration().update('caesar.showOnStartup', true, vscode.ConfigurationTarget.Global);
    await api.showOnStartup();
    const stats = await api.timeline.waitForStats(id, (s) => s.received >= 1, 15_000);
    assert.ok(stats.received >= 1);
    assert.deepEqual(api.timeline.openTaskIds(), [id]);
    await until('the timeline tab in the editor', () => timelineTabs().length === 1, 10_000);
    assert.ok(api.viewVisible(), 'the Tasks view is visible');
  });
});

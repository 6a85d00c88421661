import * as assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { caesar, event, find, handWrittenTask, record } from './helpers';

const XSS = '<img src=x onerror=alert(1)>';

describe('Timeline panel', () => {
  afterEach(async () => {
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
  });

  it('receives every event of a task, live, and shows agent text literally', async function () {
    // The bounds below only end a hung run: the first webview of a window loads slowly on a busy machine.
    this.timeout(120_000);
    const api = await caesar();
    const id = 'hand-timeline-1';
    const start = new Date(Date.now() - 5000);
    const task = handWrittenTask(api.root, id, {
      status: 'running', objective: 'Timeline task', started_at: start.toISOString(), supervisor_pid: process.pid,
    }, [
      event(id, 0, start, { type: 'started', agent: 'fixture', command: 'fx' }),
      event(id, 1, start, { type: 'message', text: `Agent says ${XSS}` }),
      event(id, 2, start, { type: 'tool_use', tool: 'read', input_summary: 'README.md', status: 'started', id: 'r1' }),
    ]);
    await api.waitForTree((t) => !!find(t, id), 5_000);
    await vscode.commands.executeCommand('caesar.openTimeline', id);
    let stats = await api.timeline.waitForStats(id, (s) => s.caughtUp && s.received === 3, 60_000);
    assert.equal(stats.lastSeq, 2);
    assert.ok(stats.recentLabels.includes(`Agent says ${XSS}`), JSON.stringify(stats.recentLabels));

    // Live: appended events reach the open panel; the tool start and end merge into one row.
    task.appendEvents([
      event(id, 3, new Date(), { type: 'tool_use', tool: 'read', input_summary: 'README.md', status: 'succeeded', id: 'r1' }),
      event(id, 4, new Date(), { type: 'progress', message: 'half', pct: 50 }),
    ]);
    stats = await api.timeline.waitForStats(id, (s) => s.received === 5, 30_000);
    assert.equal(stats.rows, 4, 'started, message, one tool row, progress');
    assert.deepEqual(stats.recentLabels, ['Started fixture', `Agent says ${XSS}`, 'read  README.md', 'half (50%)']);
    task.writeState({ ...(await api.store.summary(id))!.state, status: 'succeeded', ended_at: new Date().toISOString() });
  });

  it('search and the type filter show only the matching rows, each once, and the footer counts them', async function () {
    this.timeout(120_000);
    const api = await caesar();
    const id = 'hand-timeline-filter';
    const start = new Date(Date.now() - 60_000);
    const lines = [event(id, 0, start, { type: 'started', agent: 'fixture', command: 'fx' })];
    // 16 rows: the start, 9 messages (5 say Ciao), 4 tool calls, one file change, the end.
    for (let i = 0; i < 9; i++) lines.push(event(id, lines.length, start, { type: 'message', text: i < 5 ? `Ciao number ${i}` : `Hello number ${i}` }));
    for (let i = 0; i < 4; i++) {
      lines.push(event(id, lines.length, start, { type: 'tool_use', tool: 'read', input_summary: `file-${i}.ts`, status: 'started', id: `t${i}` }));
      lines.push(event(id, lines.length, start, { type: 'tool_use', tool: 'read', input_summary: `file-${i}.ts`, status: 'succeeded', id: `t${i}` }));
    }
    lines.push(event(id, lines.length, start, { type: 'file_changed', path: 'README.md', action: 'modified' }));
    lines.push(event(id, lines.length, start, { type: 'finished', status: 'success', summary: 'done' }));
    handWrittenTask(api.root, id, { status: 'succeeded', objective: 'Filter task', started_at: start.toISOString(), ended_at: new Date().toISOString() }, lines);
    await api.waitForTree((t) => !!find(t, id), 10_000);
    await vscode.commands.executeCommand('caesar.openTimeline', id);
    const all = await api.timeline.waitForStats(id, (s) => s.caughtUp && s.rows === 16 && s.shownLabels.length === 16, 60_000);
    assert.equal(all.footer, `${lines.length} events · 16 rows`);

    api.timeline.search(id, '', 'files');
    const files = await api.timeline.waitForStats(id, (s) => s.footer.includes('1 of 16 rows match') && s.recentLabels.length === 1, 30_000);
    assert.deepEqual(files.shownLabels, files.recentLabels, 'the page shows the one file row, and nothing else');
    assert.equal(files.shownLabels.length, 1);
    assert.match(files.shownLabels[0]!, /README\.md/);

    api.timeline.search(id, 'Ciao', 'all');
    const ciao = await api.timeline.waitForStats(id, (s) => s.footer.includes('5 of 16 rows match') && s.recentLabels.length === 5, 30_000);
    assert.deepEqual(ciao.shownLabels, ['Ciao number 0', 'Ciao number 1', 'Ciao number 2', 'Ciao number 3', 'Ciao number 4']);

    api.timeline.search(id, '', 'all');
    const back = await api.timeline.waitForStats(id, (s) => s.footer === `${lines.length} events · 16 rows` && s.shownLabels.length === 16, 30_000);
    assert.equal(new Set(back.shownLabels).size, 16, 'every row again, each once');
  });

  it('reuses an untouched timeline for the next task opened, as a preview editor is reused: one page, the new task only', async function () {
    this.timeout(120_000);
    const api = await caesar();
    const start = new Date(Date.now() - 60_000);
    const names = ['alpha', 'beta', 'gamma'];
    for (const name of names) {
      const id = `hand-preview-${name}`;
      handWrittenTask(api.root, id, { status: 'succeeded', objective: `Preview ${name}`, started_at: start.toISOString(), ended_at: new Date().toISOString() }, [
        event(id, 0, start, { type: 'started', agent: 'fixture', command: 'fx' }),
        event(id, 1, start, { type: 'message', text: `says ${name}` }),
        event(id, 2, start, { type: 'finished', status: 'success', summary: name }),
      ]);
    }
    await api.waitForTree((t) => names.every((n) => !!find(t, `hand-preview-${n}`)), 10_000);
    const shows = (name: string) => (s: { caughtUp: boolean; recentLabels: string[] }) =>
      s.caughtUp && s.recentLabels.includes(`says ${name}`) && names.every((other) => other === name || !s.recentLabels.includes(`says ${other}`));

    const firstOpened = Date.now();
    await vscode.commands.executeCommand('caesar.openTimeline', 'hand-preview-alpha');
    await api.timeline.waitForStats('hand-preview-alpha', shows('alpha'), 60_000);
    const newPanelMs = Date.now() - firstOpened;
    assert.equal(api.timeline.isPreview('hand-preview-alpha'), true);

    for (const name of ['beta', 'gamma', 'alpha']) {
      const id = `hand-preview-${name}`;
      const opened = Date.now();
      await vscode.commands.executeCommand('caesar.openTimeline', id);
      await api.timeline.waitForStats(id, shows(name), 30_000);
      const reusedMs = Date.now() - opened;
      assert.deepEqual(api.timeline.openTaskIds(), [id], 'the one preview panel now shows this task, and only it');
      record('timelinePreviewReuse', { task: name, newPanelMs, reusedMs, timing: api.timeline.timing(id) });
    }
    const tabs = vscode.window.tabGroups.all.flatMap((g) => g.tabs).filter((t) => t.input instanceof vscode.TabInputWebview);
    assert.equal(tabs.length, 1, `one timeline tab: ${tabs.map((t) => t.label).join(', ')}`);
    assert.equal(tabs[0]!.label, 'Timeline: Preview alpha');

    // Behind another editor the panel's page is gone: taken over there, it loads again for the new task when shown.
    const note = path.join(api.root, 'preview-note.txt');
    writeFileSync(note, 'an editor in front of the timeline\n');
    await vscode.window.showTextDocument(await vscode.workspace.openTextDocument(note), { preview: false });
    assert.equal(vscode.window.tabGroups.activeTabGroup.activeTab?.label, 'preview-note.txt', 'the timeline is behind it');
    await vscode.commands.executeCommand('caesar.openTimeline', 'hand-preview-beta');
    await api.timeline.waitForStats('hand-preview-beta', shows('beta'), 60_000);
    assert.deepEqual(api.timeline.openTaskIds(), ['hand-preview-beta']);
  });

  it('opens a 100k-event task and holds and renders only a window of its rows', async function () {
    this.timeout(120_000);
    const api = await caesar();
    const id = 'hand-100k';
    const count = 100_000;
    const base = Date.now() - count * 10;
    const lines: string[] = [];
    for (let seq = 0; seq < count - 1; seq++) {
      const at = new Date(base + seq * 10);
      const kind = seq % 4;
      if (kind === 0) lines.push(event(id, seq, at, { type: 'tool_use', tool: 'read', input_summary: `file-${seq}.ts`, status: 'started', id: `c${seq}` }));
      else if (kind === 1) lines.push(event(id, seq, at, { type: 'tool_use', tool: 'read', input_summary: `file-${seq - 1}.ts`, status: 'succeeded', id: `c${seq - 1}` }));
      else if (kind === 2) lines.push(event(id, seq, at, { type: 'message', text: `message number ${seq}: ${'lorem ipsum '.repeat(4)}` }));
      else lines.push(event(id, seq, at, { type: 'thinking', text: `thought ${seq}` }));
    }
    lines.push(event(id, count - 1, new Date(), { type: 'finished', status: 'success', summary: 'big' }));
    handWrittenTask(api.root, id, {
      status: 'succeeded', objective: 'A very long task', started_at: new Date(base).toISOString(), ended_at: new Date().toISOString(),
    }, lines);
    await api.waitForTree((t) => !!find(t, id), 10_000);

    const opened = Date.now();
    await vscode.commands.executeCommand('caesar.openTimeline', id);
    const first = await api.timeline.waitForStats(id, (s) => s.rendered > 0, 60_000);
    const firstRowsMs = Date.now() - opened;
    const stats = await api.timeline.waitForStats(id, (s) => s.caughtUp && s.received === count && s.rendered > 0, 60_000);
    const allMs = Date.now() - opened;
    record('timeline100k', { firstRowsMs, indexedAndShownMs: allMs, panelTiming: api.timeline.timing(id), rows: stats.rows, rendered: stats.rendered, firstRows: first.rows });
    assert.equal(stats.rows, count - count / 4, 'tool starts and ends share a row');
    assert.ok(stats.rendered > 0 && stats.rendered < 200, `only visible rows are in the DOM (rendered ${stats.rendered})`);
    // The rows stay in the host: the webview holds a window of them (the end, as it follows), not 75k.
    assert.ok(stats.recentLabels.length > 0 && stats.recentLabels.length <= 500, `the webview holds ${stats.recentLabels.length} rows`);
    assert.equal(stats.recentLabels.at(-1), 'Finished: success — big');
    assert.match(stats.recentLabels.at(-2) ?? '', new RegExp(`^message number ${count - 2}: `));
  });
});

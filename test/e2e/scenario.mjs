// The UI scenario: a person opens the Caesar view, watches a demo task run, opens its timeline, reads the report,
// moves with the keyboard and opens a diff; then delegates from the palette, answers the agent's question from its
// notification, reviews all the task's changes in the multi-file diff editor, applies them, and starts the Caesar MCP
// server from "MCP: List Servers". A screenshot is taken at each step (test-results/screenshots/).
// Called by test/extension/driver.mjs inside the loopback-only namespace, with code-server already running.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { narrowingUnderCi, refusalText } from '../support/ci-guard.mjs';
import { measureTimeline, runTimelineXssProof } from './timeline.mjs';

export const XSS = '<img src=x onerror=alert(1)>';

/**
 * CAESAR_UI_STEPS=timeline runs the timeline step alone (bench/timeline-editor.mjs). Never under CI (run.mjs refuses it
 * already): a scenario cut short must not report "passed" there. Any other value is a mistake, not "all steps".
 */
/**
 * Apply on a task whose file the user changed in the workspace too: the modal confirmation appears, says which file
 * and why; its Cancel button leaves the user's edit exactly as it was and applies nothing. README.md is then put back.
 */
async function confirmationCancelled(page, { workspace, finished, shot }) {
  const readme = path.join(workspace, 'README.md');
  const original = readFileSync(readme, 'utf8');
  const edited = original.replace('# Test workspace', '# Test workspace (edited by the user)');
  writeFileSync(readme, edited);
  await finished.hover();
  await finished.locator('.action-label[aria-label="Apply Changes"]').click();
  const modal = page.locator('.monaco-dialog-box');
  await modal.waitFor({ timeout: 30_000 }).catch(() => {
    throw new Error('Apply did not ask before writing over README.md, which the user changed in the workspace (no modal dialog in 30 s)');
  });
  const text = await modal.textContent();
  if (!/changed files that were also changed in your workspace since the task started\. Apply anyway\?/.test(text) || !/README\.md \(changed in the workspace\)/.test(text)) {
    throw new Error(`the apply confirmation does not say which file changed in the workspace: ${text}`);
  }
  if (!(await modal.locator('.monaco-button', { hasText: /^\s*Apply Anyway\s*$/ }).count())) throw new Error(`no "Apply Anyway" button: ${text}`);
  await shot('apply-confirmation');
  await modal.locator('.monaco-button', { hasText: /^\s*Cancel\s*$/ }).first().click();
  await modal.waitFor({ state: 'detached', timeout: 30_000 });
  // Nothing may be written after Cancel: the task row still offers Apply (not "applied"), README.md is the user's.
  await finished.hover();
  await finished.locator('.action-label[aria-label="Apply Changes"]').waitFor({ timeout: 30_000 });
  if (/applied/.test(await finished.textContent())) throw new Error('the task says applied after Cancel');
  if (readFileSync(readme, 'utf8') !== edited) throw new Error(`README.md changed after Cancel: ${readFileSync(readme, 'utf8')}`);
  writeFileSync(readme, original);
}

export function timelineStepAlone(env = process.env) {
  const refused = narrowingUnderCi(['CAESAR_UI_STEPS'], env);
  if (refused.length) throw new Error(refusalText(refused));
  if (!env.CAESAR_UI_STEPS) return false;
  if (env.CAESAR_UI_STEPS === 'timeline') return true;
  throw new Error(`CAESAR_UI_STEPS=${env.CAESAR_UI_STEPS}: the only step that runs alone is "timeline"`);
}

export async function runScenario(page, { url, workspace, screenshots, log, cli, env, userSettings }) {
  const timelineOnly = timelineStepAlone();
  rmSync(screenshots, { recursive: true, force: true });
  mkdirSync(screenshots, { recursive: true });
  let step = 0;
  const shot = async (name) => {
    step++;
    const file = path.join(screenshots, `${String(step).padStart(2, '0')}-${name}.png`);
    await page.screenshot({ path: file });
    log(`screenshot ${path.basename(file)}`);
  };
  const dialogs = [];
  page.on('dialog', (d) => {
    dialogs.push(d.message());
    void d.dismiss();
  });

  // "MCP: List Servers" (step 13) is hidden while the driver's `chat.disableAIFeatures` is on; turning it off in the
  // middle of the scenario is not enough, so it is off from the start.
  const settings = JSON.parse(readFileSync(userSettings, 'utf8'));
  writeFileSync(userSettings, JSON.stringify({ ...settings, 'chat.disableAIFeatures': false }));
  await page.goto(url, { waitUntil: 'domcontentloaded', timeout: 180_000 });
  await page.waitForSelector('.monaco-workbench .activitybar', { timeout: 180_000 });
  await shot('workbench');
  const timelineStep = async () => {
    await runTimelineXssProof(page, { workspace, log, shot });
    const sizes = process.env.CAESAR_TIMELINE_BENCH === '1' ? [100_000, 1_000_000] : [100_000];
    const figures = await measureTimeline(page, { workspace, log, sizes });
    writeFileSync(path.join(path.dirname(screenshots), 'timeline-figures.json'), `${JSON.stringify(figures, null, 2)}\n`);
  };
  if (timelineOnly) return timelineStep();

  // 1. Open the Caesar view from the activity bar: empty, with its welcome text.
  await page.locator('.activitybar [aria-label^="Caesar"]').first().click();
  const pane = page.locator('.pane', { has: page.locator('.pane-header', { hasText: /tasks/i }) }).first();
  await pane.waitFor({ timeout: 60_000 });
  await page.getByText('No delegated tasks in this workspace yet.').waitFor({ timeout: 60_000 });
  await shot('caesar-view-empty');

  // 2. A demo task started from a terminal-like process (the CLI), whose objective carries an HTML payload the demo
  //    agent repeats in its thinking.
  const objective = `Explain ${XSS} then append to README.md`;
  const run = spawn(process.execPath, [cli, 'run', '--agent', 'demo', '--isolation', 'worktree', objective, '--json'], {
    cwd: workspace, env: { ...env, CAESAR_DEMO_DELAY_MS: '3000' }, stdio: ['ignore', 'ignore', 'pipe'],
  });
  let runErr = '';
  run.stderr.on('data', (d) => (runErr += d));
  const runExit = new Promise((resolve) => run.on('exit', (code) => resolve(code)));
  let runEnded = false;
  void runExit.then(() => (runEnded = true));

  // The row's label is the objective's short title (cut near 60 characters; the whole objective is in its tooltip).
  const rowText = `Explain ${XSS}`;
  const taskRow = pane.locator('.monaco-list-row', { hasText: rowText }).first();
  await taskRow.waitFor({ timeout: 30_000 });
  await pane.locator('.monaco-list-row .codicon-loading').first().waitFor({ timeout: 30_000 }); // a tool call spinning
  await shot('task-running-live-tool');
  const statusItem = page.locator('.statusbar-item', { has: page.locator('.codicon-sync') }).filter({ hasText: /1/ });
  if (!(await statusItem.count())) throw new Error('no status-bar item with the running count');

  // 3. The timeline, from the task's inline action.
  await taskRow.hover();
  await taskRow.locator('.action-label[aria-label="Open Timeline"]').click();
  await page.mouse.move(900, 700); // away from the row: its hover tooltip would cover the panel
  const frame = page.frameLocator('iframe.webview.ready').frameLocator('iframe#active-frame');
  await frame.locator('.row').first().waitFor({ timeout: 120_000 });
  await frame.locator('.row .label', { hasText: 'The objective is:' }).waitFor({ timeout: 30_000 });
  // Live: the timeline shows the task's rows while it still runs (no report yet, the CLI still waiting for it). The
  // demo paces its steps by 3 s, so a timeline that showed a task only once it ended fails here.
  const reportShown = await frame.locator('.report').isVisible();
  await shot('timeline-live');
  if (reportShown || runEnded) throw new Error(`the timeline was first shown after the task had ended (report shown: ${reportShown}, caesar run exited: ${runEnded})`);

  // 4. The task ends: the report appears in the timeline, the tree shows its file.
  await frame.locator('.report .report-summary').waitFor({ timeout: 60_000 });
  await shot('timeline-report');
  const code = await runExit;
  if (code !== 0) throw new Error(`caesar run exited ${code}: ${runErr}`);

  // 5. The HTML payload is text: visible literally, no <img> element, no dialog.
  const payloadRows = await frame.locator('.row .label', { hasText: XSS }).count();
  if (payloadRows === 0) throw new Error('the payload is not shown literally in the timeline');
  if ((await frame.locator('img').count()) !== 0) throw new Error('an <img> element exists in the timeline');
  if (await pane.locator('img[src="x"]').count()) throw new Error('an <img> element exists in the tree');

  // 6. Keyboard: focus the list, go to the first row, walk down to the thinking row, read it in the detail pane.
  await frame.locator('.list').focus();
  await frame.locator('.list').press('Home');
  await frame.locator('.list').press('ArrowDown');
  await frame.locator('.list').press('ArrowDown');
  // The detail pane's full text comes from the extension host on selection.
  await frame.locator('.detail', { hasText: XSS }).waitFor({ timeout: 30_000 }).catch(async () => {
    throw new Error(`the detail pane of the thinking row does not show the payload as text: ${await frame.locator('.detail').textContent()}`);
  });
  await shot('timeline-keyboard-detail');

  // 6b. Filter and search (issue 24): "Files" shows the file rows only, each once, and the footer counts them; a search
  //     shows its matches only. Each rendered row the page displays is counted, as a person sees them.
  const shownRows = async () => {
    const labels = await frame.locator('.row:visible .label').allTextContents();
    if (new Set(labels).size !== labels.length) throw new Error(`a row is shown twice: ${labels.join(' | ')}`);
    return labels;
  };
  const matchCount = async () => {
    await frame.locator('.count', { hasText: / of [\d,]+ rows match/ }).waitFor({ timeout: 30_000 });
    return Number(/([\d,]+) of/.exec((await frame.locator('.count').textContent()) ?? '')[1].replace(/,/g, ''));
  };
  // The rows of a query come after its count: wait until the page displays as many as it counts (or say what it shows).
  const rowsShownFor = async (matches, what) => {
    const deadline = Date.now() + 30_000;
    for (;;) {
      const labels = await shownRows();
      if (labels.length === matches) return labels;
      if (Date.now() > deadline) throw new Error(`${what}: ${matches} match, shown: ${labels.join(' | ')}`);
      await page.waitForTimeout(50);
    }
  };
  await frame.locator('select.type-filter').selectOption('files');
  const fileMatches = await matchCount();
  const fileRows = await rowsShownFor(fileMatches, 'filter "Files"');
  if (fileMatches < 1 || fileRows.length !== fileMatches || !fileRows.every((l) => /README\.md/.test(l))) {
    throw new Error(`filter "Files": ${fileMatches} match, shown: ${fileRows.join(' | ')}`);
  }
  await shot('timeline-filter-files');
  await frame.locator('select.type-filter').selectOption('all');
  // Back to every row first (a footer without "match"), so the count read next is the search's, not the filter's.
  await frame.locator('.count', { hasText: / rows$/ }).filter({ hasNotText: /match/ }).waitFor({ timeout: 30_000 });
  await frame.locator('input.search').fill('objective');
  const searchMatches = await matchCount();
  const searchRows = await rowsShownFor(searchMatches, 'search "objective"');
  if (searchRows.length !== searchMatches || !searchRows.every((l) => /objective/i.test(l))) {
    throw new Error(`search "objective": ${searchMatches} match, shown: ${searchRows.join(' | ')}`);
  }
  await shot('timeline-search');
  await frame.locator('input.search').fill('');
  await frame.locator('.count', { hasText: / rows$/ }).waitFor({ timeout: 30_000 });

  // 7. A changed file opens in the native diff editor (base version on the left).
  await frame.locator('.report .file-link', { hasText: 'README.md' }).click();
  await page.locator('.monaco-diff-editor .modified .view-line', { hasText: 'Test workspace' }).first().waitFor({ timeout: 30_000 });
  await page.locator('.monaco-diff-editor .original .view-line', { hasText: 'Test workspace' }).first().waitFor({ timeout: 30_000 });
  await shot('diff-editor');

  // 8. In the tree (still open beside the editor): the finished task, expanded, with its tool calls and the file.
  const finished = pane.locator('.monaco-list-row', { hasText: rowText }).first();
  await finished.locator('.codicon-pass').waitFor({ timeout: 30_000 });
  if ((await finished.getAttribute('aria-expanded')) !== 'true') await finished.click();
  await pane.locator('.monaco-list-row', { hasText: '+1 −0' }).first().waitFor({ timeout: 30_000 });
  await shot('tree-finished');

  // 9. Delegate from the palette: objective, Enter; the agent step lists every agent with its status (demo picked by
  //    typing its name), Enter. The progress notification runs until the agent does; the task appears selected.
  await page.keyboard.press('F1');
  const quickInput = page.locator('.quick-input-widget input.input');
  await quickInput.fill('>Caesar: Delegate Task');
  await page.locator('.quick-input-list .monaco-list-row', { hasText: 'Caesar: Delegate Task' }).first().waitFor({ timeout: 30_000 });
  await page.keyboard.press('Enter');
  await page.locator('.quick-input-widget', { hasText: 'The objective for the agent' }).waitFor({ timeout: 30_000 });
  const asking = 'Ask me which greeting, then write GREETING.md';
  await quickInput.fill(asking);
  await shot('delegate-objective');
  await page.keyboard.press('Enter');
  await page.locator('.quick-input-list .monaco-list-row', { hasText: 'installed' }).first().waitFor({ timeout: 30_000 });
  await quickInput.fill('demo');
  await page.locator('.quick-input-list .monaco-list-row', { hasText: 'demo' }).first().waitFor({ timeout: 30_000 });
  await shot('delegate-agent');
  await page.keyboard.press('Enter');
  const delegated = pane.locator('.monaco-list-row', { hasText: asking }).first();
  await delegated.waitFor({ timeout: 60_000 });

  // 10. Its question is loud (question icon in the tree) and notified: answered from the notification's button.
  await delegated.locator('.codicon-question').waitFor({ timeout: 60_000 });
  await page.mouse.move(900, 700);
  await page.locator('[id="status.notifications"] a').first().click();
  const notice = page.locator('.notifications-center .notification-list-item', { hasText: 'demo asks: Which greeting' }).first();
  await notice.waitFor({ timeout: 30_000 });
  await shot('question-notification');
  const bonjour = notice.locator('.monaco-button', { hasText: 'Bonjour' }).first();
  await bonjour.click({ timeout: 5_000 }).catch(() => bonjour.dispatchEvent('click'));
  await delegated.locator('.codicon-pass').waitFor({ timeout: 60_000 });
  await shot('question-answered-task-done');

  // 11. "Review All Changes" (the task row's inline action; the palette would pick the timeline's task): the multi-file
  //     diff editor, titled base ↔ task, with the demo's file; per-file diff editors where `vscode.changes` is absent.
  const written = 'GREETING.md';
  await page.mouse.move(900, 700);
  await page.keyboard.press('Escape'); // the notification center
  await delegated.hover();
  await delegated.locator('.action-label[aria-label="Review All Changes"]').click();
  const multiDiff = page.locator('.multiDiffEditor', { hasText: written }).first();
  const perFile = page.locator('.monaco-diff-editor .modified .view-line', { hasText: 'Written by the Caesar demo agent' }).first();
  const shown = await Promise.race([
    multiDiff.waitFor({ timeout: 60_000 }).then(() => 'multiDiff'),
    perFile.waitFor({ timeout: 60_000 }).then(() => 'perFile'),
  ]);
  if (shown === 'multiDiff') {
    await page.locator('.multiDiffEditor .monaco-diff-editor .modified .view-line', { hasText: 'Written by the Caesar demo agent' }).first().waitFor({ timeout: 60_000 });
    await page.locator('.tab.active', { hasText: 'base ↔ task' }).first().waitFor({ timeout: 30_000 });
  }
  // The multi-file diff editor's title bar offers Apply (issue 24); the file reads "A" (added), not "R" (renamed).
  const titleApply = page.locator('.editor-actions .action-label[aria-label="Apply Changes"]').first();
  if (shown === 'multiDiff') await titleApply.waitFor({ timeout: 30_000 });
  await page.mouse.move(900, 700);
  await page.waitForTimeout(300); // let the diff settle before the screenshot
  await shot(shown === 'multiDiff' ? 'review-all-multi-diff' : 'review-all-per-file-diff');

  // 12. "Apply Changes" (inline on the row): no confirmation, since no file of the task changed in the workspace too
  //     (12c shows the one that asks). The file is then in the workspace, with the answer in it.
  const onDisk = path.join(workspace, written);
  if (existsSync(onDisk)) throw new Error(`${written} is in the workspace before Apply`);
  if (shown === 'multiDiff') {
    await titleApply.click(); // from the multi-file diff editor's title bar
  } else {
    await delegated.hover();
    await delegated.locator('.action-label[aria-label="Apply Changes"]').click();
  }
  await page.mouse.move(900, 700);
  await page.locator('[id="status.notifications"] a').first().click();
  const appliedNotice = page.locator('.notifications-center .notification-list-item', { hasText: `applied 1 file of` }).first();
  const askedFirst = page.locator('.monaco-dialog-box');
  const came = await Promise.race([
    appliedNotice.waitFor({ timeout: 60_000 }).then(() => 'applied', () => 'nothing'),
    askedFirst.waitFor({ timeout: 60_000 }).then(() => 'dialog', () => 'nothing'),
  ]);
  if (came === 'dialog') throw new Error(`Apply asked for a confirmation with nothing changed in the workspace: ${await askedFirst.textContent()}`);
  if (came !== 'applied') throw new Error(`Apply said nothing within 60 s (no "applied 1 file of …" notification)`);
  if (!existsSync(onDisk)) throw new Error(`${written} is not in the workspace after Apply said it applied it`);
  const appliedText = readFileSync(onDisk, 'utf8');
  if (!appliedText.includes('Bonjour')) throw new Error(`${written} in the workspace lacks the answer: ${appliedText}`);
  await shot('applied-file-in-workspace');
  await page.keyboard.press('Escape');

  // 12a. Applied: the tree says so, and its timeline offers no Apply any more (only the review).
  await pane.locator('.monaco-list-row', { hasText: asking }).filter({ hasText: 'applied' }).first().waitFor({ timeout: 30_000 });
  await page.keyboard.press('F1');
  await quickInput.fill('>View: Close All Editors');
  await page.locator('.quick-input-list .monaco-list-row', { hasText: 'View: Close All Editors' }).first().waitFor({ timeout: 30_000 });
  await page.keyboard.press('Enter');
  await delegated.hover();
  await delegated.locator('.action-label[aria-label="Open Timeline"]').click();
  await page.mouse.move(900, 700);
  const appliedFrame = page.frameLocator('iframe.webview.ready').frameLocator('iframe#active-frame');
  await appliedFrame.locator('.review-note', { hasText: 'Applied to your workspace' }).waitFor({ timeout: 60_000 });
  if (await appliedFrame.locator('.actions button[data-action="apply"]').isVisible()) throw new Error('the timeline of an applied task still offers Apply');
  await shot('timeline-applied');

  // 12c. The first task appended to README.md; the user has edited README.md since. Apply now asks first, in the modal
  //      dialog the user sees (the real one, no seam answering it): it names the file; Cancel writes nothing.
  await confirmationCancelled(page, { workspace, finished, shot });

  // 12b. Discard the first task (never applied), from its row: after the confirmation the tree says "discarded", its
  //      file is no longer offered as a diff, and its timeline offers nothing but says what happened.
  await finished.hover();
  await finished.locator('.action-label[aria-label="Discard Task Worktree"]').click();
  const discardModal = page.locator('.monaco-dialog-box');
  await discardModal.waitFor({ timeout: 30_000 });
  if (!/Discard the worktree of “Explain <img src=x onerror=alert\(1\)> then append to README\.…” \(demo\)\?/.test(await discardModal.textContent())) {
    throw new Error(`the discard dialog does not name the task: ${await discardModal.textContent()}`);
  }
  await shot('discard-confirmation');
  await discardModal.locator('.monaco-button', { hasText: /^\s*Discard\s*$/ }).first().click();
  await pane.locator('.monaco-list-row', { hasText: rowText }).filter({ hasText: 'discarded' }).first().waitFor({ timeout: 30_000 });
  await finished.hover();
  await finished.locator('.action-label[aria-label="Open Timeline"]').click();
  await page.mouse.move(900, 700);
  const discardedFrame = page.frameLocator('iframe.webview.ready').frameLocator('iframe#active-frame');
  await discardedFrame.locator('.review-note', { hasText: 'Discarded' }).waitFor({ timeout: 60_000 });
  if (await discardedFrame.locator('.actions').isVisible()) throw new Error('the timeline of a discarded task still offers actions');
  if (await discardedFrame.locator('.report .file-link').count()) throw new Error('a discarded task still offers its files as diffs');
  await shot('task-discarded');

  // 12b. An agent over ACP asks before it writes: its permission request is a question like any other, notified with
  //      the agent's own options as buttons; "Allow" from the notification, and the write happens in its worktree.
  const acpObjective = 'Write ACP_ALLOWED.md';
  const acpRun = spawn(process.execPath, [cli, 'run', '--agent', 'demo', '--transport', 'acp', '--isolation', 'worktree', acpObjective, '--json'], {
    cwd: workspace, env, stdio: ['ignore', 'pipe', 'pipe'],
  });
  let acpOut = '';
  acpRun.stdout.on('data', (d) => (acpOut += d));
  acpRun.stderr.on('data', (d) => (acpOut += d));
  const acpExit = new Promise((resolve) => acpRun.on('exit', (code) => resolve(code)));
  const acpRow = pane.locator('.monaco-list-row', { hasText: acpObjective }).first();
  await acpRow.locator('.codicon-question').waitFor({ timeout: 60_000 });
  await page.mouse.move(900, 700);
  await page.locator('[id="status.notifications"] a').first().click();
  const permission = page.locator('.notifications-center .notification-list-item', { hasText: 'asks permission to edit' })
    .filter({ has: page.locator('.monaco-button', { hasText: /^\s*Allow\s*$/ }) }).first();
  await permission.waitFor({ timeout: 30_000 });
  await shot('acp-permission-notification');
  const allow = permission.locator('.monaco-button', { hasText: /^\s*Allow\s*$/ }).first();
  await allow.click({ timeout: 5_000 }).catch(() => allow.dispatchEvent('click'));
  await acpRow.locator('.codicon-pass').waitFor({ timeout: 60_000 });
  if ((await acpExit) !== 0) throw new Error(`caesar run --transport acp failed: ${acpOut}`);
  const acpTask = JSON.parse(acpOut.slice(acpOut.indexOf('{')));
  if (!acpTask.diff?.files?.some((f) => f.path === 'ACP_ALLOWED.md')) throw new Error(`the allowed write is not in the diff: ${acpOut}`);
  await page.keyboard.press('Escape');
  await shot('acp-permission-allowed-task-done');

  // 13. F1 → "MCP: List Servers" (hidden while `chat.disableAIFeatures` is on: see the start): the server the extension
  //     registers is listed under Caesar.
  const palette = async (command) => {
    await page.keyboard.press('F1');
    await page.locator('.quick-input-widget').waitFor({ state: 'visible', timeout: 30_000 });
    await quickInput.fill(`>${command}`);
    await page.locator('.quick-input-list .monaco-list-row', { hasText: command }).first().waitFor({ timeout: 30_000 });
    await page.keyboard.press('Enter');
  };
  // The MCP commands may be offered only once the chat setup state has settled: open the palette until it is.
  for (let attempt = 1; ; attempt++) {
    await page.keyboard.press('F1');
    await page.locator('.quick-input-widget').waitFor({ state: 'visible', timeout: 30_000 });
    await quickInput.fill('>MCP: List Servers');
    const offered = await page.locator('.quick-input-list .monaco-list-row', { hasText: 'MCP: List Servers' }).first()
      .waitFor({ timeout: 5_000 }).then(() => true, () => false);
    if (offered) break;
    if (attempt === 12) throw new Error('"MCP: List Servers" is not offered in the palette');
    await page.keyboard.press('Escape');
  }
  await page.keyboard.press('Enter');
  const caesarServer = page.locator('.quick-input-list .monaco-list-row', { hasText: /^Caesar(?!:)/ }).first();
  await caesarServer.waitFor({ timeout: 60_000 });
  await shot('mcp-list-servers');

  // 14. Its options offer "Start Server"; started, the server's output channel logs the tools it discovered.
  await caesarServer.click();
  const startRow = page.locator('.quick-input-list .monaco-list-row', { hasText: 'Start Server' }).first();
  await startRow.waitFor({ timeout: 30_000 });
  await shot('mcp-server-options');
  await startRow.click();
  // The workbench shows the server's output channel (MCP: Caesar) as it starts; if not, "Show Output" from its options.
  // Eleven: the orchestrator's tools (test/mcp/orchestrator.test.ts lists them by name).
  const discovered = page.locator('.part.panel .monaco-editor .view-line', { hasText: 'Discovered 11 tools' }).first();
  if (!(await discovered.waitFor({ timeout: 30_000 }).then(() => true, () => false))) {
    await palette('MCP: List Servers');
    await caesarServer.click();
    const outputRow = page.locator('.quick-input-list .monaco-list-row', { hasText: 'Show Output' }).first();
    await outputRow.waitFor({ timeout: 30_000 });
    await outputRow.click();
    await discovered.waitFor({ timeout: 90_000 });
  }
  await page.mouse.move(900, 700);
  await shot('mcp-server-started-eleven-tools');

  // 15. The timeline in the real browser: XSS payloads in every agent field (no dialog, no CSP violation, all text),
  //     then its figures at 100k events (and 1M with CAESAR_TIMELINE_BENCH=1), in test-results/timeline-figures.json.
  await timelineStep();

  if (dialogs.length) throw new Error(`a dialog fired: ${dialogs.join(' | ')}`);
  log(`UI scenario: ${step} screenshots; payload shown as text in ${payloadRows} timeline row(s); no dialog`);
}

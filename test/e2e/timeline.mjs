// The timeline in the real browser: (1) the XSS proof — a task whose every agent-provided field carries a hostile
// payload is shown in the real timeline; no dialog may fire, no Content-Security-Policy violation may occur (counted
// from the webview's console and from `securitypolicyviolation` listeners in its frames), no element may come out of
// agent text, and every payload must read literally; (2) the figures of a 100k-event task (and a 1M-event one with
// CAESAR_TIMELINE_BENCH=1): first screen and jumps to far rows, measured in the page, and the webview's JS heap.
// Called by test/e2e/scenario.mjs (the UI scenario) with code-server running and the workbench open.
import { appendFileSync, mkdirSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { sealDocument, sealEventLine } from '../extension/fixtures/seal.mjs';

export const XSS_PAYLOADS = [
  '<img src=x onerror=alert(1)>',
  '<script>alert(2)</script>',
  'javascript:alert(3)',
  '</style><style>*{display:none}</style><img src=x onerror=alert(4)>',
  '<svg onload=alert(5)>',
  '"><iframe src="javascript:alert(6)"></iframe>',
  "'-alert(7)-'",
  '<a href="javascript:alert(8)">click</a>',
  '\u202Egnp.exe\u202C <b>bidi</b> zero\u200Bwidth \uFEFFbom',
  '\u001B]0;pwned\u0007\u001B[2J\u001B[31mred\u001B[0m',
  '<math><mtext><table><mglyph><style><img src=x onerror=alert(9)>',
  '{{constructor.constructor("alert(10)")()}}',
];

/** Writes a hand-made task directory (state.json, events.jsonl, optional result.json) as a supervisor leaves it. */
function writeTask(root, id, state, eventLines, result) {
  const dir = path.join(root, '.caesar', 'tasks', id);
  mkdirSync(dir, { recursive: true });
  // Sealed as Caesar's writers seal them: the editor shows only records that verify (docs/reliability.md).
  writeFileSync(path.join(dir, 'events.jsonl'), eventLines.length ? `${eventLines.map((l) => sealEventLine(root, id, l)).join('\n')}\n` : '');
  if (result) writeFileSync(path.join(dir, 'result.json'), JSON.stringify(sealDocument('result', root, id, result)));
  writeFileSync(path.join(dir, 'state.json'), JSON.stringify(sealDocument('state', root, id, {
    id, mode: 'write', isolation: 'inplace', network: false, timeout_ms: 600_000, depth: 0, root, workspace: root, excluded_paths: [],
    created_at: new Date().toISOString(), ...state,
  })));
  return dir;
}

/** Every agent-provided field of every event type, each carrying payload `p` (tagged so each is found once). */
function hostileEvents(id, payloads, firstSeq) {
  let seq = firstSeq;
  const at = () => new Date().toISOString();
  const line = (body) => JSON.stringify({ protocol: 'caesar.event/v1', seq: seq++, at: at(), task_id: id, ...body });
  const out = [];
  payloads.forEach((p, i) => {
    out.push(
      line({ type: 'message', text: `msg${i} ${p}` }),
      line({ type: 'thinking', text: `think${i} ${p}` }),
      line({ type: 'tool_use', tool: `tool${i}${p}`, input_summary: `input${i} ${p}`, status: 'started', id: `call${i}` }),
      line({ type: 'tool_use', tool: `tool${i}${p}`, input_summary: `input${i} ${p}`, status: i % 2 ? 'failed' : 'succeeded', id: `call${i}` }),
      line({ type: 'file_changed', path: `src/file${i}${p}.ts`, action: 'modified' }),
      line({ type: 'progress', message: `progress${i} ${p}` }),
      line({ type: 'question', id: `q${i}`, question: `question${i} ${p}`, options: [`option${i} ${p}`] }),
      line({ type: 'answer', id: `q${i}`, answer: `answer${i} ${p}` }),
      line({ type: 'error', message: `error${i} ${p}`, fatal: false }),
    );
  });
  return { lines: out, next: () => seq, line };
}

/** Runs a palette command, trying again while it is not offered yet (the extension may still be activating). */
async function palette(page, command) {
  const input = page.locator('.quick-input-widget input.input');
  for (let attempt = 1; ; attempt++) {
    await page.keyboard.press('F1');
    await input.fill(`>${command}`);
    const offered = await page.locator('.quick-input-list .monaco-list-row', { hasText: command }).first()
      .waitFor({ timeout: 5_000 }).then(() => true, () => false);
    if (offered) break;
    if (attempt === 24) throw new Error(`"${command}" is not offered in the palette`);
    await page.keyboard.press('Escape');
  }
  await page.keyboard.press('Enter');
}

/**
 * Opens a task's timeline from the palette (the quick pick lists tasks by objective) and returns its frame locator.
 * The pick lists the tasks known when it opens: until the extension has seen the new task, try again. All editors are
 * closed first (a new panel), unless `keepEditors` (an untouched timeline panel is then reused).
 */
async function openTimeline(page, objective, { keepEditors = false } = {}) {
  if (!keepEditors) await palette(page, 'View: Close All Editors');
  const input = page.locator('.quick-input-widget input.input');
  for (let attempt = 1; ; attempt++) {
    await palette(page, 'Caesar: Open Timeline');
    await page.locator('.quick-input-widget input.input[placeholder="Open the timeline of which task?"]').waitFor({ timeout: 30_000 });
    await input.fill(objective);
    const listed = await page.locator('.quick-input-list .monaco-list-row', { hasText: objective }).first()
      .waitFor({ timeout: 5_000 }).then(() => true, () => false);
    if (listed) break;
    if (attempt === 24) throw new Error(`the task "${objective}" is not offered by Caesar: Open Timeline`);
    await page.keyboard.press('Escape');
  }
  const opened = Date.now();
  await page.keyboard.press('Enter');
  return { frame: page.frameLocator('iframe.webview.ready').frameLocator('iframe#active-frame'), opened };
}

/**
 * Resolves once the host has handled every message the page sent before: the page's messages reach the host in order,
 * and a filter change is one the host answers (the footer then counts the matches). Playwright's selectOption sends
 * no pointer or key event, so this is no "keep" itself. The filter is put back to "all" after.
 */
async function pageHeardByHost(frame) {
  await frame.locator('select.type-filter').selectOption('problems');
  await frame.locator('.foot .count', { hasText: / of [\d,]+ rows match/ }).waitFor({ timeout: 30_000 });
  await frame.locator('select.type-filter').selectOption('all');
  await frame.locator('.foot .count', { hasText: /rows$/ }).filter({ hasNotText: /match/ }).waitFor({ timeout: 30_000 });
}

/** The Playwright Frame of the timeline (for evaluate), found by its #app element. */
async function timelineFrame(page) {
  for (let attempt = 0; attempt < 100; attempt++) {
    for (const f of page.frames()) {
      if (await f.evaluate(() => !!document.querySelector('#app .list')).catch(() => false)) return f;
    }
    await page.waitForTimeout(100);
  }
  throw new Error('no timeline frame');
}

const CSP_LISTENER = () => {
  if (window.__cspViolations) return;
  window.__cspViolations = [];
  document.addEventListener('securitypolicyviolation', (e) => window.__cspViolations.push(`${e.violatedDirective} ${e.blockedURI}`));
};

export async function runTimelineXssProof(page, { workspace, log, shot }) {
  const dialogs = [];
  const cspConsole = [];
  page.on('dialog', (d) => {
    dialogs.push(d.message());
    void d.dismiss();
  });
  page.on('console', (m) => {
    if (/Content.Security.Policy|Refused to (execute|load|apply|frame)/i.test(m.text())) cspConsole.push(m.text());
  });
  // In every frame created from here on (the webview's frames included, when the browser runs init scripts there).
  await page.context().addInitScript(CSP_LISTENER);

  const id = 'xss-proof';
  const objective = `XSS proof ${XSS_PAYLOADS[0]} ${XSS_PAYLOADS[1]}`;
  const start = JSON.stringify({
    protocol: 'caesar.event/v1', seq: 0, at: new Date().toISOString(), task_id: id, type: 'started', agent: `agent ${XSS_PAYLOADS[4]}`, command: `cmd ${XSS_PAYLOADS[2]}`,
  });
  const hostile = hostileEvents(id, XSS_PAYLOADS, 1);
  const dir = writeTask(workspace, id, {
    agent: `agent${XSS_PAYLOADS[4]}`, objective, status: 'running', started_at: new Date().toISOString(), supervisor_pid: process.pid,
  }, [start, ...hostile.lines]);
  const { frame } = await openTimeline(page, 'XSS proof');
  await frame.locator('.row:not(.pending) .label', { hasText: 'error11' }).first().waitFor({ timeout: 60_000 }); // it follows the end
  const tf = await timelineFrame(page);
  await tf.evaluate(CSP_LISTENER); // in case init scripts do not reach the webview's inner frame

  // Live, after the listeners are in: more payload events, then the end with a report full of payloads.
  const more = hostileEvents(id, XSS_PAYLOADS.map((p) => `live ${p}`), hostile.next());
  const finished = more.line({ type: 'finished', status: 'partial', summary: `summary ${XSS_PAYLOADS[3]}` });
  appendFileSync(path.join(dir, 'events.jsonl'), `${[...more.lines, finished].map((l) => sealEventLine(workspace, id, l)).join('\n')}\n`);
  const report = {
    protocol: 'caesar.report/v1', task_id: id, status: 'partial', summary: `report ${XSS_PAYLOADS[0]}`, details: `details ${XSS_PAYLOADS.join(' ')}`,
    changes: [], commands_run: [], questions: [], artifacts: [],
    findings: XSS_PAYLOADS.map((p, i) => ({ severity: 'high', title: `finding${i} ${p}`, file: `src/f${i}${p}.ts`, line: 1, detail: `detail${i} ${p}` })),
    next_steps: XSS_PAYLOADS.map((p, i) => `step${i} ${p}`),
  };
  writeFileSync(path.join(dir, 'result.json'), JSON.stringify(sealDocument('result', workspace, id, {
    report, report_source: 'file', changes_verified_by: 'git', agent_report_valid: true,
    diff: { is_empty: false, files: XSS_PAYLOADS.map((p, i) => ({ path: `src/changed${i}${p}.ts`, action: 'modified', additions: 1, deletions: 0, binary: false })) },
  })));
  writeFileSync(path.join(dir, 'state.json'), JSON.stringify(sealDocument('state', workspace, id, {
    id, mode: 'write', isolation: 'inplace', network: false, timeout_ms: 600_000, depth: 0, root: workspace, workspace, excluded_paths: [],
    created_at: new Date().toISOString(), agent: `agent${XSS_PAYLOADS[4]}`, objective, status: 'failed', error: `error ${XSS_PAYLOADS[5]}`,
    started_at: new Date().toISOString(), ended_at: new Date().toISOString(),
  })));
  await frame.locator('.report .report-summary').waitFor({ timeout: 60_000 });
  await frame.locator('.row .label', { hasText: 'Finished: partial' }).waitFor({ timeout: 60_000 });

  // The detail pane (full text, asked from the host) of the first message row.
  await frame.locator('.list').focus();
  await frame.locator('.list').press('Home');
  await frame.locator('.row:not(.pending) .label', { hasText: 'msg0' }).first().click();
  await tf.waitForFunction((p) => document.querySelector('.detail')?.textContent?.includes(`msg0 ${p}`), XSS_PAYLOADS[0], { timeout: 10_000 });
  // Each payload through the search box (searched host-side): the rows that match show it literally.
  let searched = 0;
  for (const p of XSS_PAYLOADS) {
    await frame.locator('.search').fill(p);
    await tf.waitForFunction(
      (text) => [...document.querySelectorAll('.row:not(.pending):not([hidden]) .label')].filter((l) => l.textContent?.includes(text)).length >= 8,
      p, { timeout: 30_000 },
    );
    searched++;
  }
  await frame.locator('.search').fill('');
  await shot('timeline-xss-proof');

  const seen = await tf.evaluate(() => ({
    text: document.body.textContent ?? '',
    // Elements that agent text could have produced if it were parsed as markup.
    foreign: document.querySelectorAll('#app :is(img, svg, iframe, object, embed, math, b, style, script, a[href^="javascript"], [onerror], [onload])').length,
    scripts: document.querySelectorAll('script').length,
    listener: window.__cspViolations ?? null,
  }));
  const missing = XSS_PAYLOADS.filter((p) => !seen.text.includes(p));
  const violations = (seen.listener ?? []).length + cspConsole.length;
  log(`XSS proof: ${XSS_PAYLOADS.length} payloads in every agent field; shown literally in the page: ${XSS_PAYLOADS.length - missing.length}/${XSS_PAYLOADS.length}, `
    + `found by search in the rows: ${searched}/${XSS_PAYLOADS.length}; `
    + `CSP violations: ${violations} (console ${cspConsole.length}, listener ${seen.listener === null ? 'not installed' : seen.listener.length}); `
    + `dialogs: ${dialogs.length}; elements from agent text: ${seen.foreign}; scripts: ${seen.scripts}`);
  if (dialogs.length) throw new Error(`a dialog fired: ${dialogs.join(' | ')}`);
  if (violations) throw new Error(`CSP violations: ${[...cspConsole, ...(seen.listener ?? [])].join(' | ')}`);
  if (missing.length) throw new Error(`payloads not shown literally: ${missing.map((p) => JSON.stringify(p)).join(', ')}`);
  if (seen.foreign) throw new Error(`${seen.foreign} element(s) made from agent text in the timeline`);
  if (await page.locator('img[src="x"], iframe[src^="javascript"]').count()) throw new Error('an element made from agent text in the workbench');
  return { payloads: XSS_PAYLOADS.length, violations, dialogs: dialogs.length };
}

/** A task of `count` events like a busy agent's (paired tool calls, messages, thoughts), finished. */
function writeBigTask(workspace, id, objective, count) {
  const base = Date.now() - count * 10;
  const chunks = [];
  let chunk = '';
  const line = (seq, body) => `${sealEventLine(workspace, id, JSON.stringify({ protocol: 'caesar.event/v1', seq, at: new Date(base + seq * 10).toISOString(), task_id: id, ...body }))}\n`;
  let rows = 1; // the finished row
  for (let seq = 0; seq < count - 1; seq++) {
    const kind = seq % 4;
    if (kind !== 1) rows++; // a tool call's end closes its start's row
    if (kind === 0) chunk += line(seq, { type: 'tool_use', tool: 'read', input_summary: `file-${seq}.ts`, status: 'started', id: `c${seq}` });
    else if (kind === 1) chunk += line(seq, { type: 'tool_use', tool: 'read', input_summary: `file-${seq - 1}.ts`, status: 'succeeded', id: `c${seq - 1}` });
    else if (kind === 2) chunk += line(seq, { type: 'message', text: `message number ${seq}: ${'lorem ipsum '.repeat(4)}` });
    else chunk += line(seq, { type: 'thinking', text: `thought ${seq}` });
    if (chunk.length > 1 << 20) {
      chunks.push(chunk);
      chunk = '';
    }
  }
  chunks.push(chunk + line(count - 1, { type: 'finished', status: 'success', summary: 'big' }));
  const dir = writeTask(workspace, id, {
    agent: 'fixture', objective, status: 'succeeded', started_at: new Date(base).toISOString(), ended_at: new Date().toISOString(),
  }, []);
  writeFileSync(path.join(dir, 'events.jsonl'), chunks.join(''));
  return rows;
}

/** In the page: scroll to a fraction of the list and wait until the rows in view are the right ones, with data. */
const JUMP = async ([fraction, rows]) => {
  const list = document.querySelector('.list');
  const target = Math.floor(fraction * rows);
  const t0 = performance.now();
  list.scrollTop = fraction * (list.scrollHeight - list.clientHeight);
  return new Promise((resolve) => {
    const check = () => {
      const shown = [...document.querySelectorAll('.row:not([hidden])')];
      const near = shown.some((r) => Math.abs(Number(r.dataset.index) - target) <= 60);
      if (near && shown.length && shown.every((r) => !r.classList.contains('pending'))) resolve(performance.now() - t0);
      else if (performance.now() - t0 > 30_000) resolve(-1);
      else requestAnimationFrame(check);
    };
    requestAnimationFrame(check);
  });
};

export async function measureTimeline(page, { workspace, log, sizes }) {
  const figures = {};
  // Written now, so that the extension lists it long before the preview step picks it.
  writeTask(workspace, 'preview-small', { agent: 'fixture', objective: SMALL, status: 'succeeded', started_at: new Date().toISOString(), ended_at: new Date().toISOString() }, [
    JSON.stringify({ protocol: 'caesar.event/v1', seq: 0, at: new Date().toISOString(), task_id: 'preview-small', type: 'message', text: 'the small task speaks' }),
  ]);
  for (const count of sizes) {
    const k = count >= 1_000_000 ? `${count / 1_000_000}M` : `${count / 1000}k`;
    const objective = `Timeline of ${k} events`;
    const rows = writeBigTask(workspace, `big-${k}`, objective, count);
    const { frame, opened } = await openTimeline(page, objective);
    await frame.locator('.row:not(.pending) .label').first().waitFor({ timeout: 120_000 });
    const firstScreenMs = Date.now() - opened;
    // Every event indexed and counted: the footer must say so (a timeline that never finished indexing fails here).
    await frame.locator('.foot .count', { hasText: `${rows.toLocaleString('en-US')} rows` }).waitFor({ timeout: 300_000 });
    const fullMs = Date.now() - opened;
    const tf = await timelineFrame(page);
    const jumps = [];
    for (const fraction of [0.5, 0.1, 0.9, 0.3, 0.7, 0.02]) {
      const ms = Math.round(await tf.evaluate(JUMP, [fraction, rows]));
      if (ms < 0) throw new Error(`a jump to ${fraction * 100}% of the ${k} timeline never showed its rows (30 s)`);
      jumps.push(ms);
    }
    const heapMb = await tf.evaluate(() => (performance.memory ? performance.memory.usedJSHeapSize / (1 << 20) : -1));
    const sorted = [...jumps].sort((a, b) => a - b);
    const reusedMs = await reopenInPreview(page, objective);
    figures[k] = {
      firstScreenMs, firstScreenInReusedPanelMs: reusedMs, indexedAndShownMs: fullMs, jumpMs: jumps,
      jumpMedianMs: sorted[Math.floor(sorted.length / 2)], jumpMaxMs: sorted.at(-1), webviewHeapMb: Number(heapMb.toFixed(1)),
    };
    log(`timeline ${k} events: ${JSON.stringify(figures[k])}`);
  }
  await userKeepsPanel(page);
  return figures;
}

/** A small finished task, opened between two opens of the big one. */
const SMALL = 'Small task for the preview';

/** Timeline tabs open in the workbench. */
const timelineTabs = (page) => page.locator('.tabs-container .tab', { hasText: 'Timeline:' });

/**
 * The panel left untouched (the jumps above scroll it from script; a wheel scroll only reads) is a preview: another task opened
 * takes it over, then the big task again, in the same page. Returns the time to the big task's first screen there.
 */
async function reopenInPreview(page, bigObjective) {
  const { frame } = await openTimeline(page, SMALL, { keepEditors: true });
  await frame.locator('.row:not(.pending) .label', { hasText: 'the small task speaks' }).waitFor({ timeout: 60_000 });
  // A real wheel scroll over the page reads it, as with a preview editor: the panel stays a preview.
  const box = await page.locator('iframe.webview.ready').last().boundingBox();
  if (box) {
    await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
    await page.mouse.wheel(0, 300);
    await pageHeardByHost(frame); // a `keep` the wheel sent would have reached the host before this
  }
  const { frame: again, opened } = await openTimeline(page, bigObjective, { keepEditors: true });
  await again.locator('.row:not(.pending) .label', { hasText: 'message number' }).first().waitFor({ timeout: 120_000 });
  const reusedMs = Date.now() - opened;
  if ((await timelineTabs(page).count()) !== 1) throw new Error(`expected the preview panel to be reused, saw ${await timelineTabs(page).count()} timeline tabs`);
  if (await again.locator('.row:not([hidden]) .label', { hasText: 'the small task speaks' }).count()) throw new Error('the reused panel still shows the previous task');
  return reusedMs;
}

/** Once the user clicks in a timeline, it is theirs: the next task opened gets a panel of its own. */
async function userKeepsPanel(page) {
  const frame = page.frameLocator('iframe.webview.ready').frameLocator('iframe#active-frame');
  await frame.locator('.search').click();
  await pageHeardByHost(frame); // the click's `keep` message has reached the host
  await openTimeline(page, SMALL, { keepEditors: true });
  // Two pages now: found by their tabs (a frame locator would match both webviews).
  await page.locator('.tabs-container .tab.active', { hasText: `Timeline: ${SMALL}` }).waitFor({ timeout: 60_000 });
  const tabs = await timelineTabs(page).count();
  if (tabs !== 2) throw new Error(`a timeline the user clicked in was taken over (${tabs} timeline tab(s))`);
}

// Runs inside `unshare -n` (see run.mjs): starts code-server, runs the in-editor suite through the `payload` URL
// (../shared/editor/RECIPE.md), then the Playwright UI scenario (test/e2e/scenario.mjs). Never run it directly.
import { execFileSync, spawn } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import * as path from 'node:path';
import { chromium } from 'playwright-core';
import { runScenario } from '../e2e/scenario.mjs';
import { prepareTestHome } from './build.mjs';
import { writeReport } from '../support/not-run.mjs';

const config = JSON.parse(process.argv[2]);
const { projectDir, runDir, workspace } = config;
const started = Date.now();
const log = (line) => console.log(`[editor ${((Date.now() - started) / 1000).toFixed(1)}s] ${line}`);

function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

function dir(...parts) {
  const p = path.join(runDir, ...parts);
  mkdirSync(p, { recursive: true });
  return p;
}

const { binDir, home } = prepareTestHome(runDir);
const userData = dir('user-data');
mkdirSync(path.join(userData, 'User'), { recursive: true });
const userSettings = {
    'workbench.startupEditor': 'none',
    'workbench.tips.enabled': false,
    'telemetry.telemetryLevel': 'off',
    'extensions.autoCheckUpdates': false,
    'extensions.autoUpdate': false,
    'security.workspace.trust.enabled': false,
    'chat.disableAIFeatures': true,
    'workbench.secondarySideBar.defaultVisibility': 'hidden',
    'terminal.integrated.enablePersistentSessions': false,
};
writeFileSync(path.join(userData, 'User', 'settings.json'), JSON.stringify(userSettings));
const stateDir = dir('suite-state');
const port = await freePort();
const address = `127.0.0.1:${port}`;
const env = {
  ...process.env,
  PATH: `${binDir}:${path.dirname(config.node24)}:${process.env.PATH}`,
  HOME: home,
  TMPDIR: dir('tmp'),
  XDG_CONFIG_HOME: dir('xdg-config'),
  XDG_DATA_HOME: dir('xdg-data'),
  XDG_CACHE_HOME: dir('xdg-cache'),
  CAESAR_TEST_STATE_DIR: stateDir,
  CAESAR_TEST_BIN_DIR: binDir,
};
// code-server changes nothing for CI, but the agents started by the tests must not think they run in CI (a CLI that
// sees CI=true changes its output and prompts). The in-editor runner still has to know: under CI a pending test fails.
delete env.CI;
if (config.ci) env.CAESAR_TEST_FORBID_PENDING = '1';
else delete env.CAESAR_TEST_FORBID_PENDING;

log(`starting code-server on ${address}`);
const server = spawn(
  config.node24,
  [
    config.codeServer, '--auth', 'none', '--bind-addr', address, '--disable-telemetry', '--disable-update-check',
    '--disable-workspace-trust', '--ignore-last-opened', '--user-data-dir', userData, '--extensions-dir', dir('extensions'),
    '--vscode-option', 'enable-smoke-test-driver',
  ],
  { env, stdio: ['ignore', 'pipe', 'pipe'], detached: true },
);
const serverLog = [];
server.stdout.on('data', (d) => serverLog.push(String(d)));
server.stderr.on('data', (d) => serverLog.push(String(d)));

async function waitHealthy(at = address) {
  for (let i = 0; i < 300; i++) {
    try {
      const r = await fetch(`http://${at}/healthz`);
      if (r.ok) return;
    } catch {
      /* not yet */
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`code-server did not answer /healthz:\n${serverLog.join('')}`);
}

const chromiumArgs = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
  '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage'];

function payloadUrl(withTests, folder = workspace, at = address, open = 'folder') {
  const payload = [['extensionDevelopmentPath', `vscode-remote://${at}${projectDir}`]];
  if (withTests) payload.push(['extensionTestsPath', `vscode-remote://${at}${projectDir}/out/test/extension/index.js`]);
  return `http://${at}/?${open}=${encodeURIComponent(folder)}&payload=${encodeURIComponent(JSON.stringify(payload))}`;
}

async function runSuite(url = payloadUrl(true), profile = 'chromium-suite', limitMs = 6 * 60_000) {
  const ctx = await chromium.launchPersistentContext(dir(profile), {
    executablePath: config.chromium, headless: true, viewport: { width: 1400, height: 900 }, args: chromiumArgs,
  });
  try {
    const page = ctx.pages()[0] ?? (await ctx.newPage());
    const exited = new Promise((resolve) => void page.exposeFunction('codeAutomationExit', (code) => resolve(code)));
    await page.goto(url, { waitUntil: 'domcontentloaded', timeout: 180_000 });
    const timeout = new Promise((resolve) => setTimeout(() => resolve('timeout'), limitMs));
    const code = await Promise.race([exited, timeout]);
    if (code === 'timeout') log(`the in-editor suite did not finish within ${limitMs / 60_000} minutes`);
    return code === 0 ? 0 : 1;
  } finally {
    await ctx.close();
  }
}

function printSuiteOutput(suiteState = stateDir) {
  const file = path.join(suiteState, 'mocha.log');
  if (existsSync(file)) console.log(readFileSync(file, 'utf8'));
  const figures = path.join(stateDir, 'figures.jsonl');
  if (existsSync(figures)) {
    mkdirSync(path.join(projectDir, 'test-results'), { recursive: true });
    copyFileSync(figures, path.join(projectDir, 'test-results', 'editor-figures.jsonl'));
    console.log('figures (also in test-results/editor-figures.jsonl):');
    for (const line of readFileSync(figures, 'utf8').trim().split('\n')) console.log(`  ${line}`);
  }
}

/**
 * suite-untrusted/ in a second code-server started WITHOUT --disable-workspace-trust, on the multi-root
 * .code-workspace (run.mjs), trust never granted. Every git the extension host runs is logged by a wrapper that the
 * suite puts first on its PATH (code-server rebuilds PATH for the extension host, so it comes as CAESAR_TEST_GIT_BIN).
 */
async function runUntrustedSuite() {
  const base = dir('untrusted');
  const data = dir('untrusted', 'user-data', 'User');
  writeFileSync(path.join(data, 'settings.json'), JSON.stringify({
    ...userSettings, 'security.workspace.trust.enabled': true, 'security.workspace.trust.startupPrompt': 'never', 'git.enabled': false,
  }));
  const suiteState = dir('untrusted', 'suite-state');
  const gitLog = path.join(suiteState, 'git-runs.log');
  const wrapperBin = dir('untrusted', 'bin');
  const realGit = execFileSync('sh', ['-c', 'command -v git'], { encoding: 'utf8' }).trim();
  writeFileSync(path.join(wrapperBin, 'git'), `#!/bin/sh\nprintf '%s\\t%s\\n' "$PWD" "$*" >> '${gitLog}'\nexec '${realGit}' "$@"\n`);
  chmodSync(path.join(wrapperBin, 'git'), 0o755);
  const at = `127.0.0.1:${await freePort()}`;
  const untrusted = spawn(
    config.node24,
    [
      config.codeServer, '--auth', 'none', '--bind-addr', at, '--disable-telemetry', '--disable-update-check', '--ignore-last-opened',
      '--user-data-dir', path.join(base, 'user-data'), '--extensions-dir', dir('untrusted', 'extensions'), '--vscode-option', 'enable-smoke-test-driver',
    ],
    {
      env: { ...env, PATH: `${wrapperBin}:${env.PATH}`, CAESAR_TEST_STATE_DIR: suiteState, CAESAR_TEST_SUITE: 'suite-untrusted', CAESAR_TEST_GIT_LOG: gitLog, CAESAR_TEST_GIT_BIN: wrapperBin },
      stdio: ['ignore', 'pipe', 'pipe'], detached: true,
    },
  );
  untrusted.stdout.on('data', (d) => serverLog.push(String(d)));
  untrusted.stderr.on('data', (d) => serverLog.push(String(d)));
  try {
    await waitHealthy(at);
    log('code-server without Workspace Trust is up');
    const code = await runSuite(payloadUrl(true, config.untrustedWorkspace, at, 'workspace'), 'chromium-untrusted', 3 * 60_000);
    printSuiteOutput(suiteState);
    return code;
  } finally {
    try {
      process.kill(-untrusted.pid, 'SIGTERM');
    } catch {
      /* already gone */
    }
  }
}

let failed = false;
let uiScenarioRan = false;
try {
  await waitHealthy();
  log('code-server is up');
  if (config.only !== 'ui' && config.only !== 'untrusted') {
    const code = await runSuite();
    printSuiteOutput();
    log(`in-editor suite: exit ${code}`);
    if (code !== 0) failed = true;
  }
  if (config.only === '' || config.only === 'suite' || config.only === 'untrusted') {
    const code = await runUntrustedSuite();
    log(`in-editor suite without Workspace Trust: exit ${code}`);
    if (code !== 0) failed = true;
  }
  if (config.only !== 'suite' && config.only !== 'untrusted') {
    const ctx = await chromium.launchPersistentContext(dir('chromium-ui'), {
      executablePath: config.chromium, headless: true, viewport: { width: 1400, height: 900 }, args: chromiumArgs,
    });
    try {
      const page = ctx.pages()[0] ?? (await ctx.newPage());
      await runScenario(page, {
        url: payloadUrl(false, config.uiWorkspace), workspace: config.uiWorkspace, screenshots: config.screenshots, log,
        userSettings: path.join(userData, 'User', 'settings.json'),
        cli: path.join(projectDir, 'dist', 'caesar.js'), env: { ...env, PATH: process.env.PATH },
      });
      log('UI scenario: passed');
      uiScenarioRan = true;
    } catch (err) {
      failed = true;
      uiScenarioRan = true;
      log(`UI scenario: FAILED: ${err.stack ?? err}`);
      const page = ctx.pages()[0];
      if (page) await page.screenshot({ path: path.join(config.screenshots, 'FAILURE.png') }).catch(() => undefined);
    } finally {
      await ctx.close();
    }
  }
} catch (err) {
  failed = true;
  log(`FAILED: ${err.stack ?? err}`);
} finally {
  try {
    process.kill(-server.pid, 'SIGTERM');
  } catch {
    /* already gone */
  }
}
writeReport(editorReport());
if (failed) {
  writeFileSync(path.join(runDir, 'code-server.log'), serverLog.join(''));
  log(`code-server output: ${path.join(runDir, 'code-server.log')}`);
}
process.exit(failed ? 1 : 0);

/** What the editor suite ran, for scripts/test.mjs's summary: both in-editor runs' tests, and the UI scenario as one. */
function editorReport() {
  const outcomes = [stateDir, path.join(runDir, 'untrusted', 'suite-state')].flatMap((folder) => {
    const file = path.join(folder, 'results.json');
    return existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) : [];
  });
  const ran = outcomes.filter((o) => o.state !== 'pending').length + (uiScenarioRan ? 1 : 0);
  const notRun = outcomes.filter((o) => o.state === 'pending').map((o) => ({ title: o.title, reason: 'pending in the editor (its log says why)' }));
  return { ran, notRun };
}

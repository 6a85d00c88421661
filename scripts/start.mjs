// `npm start`: the main job for a new user. Installs the editor into the cache when missing (Node 24 + code-server,
// the first time only: a few minutes), builds and packages the extension (once), resets the demo workspace (a real
// git repository, so tasks do not pile up across runs), installs the extension into a private code-server profile
// that opens on the Caesar view, starts the editor on 127.0.0.1 (its own logs go to a file), and delegates a first
// task to the built-in demo agent so the Caesar view and the task's timeline have something live to show.
//
//   npm start                 start and keep running (Ctrl-C stops the editor; tasks keep their own processes)
//   npm start -- --smoke      start, check the editor answers and the demo task succeeds, then stop (used by tests)
//   PORT=9000 npm start       choose the port (default: a free one)
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { editorPaths, installEditor } from './setup-editor.mjs';
import { ensureSystemPackages } from './system-packages.mjs';

const projectDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const smoke = process.argv.includes('--smoke');
const paths = editorPaths();
const stateDir = path.join(paths.cache, 'start');
const workspace = path.join(stateDir, 'demo-workspace');
const editorLog = path.join(stateDir, 'code-server.log');
// No public repository is known yet: package without one and leave README.md's relative links as they are (as
// `npm run package` does; README.md, "Publishing", says what changes once the repository is public).
const VSCE_FLAGS = ['--no-dependencies', '--allow-missing-repository', '--no-rewrite-relative-links'];
const DEMO_OBJECTIVE = 'Add a friendly greeting to CAESAR_DEMO.md';
// The demo agent asks when its objective says "ask": a person meets a question on the first start. The smoke run
// goes without one (nobody is there to answer).
const DEMO_OBJECTIVE_ASKING = `${DEMO_OBJECTIVE}; ask which greeting to use first`;

function run(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { cwd: projectDir, stdio: 'inherit', ...opts });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed (exit ${r.status ?? r.signal})`);
  return r;
}

function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
    server.on('error', reject);
  });
}

/** A fresh demo repository on every start: the tasks and worktrees of earlier runs would otherwise pile up. */
function resetWorkspace() {
  rmSync(workspace, { recursive: true, force: true });
  mkdirSync(workspace, { recursive: true });
  writeFileSync(
    path.join(workspace, 'README.md'),
    '# Demo workspace\n\nDelegate a task with "Caesar: Delegate Task" (Ctrl+Shift+P), or from a terminal:\n\n    caesar run --agent demo "Add a greeting"\n',
  );
  writeFileSync(path.join(workspace, 'hello.js'), "console.log('hello from the demo workspace');\n");
  writeFileSync(path.join(workspace, '.gitignore'), '.caesar/\n');
  const git = (...args) => run('git', ['-c', 'user.name=Caesar Demo', '-c', 'user.email=demo@example.invalid', ...args], { cwd: workspace, stdio: 'ignore' });
  git('init', '-q');
  git('add', '-A');
  git('commit', '-q', '-m', 'Demo workspace');
}

/** The private profile opens on the Caesar view and the running task's timeline, not on code-server's welcome page. */
function writeProfileSettings(userData) {
  mkdirSync(path.join(userData, 'User'), { recursive: true });
  const settings = {
    'workbench.startupEditor': 'none',
    'workbench.tips.enabled': false,
    'caesar.showOnStartup': true,
    'telemetry.telemetryLevel': 'off',
  };
  writeFileSync(path.join(userData, 'User', 'settings.json'), `${JSON.stringify(settings, null, 2)}\n`);
}

async function waitForHealth(url, timeoutMs, editor) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (editor.exitCode !== null) throw new Error(`code-server exited with ${editor.exitCode}; see ${editorLog}`);
    try {
      const res = await fetch(`${url}/healthz`);
      if (res.ok) return;
    } catch {
      /* not up yet */
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`code-server did not answer on ${url} within ${timeoutMs / 1000} s; see ${editorLog}`);
}

/**
 * The smoke run (tests, CI) starts the editor inside a loopback-only network namespace where one can be made (root):
 * the installs above need the registry, the editor must not reach anything else. Returns the exit code, or undefined
 * when no namespace can be made here (then the smoke runs as is).
 */
function smokeInNamespace() {
  if (process.env.CAESAR_START_IN_NETNS === '1') return undefined;
  const probe = spawnSync('unshare', ['-n', 'sh', '-c', 'ip link set lo up'], { stdio: 'ignore' });
  if (probe.error || probe.status !== 0) return undefined;
  const inner = spawnSync('unshare', ['-n', 'sh', '-c', 'ip link set lo up && exec "$0" "$@"', process.execPath, fileURLToPath(import.meta.url), '--smoke', '--prepared'], {
    stdio: 'inherit',
    env: { ...process.env, CAESAR_START_IN_NETNS: '1' },
  });
  return inner.status ?? 1;
}

async function main() {
  if (!process.argv.includes('--prepared')) prepareEditorAndExtension();
  if (smoke) {
    const code = smokeInNamespace();
    if (code !== undefined) {
      process.exitCode = code;
      return;
    }
  }
  await startEditor();
}

function prepareEditorAndExtension() {
  // Before anything else: the Debian packages (installed here when this user may, else the one command to run).
  ensureSystemPackages(['start']);
  // The editor itself runs in your own browser: Chromium is the tests' (scripts/system-packages.mjs).
  if (!existsSync(paths.node) || !existsSync(paths.codeServer)) {
    console.log(`1/5 installing the editor into ${paths.cache} (first run only, a few minutes)`);
    installEditor(paths);
  } else console.log(`1/5 editor already installed in ${paths.cache}`);

  // One build: `vsce package` runs the manifest's vscode:prepublish (the production bundle) itself.
  console.log('2/5 building and packaging the extension');
  mkdirSync(stateDir, { recursive: true });
  const vsix = path.join(stateDir, 'caesar.vsix');
  // vsce runs `npm run vscode:prepublish`: its npm logs go to the cache folder, not ~/.npm.
  const env = { ...process.env, npm_config_cache: path.join(paths.cache, 'npm-cache') };
  run(process.execPath, [path.join(projectDir, 'node_modules/@vscode/vsce/vsce'), 'package', ...VSCE_FLAGS, '--out', vsix], { env, stdio: ['ignore', 'ignore', 'inherit'] });
}

async function startEditor() {
  const vsix = path.join(stateDir, 'caesar.vsix');
  console.log(`3/5 demo workspace (reset): ${workspace}`);
  resetWorkspace();

  console.log('4/5 installing the extension into a private profile');
  const userData = path.join(stateDir, 'user-data');
  const extensions = path.join(stateDir, 'extensions');
  writeProfileSettings(userData);
  // Everything code-server writes stays in stateDir: its config.yaml (--config), and its logs and heartbeat, which it
  // puts under XDG_DATA_HOME (no flag moves them). The agents of this private profile's tasks see that data folder too.
  const codeServer = [paths.codeServer, '--config', path.join(stateDir, 'code-server.yaml'), '--user-data-dir', userData, '--extensions-dir', extensions];
  const env = { ...process.env, PATH: `${path.join(paths.nodeHome, 'bin')}:${process.env.PATH}`, XDG_DATA_HOME: path.join(stateDir, 'xdg-data') };
  run(paths.node, [...codeServer, '--force', '--install-extension', vsix], { env, stdio: ['ignore', 'ignore', 'inherit'] });
  const listed = spawnSync(paths.node, [...codeServer, '--list-extensions'], { env, encoding: 'utf8' }).stdout ?? '';
  if (!listed.includes('caesar-dev.caesar-vscode')) throw new Error(`the extension did not install into ${extensions}:\n${listed}`);

  const port = Number(process.env.PORT) || (await freePort());
  const url = `http://127.0.0.1:${port}`;
  console.log(`5/5 starting the editor on ${url} (its log: ${editorLog})`);
  const log = openSync(editorLog, 'w');
  const editor = spawn(
    paths.node,
    // The demo workspace is ours, made a moment ago: open it trusted (in this private profile only) so the first
    // thing a new user sees is the extension at work, not the Restricted Mode banner.
    [...codeServer, '--auth', 'none', '--bind-addr', `127.0.0.1:${port}`, '--disable-telemetry', '--disable-update-check', '--disable-workspace-trust', '--ignore-last-opened', workspace],
    { env, stdio: ['ignore', log, log] },
  );
  const stop = () => editor.kill('SIGTERM');
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  await waitForHealth(url, 60_000, editor);

  // A first task for the Tasks view; it runs under its own supervisor and outlives this script.
  const caesar = [path.join(projectDir, 'dist/caesar.js'), 'run', '--agent', 'demo', '--isolation', 'worktree', '--root', workspace];
  const demo = spawn(process.execPath, [...caesar, ...(smoke ? ['--json'] : []), smoke ? DEMO_OBJECTIVE : DEMO_OBJECTIVE_ASKING], {
    cwd: workspace,
    // Paced so a person who opens the page now still sees it work (each step ~2 s); the smoke run goes at full speed.
    env: smoke ? process.env : { ...process.env, CAESAR_DEMO_DELAY_MS: '2000' },
    stdio: smoke ? ['ignore', 'pipe', 'inherit'] : 'ignore',
    detached: !smoke,
  });
  if (smoke) {
    let out = '';
    demo.stdout.on('data', (d) => (out += d));
    const code = await new Promise((r) => demo.on('exit', r));
    stop();
    const result = JSON.parse(out);
    // The editor's own output goes to its log file, never over the address printed last.
    const logged = readFileSync(editorLog, 'utf8');
    const logOk = /HTTP server listening/i.test(logged);
    console.log(`smoke: editor answered on ${url}; demo task ${result.task_id} ended ${result.status} (exit ${code}); editor log ${logOk ? 'written' : 'MISSING'} (${editorLog})`);
    process.exitCode = code === 0 && result.status === 'succeeded' && logOk ? 0 : 1;
    return;
  }
  demo.unref();
  const caesarCmd = `node ${path.relative(process.cwd(), path.join(projectDir, 'dist/caesar.js')) || 'dist/caesar.js'}`;
  console.log(`
A demo task is running in the demo workspace; the editor opens on the Caesar view and the task's timeline.
Try next:
  - Answer the demo agent's question: its notification offers the greetings as buttons (or click the question in
    the Tasks view). It waits up to 5 minutes.
  - Review: "Review All Changes" on the finished task opens the multi-file diff; click a file for its own diff.
  - Apply (or Discard) from the task's context menu in the Tasks view.
  - Delegate your own: F1 → "Caesar: Delegate Task", type an objective, Enter, Enter.
  - From a terminal: ${caesarCmd} ps --root ${workspace}   (then answer, diff, apply, run …)
Ctrl-C stops the editor; tasks keep their own processes.

Open ${url}/?folder=${encodeURIComponent(workspace)}`);
}

main().catch((err) => {
  console.error(`npm start: ${err.message}`);
  process.exitCode = 1;
});

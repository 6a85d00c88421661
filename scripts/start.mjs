// `npm start`: the main job for a new user. Builds the extension, installs the editor into the cache when missing
// (Node 24 + code-server, the first time only: a few minutes), prepares a demo workspace (a real git repository),
// installs the extension into a private code-server profile, starts the editor on 127.0.0.1, and delegates a first
// task to the built-in demo agent so the Caesar view has something live to show.
//
//   npm start                 start and keep running (Ctrl-C stops the editor; tasks keep their own processes)
//   npm start -- --smoke      start, check the editor answers and the demo task succeeds, then stop (used by tests)
//   PORT=9000 npm start       choose the port (default: a free one)
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { editorPaths, installEditor, missingPieces } from './setup-editor.mjs';

const projectDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const smoke = process.argv.includes('--smoke');
const paths = editorPaths();
const stateDir = path.join(paths.cache, 'start');
const workspace = path.join(stateDir, 'demo-workspace');

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

function prepareWorkspace() {
  if (existsSync(path.join(workspace, '.git'))) return;
  mkdirSync(workspace, { recursive: true });
  writeFileSync(path.join(workspace, 'README.md'), '# Demo workspace\n\nDelegate a task with "Caesar: Delegate Task", or from a terminal:\n\n    caesar run --agent demo "Add a greeting"\n');
  writeFileSync(path.join(workspace, 'hello.js'), "console.log('hello from the demo workspace');\n");
  writeFileSync(path.join(workspace, '.gitignore'), '.caesar/\n');
  const git = (...args) => run('git', ['-c', 'user.name=Caesar Demo', '-c', 'user.email=demo@example.invalid', ...args], { cwd: workspace, stdio: 'ignore' });
  git('init', '-q');
  git('add', '-A');
  git('commit', '-q', '-m', 'Demo workspace');
}

async function waitForHealth(url, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    try {
      const res = await fetch(`${url}/healthz`);
      if (res.ok) return;
    } catch {
      /* not up yet */
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`code-server did not answer on ${url} within ${timeoutMs / 1000} s`);
}

async function main() {
  console.log('1/5 building the extension');
  run(process.execPath, ['esbuild.mjs']);
  if (missingPieces(paths).some((m) => !m.includes('chromium'))) {
    console.log(`2/5 installing the editor into ${paths.cache} (first run only, a few minutes)`);
    try {
      installEditor(paths);
    } catch (err) {
      // Chromium is only needed by the tests; the editor itself runs in your own browser.
      if (!String(err.message).includes('chromium')) throw err;
    }
  } else console.log('2/5 editor already installed');

  console.log(`3/5 demo workspace: ${workspace}`);
  prepareWorkspace();

  console.log('4/5 installing the extension into a private profile');
  const userData = path.join(stateDir, 'user-data');
  const extensions = path.join(stateDir, 'extensions');
  const vsix = path.join(stateDir, 'caesar.vsix');
  run(process.execPath, [path.join(projectDir, 'node_modules/@vscode/vsce/vsce'), 'package', '--no-dependencies', '--out', vsix], { stdio: ['ignore', 'ignore', 'inherit'] });
  const codeServer = [paths.codeServer, '--user-data-dir', userData, '--extensions-dir', extensions];
  const env = { ...process.env, PATH: `${path.join(paths.nodeHome, 'bin')}:${process.env.PATH}` };
  run(paths.node, [...codeServer, '--force', '--install-extension', vsix], { env, stdio: ['ignore', 'ignore', 'inherit'] });
  const listed = spawnSync(paths.node, [...codeServer, '--list-extensions'], { env, encoding: 'utf8' }).stdout ?? '';
  if (!listed.includes('caesar-dev.caesar-vscode')) throw new Error(`the extension did not install into ${extensions}:\n${listed}`);

  const port = Number(process.env.PORT) || (await freePort());
  const url = `http://127.0.0.1:${port}`;
  console.log(`5/5 starting the editor on ${url}`);
  const editor = spawn(
    paths.node,
    // The demo workspace is ours, made a moment ago: open it trusted (in this private profile only) so the first
    // thing a new user sees is the extension at work, not the Restricted Mode banner.
    [...codeServer, '--auth', 'none', '--bind-addr', `127.0.0.1:${port}`, '--disable-telemetry', '--disable-update-check', '--disable-workspace-trust', '--ignore-last-opened', workspace],
    { env, stdio: smoke ? 'ignore' : ['ignore', 'inherit', 'inherit'] },
  );
  const stop = () => editor.kill('SIGTERM');
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  await waitForHealth(url, 60_000);

  // A first task for the Tasks view; it runs under its own supervisor and outlives this script.
  const caesar = [path.join(projectDir, 'dist/caesar.js'), 'run', '--agent', 'demo', '--isolation', 'worktree', '--root', workspace];
  const demo = spawn(process.execPath, [...caesar, ...(smoke ? ['--json'] : []), 'Add a friendly greeting to CAESAR_DEMO.md'], {
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
    console.log(`smoke: editor answered on ${url}; demo task ${result.task_id} ended ${result.status} (exit ${code})`);
    process.exitCode = code === 0 && result.status === 'succeeded' ? 0 : 1;
    return;
  }
  demo.unref();
  console.log(`\nOpen ${url}/?folder=${encodeURIComponent(workspace)} in your browser, then the Caesar view in the activity bar.`);
  console.log('A demo task is already running there. Ctrl-C stops the editor.');
}

main().catch((err) => {
  console.error(`npm start: ${err.message}`);
  process.exitCode = 1;
});

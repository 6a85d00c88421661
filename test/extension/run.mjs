// The editor suite, as scripts/test.mjs runs it: builds the extension and the in-editor test bundle, then runs
// test/extension/driver.mjs inside a loopback-only network namespace (`unshare -n`). The driver starts code-server
// (VS Code 1.139.1), runs the in-editor mocha suite through the `payload` URL, then the Playwright UI scenario.
// Exit: 0 all passed, 1 a failure, 77 when this machine cannot run it, with "NOT RUN: <reason>" (under CI: 1).
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { editorPaths, installEditor, missingPieces } from '../../scripts/setup-editor.mjs';
import { buildExtensionTests, projectDir } from './build.mjs';
import { writeFinishedTasks } from './fixtures/finished-tasks.mjs';
import { writeMultiRootWorkspace } from './fixtures/multi-root.mjs';
import { EDITOR_NARROWING_SWITCHES, refuseNarrowingUnderCi, underCi } from '../support/ci-guard.mjs';
import { suiteNotRun } from '../support/not-run.mjs';

// Under CI=true nothing may run part of the suite only: refused before anything is built or started.
refuseNarrowingUnderCi(EDITOR_NARROWING_SWITCHES);

const skip = suiteNotRun;

// 1. Can this machine run a real editor?
const probe = spawnSync('unshare', ['-n', 'sh', '-c', 'ip link set lo up'], { encoding: 'utf8' });
if (probe.error || probe.status !== 0) {
  skip(`cannot create a loopback-only network namespace (unshare -n + ip): ${probe.error?.message ?? probe.stderr.trim()}`);
}
const paths = editorPaths();
let missing = missingPieces(paths);
if (missingPieces(paths, { browser: false }).length && process.env.CAESAR_NO_EDITOR_INSTALL !== '1') {
  try {
    installEditor(paths);
  } catch (err) {
    skip(`could not install the editor: ${err.message}`);
  }
  missing = missingPieces(paths);
}
if (missing.length) skip(missing.join('; '));

// 2. Build the extension and the test bundle (one file per suite, so mocha can load them one by one).
const build = spawnSync(process.execPath, ['esbuild.mjs', '--test-seams'], { cwd: projectDir, stdio: 'inherit' });
if (build.status !== 0) {
  console.error('FAILED: the extension build failed');
  process.exit(1);
}
await buildExtensionTests();

// 3. A fresh workspace: a real git repository with one commit, outside the project.
const runDir = mkdtempSync(path.join(tmpdir(), 'caesar-editor-'));
function makeRepo(dir) {
  mkdirSync(dir);
  const git = (...args) => {
    const r = spawnSync('git', args, { cwd: dir, encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`git ${args.join(' ')}: ${r.stderr}`);
  };
  git('init', '-q', '-b', 'main');
  git('config', 'user.email', 'test@example.invalid');
  git('config', 'user.name', 'Caesar Test');
  writeFileSync(path.join(dir, 'README.md'), '# Test workspace\n\nA repository the editor tests delegate to.\n');
  writeFileSync(path.join(dir, '.gitignore'), '.caesar/\n');
  git('add', '-A');
  git('commit', '-q', '-m', 'initial');
  return dir;
}
// One for the in-editor suite, one (still empty of tasks) for the UI scenario.
const workspace = makeRepo(path.join(runDir, 'workspace'));
const uiWorkspace = makeRepo(path.join(runDir, 'workspace-ui'));
writeFinishedTasks(workspace);
// The untrusted run (suite-untrusted/): a .code-workspace of two folders, opened without Workspace Trust.
const untrustedWorkspace = writeMultiRootWorkspace(runDir, makeRepo);

const config = {
  projectDir,
  runDir,
  workspace,
  uiWorkspace,
  untrustedWorkspace,
  node24: paths.node,
  codeServer: paths.codeServer,
  chromium: paths.chromium,
  screenshots: path.join(projectDir, 'test-results', 'screenshots'),
  only: process.env.CAESAR_EDITOR_ONLY ?? '', // "suite", "untrusted" or "ui" to run one part while developing
  ci: underCi(), // the driver keeps CI out of the editor's environment, and tells the in-editor runner instead
};

// 4. Everything that opens a port runs in the namespace: code-server, chromium, and the agents the tests start.
const driver = spawnSync(
  'unshare',
  ['-n', 'sh', '-c', 'ip link set lo up && exec "$0" "$@"', process.execPath, path.join(projectDir, 'test', 'extension', 'driver.mjs'), JSON.stringify(config)],
  { stdio: 'inherit', cwd: projectDir },
);
if (driver.status === 0 && process.env.CAESAR_KEEP_RUN_DIR !== '1') rmSync(runDir, { recursive: true, force: true });
else console.log(`run directory kept for inspection: ${runDir}`);
process.exit(driver.status ?? 1);

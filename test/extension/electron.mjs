// The same in-editor suite under @vscode/test-electron, for a machine that can download VS Code (a contributor's
// laptop; not these sandboxes, which reach only 127.0.0.1 — there, run test/extension/run.mjs). The window-reload
// suite runs only under code-server (see index.ts); here it is reported as not run.
// Usage: node test/extension/electron.mjs [vscodeVersion]
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { runTests } from '@vscode/test-electron';
import { buildExtensionTests, prepareTestHome, projectDir } from './build.mjs';
import { writeFinishedTasks } from './fixtures/finished-tasks.mjs';

const build = spawnSync(process.execPath, ['esbuild.mjs', '--test-seams'], { cwd: projectDir, stdio: 'inherit' });
if (build.status !== 0) process.exit(1);
const extensionTestsPath = await buildExtensionTests();

const runDir = mkdtempSync(path.join(tmpdir(), 'caesar-electron-'));
const { binDir, home } = prepareTestHome(runDir);
const workspace = path.join(runDir, 'workspace');
mkdirSync(workspace);
const git = (...args) => spawnSync('git', args, { cwd: workspace, stdio: 'inherit' });
git('init', '-q', '-b', 'main');
writeFileSync(path.join(workspace, 'README.md'), '# Test workspace\n\nA repository the editor tests delegate to.\n');
writeFileSync(path.join(workspace, '.gitignore'), '.caesar/\n');
git('add', '-A');
git('-c', 'user.email=test@example.invalid', '-c', 'user.name=Caesar Test', 'commit', '-q', '-m', 'initial');
writeFinishedTasks(workspace);

try {
  await runTests({
    version: process.argv[2] ?? 'stable',
    extensionDevelopmentPath: projectDir,
    extensionTestsPath,
    launchArgs: [workspace, '--disable-extensions', '--disable-workspace-trust'],
    extensionTestsEnv: { HOME: home, CAESAR_TEST_BIN_DIR: binDir },
  });
} catch (err) {
  console.error(`in-editor tests failed: ${err instanceof Error ? err.message : err}`);
  process.exit(1);
}

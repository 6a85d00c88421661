// The timeline's figures in the real editor: runs the editor suite's runner (test/extension/run.mjs: code-server and
// Chromium in a loopback-only namespace, test/extension/driver.mjs) with the UI scenario reduced to its timeline step
// (test/e2e/timeline.mjs) at 100k and 1M events: first screen, jumps to far rows, the webview's JS heap, and the XSS
// proof's counts. Prints the figures as one JSON line on stdout (bench/timeline.bench.ts reads it). Skips, printing
// {"skipped": reason}, when the editor cache is not installed: a benchmark never installs it.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { editorPaths, missingPieces } from '../scripts/setup-editor.mjs';

const projectDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const figuresFile = path.join(projectDir, 'test-results', 'timeline-figures.json');

const missing = missingPieces(editorPaths());
if (missing.length) {
  console.log(JSON.stringify({ skipped: missing.join('; ') }));
  process.exit(0);
}
rmSync(figuresFile, { force: true });
// A benchmark runs part of the editor suite on purpose: not under CI's rules (run.mjs refuses narrowing under CI=true).
const run = spawnSync(process.execPath, [path.join(projectDir, 'test', 'extension', 'run.mjs')], {
  cwd: projectDir,
  env: { ...process.env, CI: '', CAESAR_EDITOR_ONLY: 'ui', CAESAR_UI_STEPS: 'timeline', CAESAR_TIMELINE_BENCH: '1', CAESAR_NO_EDITOR_INSTALL: '1' },
  encoding: 'utf8',
  maxBuffer: 64 * 1024 * 1024,
});
const xss = /XSS proof: .*/.exec(run.stdout ?? '')?.[0];
if (run.status !== 0 || !existsSync(figuresFile)) {
  console.error(run.stdout, run.stderr);
  console.log(JSON.stringify({ failed: `the editor run exited ${run.status}` }));
  process.exit(1);
}
console.log(JSON.stringify({ ...JSON.parse(readFileSync(figuresFile, 'utf8')), xss }));

/**
 * The editor's own figures, from the in-editor suite run in a real VS Code (code-server in headless Chromium, in a
 * loopback-only namespace: test/extension/run.mjs), reduced to the tests that record them: activation (bundle
 * evaluation and `activate()`), the Tasks tree with 200 tasks (all listed, one change shown, all gone), a 100k-event
 * task's timeline (first rows on screen) and an untouched timeline reused for the next task. Each test records its
 * figures (test/extension/suite/helpers.ts `record`) into test-results/editor-figures.jsonl, read here. There is no
 * floor to measure beside these in the same run: VS Code's own webview and tree machinery is the floor, and the
 * timeline's share of it is broken down in `panelTiming` (open → page ready → first rows posted → rendered).
 * Skipped when the editor cache is not installed: a benchmark never installs it.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import * as path from 'node:path';
import { loadNote } from './lib';

const REPO_ROOT = path.resolve(__dirname, '..');
const FIGURES = path.join(REPO_ROOT, 'test-results', 'editor-figures.jsonl');
const TESTS = ['activates in the workspace', 'lists 200 tasks at once', 'reuses an untouched timeline', 'opens a 100k-event task'];

/** Flattens `{ name, value }` records: numbers as they are, objects one level down, arrays joined. */
function flatten(prefix: string, value: unknown, out: Record<string, number | string>): void {
  if (typeof value === 'number' || typeof value === 'string') out[prefix] = value;
  else if (Array.isArray(value)) out[prefix] = value.join(' ');
  else if (value && typeof value === 'object') for (const [key, inner] of Object.entries(value)) flatten(`${prefix}_${key}`, inner, out);
}

export async function benchEditor(): Promise<Record<string, number | string>> {
  const { editorPaths, missingPieces } = (await import(path.join(REPO_ROOT, 'scripts', 'setup-editor.mjs'))) as {
    editorPaths: () => unknown;
    missingPieces: (paths: unknown) => string[];
  };
  const missing = missingPieces(editorPaths());
  if (missing.length) return { editor: `skipped: ${missing.join('; ')}` };
  const out: Record<string, number | string> = { load_before: loadNote() };
  rmSync(FIGURES, { force: true });
  // A benchmark runs part of the editor suite on purpose: not under CI's rules (run.mjs refuses narrowing under CI=true).
  const run = spawnSync(process.execPath, [path.join(REPO_ROOT, 'test', 'extension', 'run.mjs')], {
    cwd: REPO_ROOT,
    env: { ...process.env, CI: '', CAESAR_EDITOR_ONLY: 'suite', CAESAR_TEST_GREP: TESTS.join('|'), CAESAR_NO_EDITOR_INSTALL: '1' },
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  if (run.status !== 0 || !existsSync(FIGURES)) {
    console.error(run.stdout, run.stderr);
    return { ...out, editor: `failed: the editor run exited ${run.status}` };
  }
  const seen = new Map<string, number>();
  for (const line of readFileSync(FIGURES, 'utf8').trim().split('\n')) {
    const { name, value } = JSON.parse(line) as { name: string; value: unknown };
    const n = (seen.get(name) ?? 0) + 1;
    seen.set(name, n);
    flatten(n === 1 ? name : `${name}_${n}`, value, out);
  }
  out.load_after = loadNote();
  return out;
}

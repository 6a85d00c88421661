import { strict as assert } from 'node:assert';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { ensureFreshDist, staleDistReason } from '../../support/dist-freshness.mjs';
import { ensureBuilt } from '../../cli/follow-helpers';

/*
 * test/support/dist-freshness.mjs, which every test that runs the built CLI asks first (follow-helpers' ensureBuilt,
 * the shim test, the live suite's runner): on a project folder of its own whose esbuild.mjs is a real script that
 * writes dist/ and logs each run, with file times set to say which side is older.
 */

const OUTPUTS = ['dist/caesar.js', 'dist/demo-agent.js'];

function project(): { root: string; builds: () => number; touch: (file: string, secondsAgo: number) => void } {
  const root = mkdtempSync(path.join(tmpdir(), 'caesar-dist-'));
  mkdirSync(path.join(root, 'src', 'engine'), { recursive: true });
  writeFileSync(path.join(root, 'src', 'engine', 'a.ts'), 'export const a = 1;\n');
  writeFileSync(
    path.join(root, 'esbuild.mjs'),
    [
      "import { appendFileSync, mkdirSync, writeFileSync } from 'node:fs';",
      "if (process.env.FAIL_BUILD) { console.error('esbuild: syntax error in src/engine/a.ts'); process.exit(1); }",
      "mkdirSync('dist', { recursive: true });",
      "for (const f of ['dist/caesar.js', 'dist/demo-agent.js']) writeFileSync(f, '// built\\n');",
      "appendFileSync('builds.log', 'built\\n');",
    ].join('\n'),
  );
  const touch = (file: string, secondsAgo: number) => {
    const at = new Date(Date.now() - secondsAgo * 1000);
    utimesSync(path.join(root, file), at, at);
  };
  touch('esbuild.mjs', 3600);
  touch('src/engine/a.ts', 3600);
  const builds = () => (existsSync(path.join(root, 'builds.log')) ? readFileSync(path.join(root, 'builds.log'), 'utf8').split('\n').filter(Boolean).length : 0);
  return { root, builds, touch };
}

describe('tests that run dist/: a missing or stale build is rebuilt or refused', () => {
  let p: ReturnType<typeof project>;
  beforeEach(() => {
    p = project();
  });
  afterEach(() => rmSync(p.root, { recursive: true, force: true }));

  it('a missing dist/ is built', () => {
    assert.equal(staleDistReason(p.root, OUTPUTS), 'dist/caesar.js, dist/demo-agent.js missing');
    assert.equal(ensureFreshDist(p.root, { outputs: OUTPUTS }), 'rebuilt');
    assert.equal(p.builds(), 1);
    assert.equal(staleDistReason(p.root, OUTPUTS), undefined);
  });

  it('a dist/ older than a source file is named stale, with both files, and rebuilt; a fresh one is left alone', () => {
    ensureFreshDist(p.root, { outputs: OUTPUTS });
    for (const output of OUTPUTS) p.touch(output, 120);
    p.touch('src/engine/a.ts', 60);
    assert.match(staleDistReason(p.root, OUTPUTS) ?? '', /^dist\/(caesar|demo-agent)\.js \(built .*\) is older than src\/engine\/a\.ts \(changed .*\)$/);
    assert.equal(ensureFreshDist(p.root, { outputs: OUTPUTS }), 'rebuilt');
    assert.equal(p.builds(), 2);
    const built = statSync(path.join(p.root, 'dist/caesar.js')).mtimeMs;
    assert.ok(built >= statSync(path.join(p.root, 'src/engine/a.ts')).mtimeMs);
    assert.equal(ensureFreshDist(p.root, { outputs: OUTPUTS }), 'fresh');
    assert.equal(p.builds(), 2, 'a fresh dist/ is not rebuilt');
  });

  it('an edit to the build script itself makes dist/ stale too', () => {
    ensureFreshDist(p.root, { outputs: OUTPUTS });
    for (const output of OUTPUTS) p.touch(output, 120);
    p.touch('esbuild.mjs', 10);
    assert.match(staleDistReason(p.root, OUTPUTS) ?? '', /is older than esbuild\.mjs/);
  });

  it('refused with a clear message where no rebuild is wanted, and a failing rebuild says why', () => {
    ensureFreshDist(p.root, { outputs: OUTPUTS });
    for (const output of OUTPUTS) p.touch(output, 120);
    p.touch('src/engine/a.ts', 60);
    assert.throws(() => ensureFreshDist(p.root, { outputs: OUTPUTS, rebuild: false }), /^Error: dist\/ is stale: .* is older than src\/engine\/a\.ts .*Run `npm run build` first\.$/);
    process.env.FAIL_BUILD = '1';
    try {
      assert.throws(() => ensureFreshDist(p.root, { outputs: OUTPUTS }), /rebuilding it failed: esbuild: syntax error in src\/engine\/a\.ts/);
    } finally {
      delete process.env.FAIL_BUILD;
    }
    assert.ok(staleDistReason(p.root, OUTPUTS), 'still stale after the failed build: the next test asks again');
  });
});

describe("the project's own dist/, as the CLI tests get it", () => {
  it("follow-helpers' ensureBuilt leaves dist/ built from the current sources", function () {
    this.timeout(180_000);
    ensureBuilt();
    assert.equal(staleDistReason(path.resolve(__dirname, '..', '..', '..')), undefined);
  });
});

import { strict as assert } from 'node:assert';
import { existsSync, lstatSync, readFileSync, readlinkSync } from 'node:fs';
import * as path from 'node:path';
import { detectWorkshop, materialize, SetupError, workshopFinding, WorkshopPathError } from '../../../src/engine/git/workshop';
import { worktreeDiff } from '../../../src/engine/git/reconcile';
import { createWorktree } from '../../../src/engine/git/worktree';
import { isExcluded } from '../../../src/engine/git/rel-path';
import { cleanupTemp, makeRepo, tempDir, writeFiles } from './helpers';

let counter = 0;
async function setupRepo(files: Record<string, string> = {}) {
  const repo = makeRepo({ '.gitignore': '.caesar/\nnode_modules/\n.env\ncache/\nshared/\nboth/\n', 'tracked.txt': 't\n', ...files });
  const wt = await createWorktree({ gitRoot: repo, id: `t_ws${++counter}` });
  return { repo, wt };
}

const noSetup = { setup: [] as string[] };

describe('engine/git/git: workshop materialization', () => {
  afterEach(cleanupTemp);

  it('copies ignored paths, links with absolute symlinks, and skips absent/tracked/not-ignored/already-present', async () => {
    const { repo, wt } = await setupRepo();
    writeFiles(repo, {
      'node_modules/pkg/index.js': 'module\n',
      '.env': 'SECRET=1\n',
      'shared/big.bin': 'shared\n',
      'both/x': 'x\n',
      'not-ignored.txt': 'visible\n',
    });
    const result = await materialize({
      workspace: repo,
      worktree: wt.path,
      copy: ['node_modules/', '.env', 'missing', 'tracked.txt', 'not-ignored.txt', 'both'],
      link: ['shared', 'both'],
      ...noSetup,
    });
    assert.deepEqual(result.placed.map((p) => [p.path, p.kind]), [['node_modules', 'copy'], ['.env', 'copy'], ['both', 'copy'], ['shared', 'link']]);
    assert.deepEqual(result.skipped.map((s) => [s.path, s.reason]), [
      ['missing', 'absent'],
      ['tracked.txt', 'tracked'],
      ['not-ignored.txt', 'not-ignored'],
      ['both', 'already-present'],
    ]);
    assert.deepEqual(result.excluded_paths, ['node_modules', '.env', 'both', 'shared']);
    assert.equal(readFileSync(path.join(wt.path, 'node_modules', 'pkg', 'index.js'), 'utf8'), 'module\n');
    assert.equal(lstatSync(path.join(wt.path, 'node_modules')).isSymbolicLink(), false);
    assert.equal(readFileSync(path.join(wt.path, '.env'), 'utf8'), 'SECRET=1\n');
    assert.equal(readlinkSync(path.join(wt.path, 'shared')), path.join(repo, 'shared'));
    assert.equal(lstatSync(path.join(wt.path, 'both')).isSymbolicLink(), false, 'copy beats link');
    assert.equal(existsSync(path.join(wt.path, 'not-ignored.txt')), false);

    const low = result.findings.filter((f) => f.severity === 'low');
    assert.deepEqual(low.map((f) => [f.title, f.file]), [
      ['Path not materialized in the worktree', 'missing'],
      ['Path not materialized in the worktree', 'tracked.txt'],
      ['Path not materialized in the worktree', 'not-ignored.txt'],
      ['Path not materialized in the worktree', 'both'],
    ]);
    assert.match(low[2]?.detail ?? '', /\.gitignore/);
    const info = result.findings.filter((f) => f.severity === 'info');
    assert.equal(info.length, 1);
    assert.equal(info[0]?.title, 'Paths shared with the workspace');
    assert.match(info[0]?.detail ?? '', /shared/);

    // The placed paths never reach the diff.
    const diff = await worktreeDiff(wt.path, wt.base_ref, result.excluded_paths);
    assert.deepEqual(diff.files, []);
  });

  it('refuses every invalid path before placing anything', async () => {
    const { repo, wt } = await setupRepo();
    writeFiles(repo, { 'node_modules/a': 'a' });
    for (const bad of ['/etc', 'C:\\Windows', 'a/../../b', '.git/config', '.caesar/tasks', '', './']) {
      await assert.rejects(
        materialize({ workspace: repo, worktree: wt.path, copy: ['node_modules', bad], link: [], ...noSetup }),
        (error: unknown) => error instanceof WorkshopPathError && error.message.includes(JSON.stringify(bad)),
        `accepted ${JSON.stringify(bad)}`,
      );
    }
    assert.equal(existsSync(path.join(wt.path, 'node_modules')), false);
  });

  it('maps a workspace in a subfolder of the repository to the same subfolder of the worktree', async () => {
    const { repo, wt } = await setupRepo({ 'pkg/package.json': '{}' });
    writeFiles(repo, { 'pkg/node_modules/m.js': 'm\n' });
    const result = await materialize({ workspace: path.join(repo, 'pkg'), worktree: wt.path, copy: ['node_modules'], link: [], ...noSetup });
    assert.deepEqual(result.excluded_paths, ['pkg/node_modules']);
    assert.ok(existsSync(path.join(wt.path, 'pkg', 'node_modules', 'm.js')));
  });

  it('runs setup commands in order in the worktree through /bin/sh', async () => {
    const { repo, wt } = await setupRepo();
    await materialize({ workspace: repo, worktree: wt.path, copy: [], link: [], setup: ['echo first > order.txt', 'echo "$PWD" >> order.txt'] });
    const lines = readFileSync(path.join(wt.path, 'order.txt'), 'utf8').trim().split('\n');
    assert.equal(lines[0], 'first');
    assert.equal(path.resolve(lines[1] ?? ''), path.resolve(wt.path));
  });

  it('stops at the first failing setup command with its exit code, output tail and a remedy', async () => {
    const { repo, wt } = await setupRepo();
    const failing = `i=0; while [ $i -lt 2000 ]; do echo "noise line $i"; i=$((i+1)); done; echo "the real cause" >&2; exit 7`;
    const error = await materialize({ workspace: repo, worktree: wt.path, copy: [], link: [], setup: ['true', failing, 'touch never-ran'] }).then(
      () => undefined,
      (e: unknown) => e,
    );
    assert.ok(error instanceof SetupError);
    assert.equal(error.command, failing);
    assert.equal(error.exit_code, 7);
    assert.ok(error.output.length <= 4000);
    assert.match(error.output, /the real cause\n$/);
    assert.doesNotMatch(error.output, /noise line 0\n/);
    assert.match(error.message, /exit code 7/);
    assert.match(error.message, /Remedy: /);
    assert.equal(existsSync(path.join(wt.path, 'never-ran')), false);
  });

  it('a cancel stops a running setup command', async () => {
    const { repo, wt } = await setupRepo();
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 200);
    const error = await materialize({ workspace: repo, worktree: wt.path, copy: [], link: [], setup: ['sleep 30'], signal: controller.signal }).then(
      () => undefined,
      (e: unknown) => e,
    );
    assert.ok(error instanceof SetupError && error.cancelled);
  });

  it('exclusion uses prefix semantics by segment', () => {
    assert.equal(isExcluded('node_modules/x/y.js', ['node_modules/']), true);
    assert.equal(isExcluded('node_modules', ['./node_modules']), true);
    assert.equal(isExcluded('node_modules-old/y.js', ['node_modules']), false);
    assert.equal(isExcluded('src/node_modules/z', ['node_modules']), false);
  });
});

describe('engine/git/git: workshop detection', () => {
  afterEach(cleanupTemp);

  it('picks the most specific marker first (pnpm before npm) and adds ignored untracked .env files', async () => {
    const repo = makeRepo({ '.gitignore': '.env\n.env.local\n', 'package.json': '{}', 'package-lock.json': '{}', 'pnpm-lock.yaml': '' });
    writeFiles(repo, { '.env': 'A=1', '.env.local': 'B=2' });
    assert.deepEqual(await detectWorkshop(repo), {
      marker: 'pnpm-lock.yaml',
      copy: ['node_modules', '.env', '.env.local'],
      setup: ['pnpm install --frozen-lockfile --prefer-offline'],
    });
  });

  it('follows the table for npm, cargo, poetry and go, and skips .env files that are tracked or not ignored', async () => {
    const npm = makeRepo({ 'package.json': '{}', 'package-lock.json': '{}', '.env': 'tracked' });
    assert.deepEqual(await detectWorkshop(npm), { marker: 'package-lock.json', copy: ['node_modules'], setup: ['npm ci'] });
    const cargo = makeRepo({ 'Cargo.toml': '' });
    writeFiles(cargo, { '.env': 'not ignored' });
    assert.deepEqual(await detectWorkshop(cargo), { marker: 'Cargo.toml', copy: ['target'], setup: [] });
    const poetry = makeRepo({ 'poetry.lock': '', 'pyproject.toml': '' });
    assert.deepEqual(await detectWorkshop(poetry), { marker: 'poetry.lock', copy: ['.venv'], setup: ['poetry install'] });
    assert.equal(await detectWorkshop(makeRepo({ 'go.mod': 'module x' })), undefined);
    assert.equal(await detectWorkshop(makeRepo()), undefined);
    assert.equal(await detectWorkshop(tempDir()), undefined);
  });

  it('workshopFinding names the paths and the suggested setup', () => {
    const finding = workshopFinding({ marker: 'yarn.lock', copy: ['node_modules'], setup: ['yarn install --immutable'] });
    assert.equal(finding.severity, 'low');
    assert.equal(finding.title, 'Worktree without a workshop');
    assert.match(finding.detail, /node_modules/);
    assert.match(finding.detail, /yarn install --immutable/);
  });
});

import { strict as assert } from 'node:assert';
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { FIXTURE_AGENT, buildCli, git, makeRepo } from '../engine/runtime/helpers';

/*
 * Issue 22, item 1: what an agent plants in the SHARED git dir (from its worktree, `git config` and `.git/hooks/`
 * are the common dir's) never runs in Caesar's own git processes. Each vector is planted through the first task's
 * worktree, shown live with the user's own `git` (the control: the marker appears), then driven through the real
 * commands that run git: `caesar diff`, `caesar apply`, the next task's `caesar run` (its supervisor and its worktree
 * creation) and `caesar gc`. Every planted program appends its name to a marker file that must stay absent.
 */

interface Scene {
  repo: string;
  home: string;
  markers: string;
  env: NodeJS.ProcessEnv;
}

const FIXTURE_TOML = `[[agent]]\nid = "fixture"\nbin = "${process.execPath}"\nargs = ["${FIXTURE_AGENT}", "--objective={{prompt}}"]\n`;

function scene(files: Record<string, string> = {}): Scene {
  const home = realpathSync(mkdtempSync(path.join(tmpdir(), 'caesar-git-planted-home-')));
  mkdirSync(path.join(home, '.config', 'caesar'), { recursive: true });
  writeFileSync(path.join(home, '.config', 'caesar', 'config.toml'), FIXTURE_TOML);
  writeFileSync(path.join(home, '.gitconfig'), '');
  const markers = path.join(home, 'ran.log');
  const env = { ...process.env, HOME: home, GIT_CONFIG_GLOBAL: path.join(home, '.gitconfig'), CAESAR_KILL_GRACE_MS: '500', NO_COLOR: '' };
  return { repo: makeRepo({ 'notes.txt': 'line one\n', ...files }), home, markers, env };
}

/** A program that records that it ran (and passes stdin through, so as a filter it changes nothing by itself). */
function plantedProgram(s: Scene, name: string, body = 'cat'): string {
  const file = path.join(s.home, `planted-${name}.sh`);
  writeFileSync(file, `#!/bin/sh\necho ${name} >> '${s.markers}'\n${body}\n`);
  chmodSync(file, 0o755);
  return file;
}

function ran(s: Scene): string[] {
  return existsSync(s.markers) ? readFileSync(s.markers, 'utf8').split('\n').filter(Boolean) : [];
}

function cli(s: Scene, args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [process.env.CAESAR_CLI_JS!, ...args], { cwd: s.repo, env: s.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** `caesar run` of a fixture task writing `files` in a worktree; the task's id and worktree. */
async function runTask(s: Scene, files: Record<string, string>): Promise<{ id: string; worktree: string }> {
  const run = await cli(s, ['run', 'edit', '--agent', 'fixture', '--isolation', 'worktree', '--context', JSON.stringify({ mode: 'success', files }), '--json']);
  assert.equal(run.code, 0, run.stderr + run.stdout);
  const id = (JSON.parse(run.stdout) as { task_id: string }).task_id;
  return { id, worktree: path.join(s.repo, '.caesar', 'wt', id) };
}

/** Runs git as the user would (no option of Caesar's): the planted vector must be live, or the test proves nothing. */
function userGit(s: Scene, cwd: string, ...args: string[]): void {
  spawnSync('git', args, { cwd, env: s.env, stdio: 'ignore' });
}

/** The commands of the issue, in a user's order: review and apply the first task, run the next one, collect. */
async function driveCaesar(s: Scene, first: { id: string }): Promise<void> {
  const diff = await cli(s, ['diff', first.id]);
  assert.equal(diff.code, 0, diff.stderr);
  const apply = await cli(s, ['apply', first.id]);
  assert.equal(apply.code, 0, apply.stderr + apply.stdout);
  await runTask(s, { 'second.txt': 'second task\n' });
  const gc = await cli(s, ['gc']);
  assert.equal(gc.code, 0, gc.stderr);
}

describe('reliability: nothing planted in the shared git dir runs in Caesar\'s git calls (issue 22)', function () {
  this.timeout(120_000);
  const scenes: Scene[] = [];
  const make = (files?: Record<string, string>) => {
    const s = scene(files);
    scenes.push(s);
    return s;
  };
  before(buildCli);
  after(() => {
    for (const s of scenes) {
      rmSync(s.repo, { recursive: true, force: true });
      rmSync(s.home, { recursive: true, force: true });
    }
  });

  it('core.fsmonitor: the user\'s git status runs it, no Caesar command does', async () => {
    const s = make();
    const first = await runTask(s, { 'notes.txt': 'line one\nline two\n' });
    git(first.worktree, 'config', 'core.fsmonitor', plantedProgram(s, 'fsmonitor', 'exit 1'));
    userGit(s, s.repo, 'status');
    assert.ok(ran(s).includes('fsmonitor'), 'control: the planted fsmonitor is live');
    rmSync(s.markers);
    await driveCaesar(s, first);
    assert.deepEqual(ran(s), []);
  });

  it('hooks of every kind Caesar\'s commands trigger, planted in the common dir\'s hooks/ and through core.hooksPath', async () => {
    const s = make();
    const first = await runTask(s, { 'notes.txt': 'line one\nline two\n' });
    const commonHooks = path.resolve(first.worktree, git(first.worktree, 'rev-parse', '--git-common-dir'), 'hooks');
    const planted = path.join(s.home, 'planted-hooks');
    mkdirSync(planted);
    const kinds = ['reference-transaction', 'post-checkout', 'post-index-change', 'pre-auto-gc', 'post-rewrite', 'post-commit', 'pre-commit', 'post-merge', 'pre-applypatch'];
    for (const kind of kinds) {
      const program = plantedProgram(s, `hook-${kind}`, 'exit 0');
      writeFileSync(path.join(commonHooks, kind), readFileSync(program));
      chmodSync(path.join(commonHooks, kind), 0o755);
    }
    userGit(s, s.repo, 'worktree', 'add', '-q', '--detach', path.join(s.home, 'control-wt'), 'HEAD');
    const control = ran(s);
    for (const kind of ['reference-transaction', 'post-checkout']) assert.ok(control.includes(`hook-${kind}`), `control: ${kind} is live (${control.join(', ')})`);
    rmSync(s.markers);
    await driveCaesar(s, first);
    assert.deepEqual(ran(s), [], 'hooks in the common dir');
    // The same hooks through a planted core.hooksPath (a folder of the agent's choosing).
    for (const kind of kinds) writeFileSync(path.join(planted, kind), readFileSync(path.join(commonHooks, kind)), { mode: 0o755 });
    rmSync(commonHooks, { recursive: true });
    git(s.repo, 'config', 'core.hooksPath', planted);
    const third = await runTask(s, { 'third.txt': 'third task\n' });
    await driveCaesar(s, third);
    assert.deepEqual(ran(s), [], 'hooks through core.hooksPath');
  });

  /** A clean/smudge filter that adds a line: what git would store or check out differs from the file. */
  function plantFilter(s: Scene, worktree: string, name: string): void {
    git(worktree, 'config', `filter.${name}.clean`, plantedProgram(s, `${name}-clean`, 'cat; echo CLEANED-BY-PLANTED-FILTER'));
    git(worktree, 'config', `filter.${name}.smudge`, plantedProgram(s, `${name}-smudge`, 'cat; echo SMUDGED-BY-PLANTED-FILTER'));
    git(worktree, 'config', `filter.${name}.required`, 'true');
  }

  async function assertFilterNeverRuns(s: Scene, first: { id: string; worktree: string }): Promise<void> {
    const diff = await cli(s, ['diff', first.id]);
    assert.equal(diff.code, 0, diff.stderr);
    assert.doesNotMatch(diff.stdout, /PLANTED-FILTER/);
    const apply = await cli(s, ['apply', first.id]);
    assert.equal(apply.code, 0, apply.stderr + apply.stdout);
    // What was reviewed is what landed: the agent's file, byte for byte, with no line of the filter's.
    assert.equal(readFileSync(path.join(s.repo, 'notes.txt'), 'utf8'), 'line one\nline two\n');
    assert.match(diff.stdout, /\+line two/);
    await runTask(s, { 'second.txt': 'second task\n' });
    assert.equal((await cli(s, ['gc'])).code, 0);
    assert.deepEqual(ran(s), []);
  }

  it('a smudge/clean filter in the shared config selected by info/attributes: never runs, apply writes what diff showed', async () => {
    const s = make();
    const first = await runTask(s, { 'notes.txt': 'line one\nline two\n' });
    plantFilter(s, first.worktree, 'planted');
    const common = path.resolve(first.worktree, git(first.worktree, 'rev-parse', '--git-common-dir'));
    mkdirSync(path.join(common, 'info'), { recursive: true });
    writeFileSync(path.join(common, 'info', 'attributes'), '*.txt filter=planted\n');
    userGit(s, s.repo, 'diff', 'HEAD', '--', 'notes.txt');
    userGit(s, first.worktree, 'diff', 'HEAD');
    assert.ok(ran(s).includes('planted-clean'), 'control: the planted clean filter is live');
    rmSync(s.markers);
    await assertFilterNeverRuns(s, first);
  });

  it('a filter in the shared config selected by a committed .gitattributes (a cloned repository\'s)', async () => {
    const s = make({ '.gitattributes': '*.txt filter=lfsish\n' });
    const first = await runTask(s, { 'notes.txt': 'line one\nline two\n' });
    plantFilter(s, first.worktree, 'lfsish');
    userGit(s, first.worktree, 'diff', 'HEAD');
    assert.ok(ran(s).includes('lfsish-clean'), 'control: the planted clean filter is live');
    rmSync(s.markers);
    await assertFilterNeverRuns(s, first);
  });

  it('a filter the user defined in the GLOBAL config still runs (git-lfs keeps working), even when the repository redefines it', async () => {
    const s = make();
    writeFileSync(
      path.join(s.home, '.gitconfig'),
      `[filter "upper"]\n\tsmudge = ${plantedProgram(s, 'user-smudge', "tr 'a-z' 'A-Z'")}\n\tclean = cat\n\trequired = true\n`,
    );
    git(s.repo, 'config', 'filter.upper.smudge', plantedProgram(s, 'planted-smudge', 'cat'));
    writeFileSync(path.join(s.repo, '.gitattributes'), '*.md filter=upper\n');
    writeFileSync(path.join(s.repo, 'shout.md'), 'quiet words\n');
    git(s.repo, 'add', '-A');
    git(s.repo, 'commit', '-q', '-m', 'attributes');
    rmSync(s.markers, { force: true });
    const first = await runTask(s, { 'other.txt': 'x\n' });
    assert.equal(readFileSync(path.join(first.worktree, 'shout.md'), 'utf8'), 'QUIET WORDS\n', "the user's smudge filter checked the file out");
    assert.ok(ran(s).includes('user-smudge'));
    assert.ok(!ran(s).includes('planted-smudge'), "the repository's redefinition never ran");
  });

  it('diff.external and a textconv/command diff driver (info/attributes): the user\'s git diff runs them, Caesar never', async () => {
    const s = make();
    const first = await runTask(s, { 'notes.txt': 'line one\nline two\n' });
    git(first.worktree, 'config', 'diff.external', plantedProgram(s, 'diff-external', 'exit 0'));
    git(first.worktree, 'config', 'diff.planted.textconv', plantedProgram(s, 'textconv', 'cat "$1"'));
    git(first.worktree, 'config', 'diff.planted.command', plantedProgram(s, 'diff-command', 'exit 0'));
    const common = path.resolve(first.worktree, git(first.worktree, 'rev-parse', '--git-common-dir'));
    mkdirSync(path.join(common, 'info'), { recursive: true });
    writeFileSync(path.join(common, 'info', 'attributes'), '*.txt diff=planted\n');
    userGit(s, first.worktree, 'diff', 'HEAD');
    assert.ok(ran(s).includes('diff-command'), 'control: the planted diff driver is live');
    git(first.worktree, 'config', '--unset', 'diff.planted.command');
    userGit(s, first.worktree, 'log', '-p', '-1', '--textconv', '--no-ext-diff', 'HEAD');
    rmSync(s.markers);
    await driveCaesar(s, first);
    assert.deepEqual(ran(s), []);
  });

  it('core.pager, pager.<command>, core.editor and sequence.editor: nothing of Caesar\'s starts them', async () => {
    const s = make();
    const first = await runTask(s, { 'notes.txt': 'line one\nline two\n' });
    git(first.worktree, 'config', 'core.pager', plantedProgram(s, 'pager'));
    for (const command of ['diff', 'status', 'branch', 'log', 'apply', 'worktree']) git(first.worktree, 'config', `pager.${command}`, plantedProgram(s, `pager-${command}`));
    git(first.worktree, 'config', 'core.editor', plantedProgram(s, 'editor', 'exit 0'));
    git(first.worktree, 'config', 'sequence.editor', plantedProgram(s, 'sequence-editor', 'exit 0'));
    await driveCaesar(s, first);
    assert.deepEqual(ran(s), []);
  });
});

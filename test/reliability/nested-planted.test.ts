import { strict as assert } from 'node:assert';
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { FIXTURE_AGENT, buildCli, git, makeRepo } from '../engine/runtime/helpers';

/*
 * Issue 34: what git reaches beyond the shared git dir. (1) A repository left below a worktree (the walk that moves
 * them aside stops at a limit, or a diff is taken before it ran): git starts a `git status` inside a nested
 * repository it holds as a gitlink, which reads that repository's own config; Caesar's git must never do so. (2) A
 * bare-repository layout (HEAD, config, objects/, refs/) in a task's diff: once applied, the user's git takes the
 * folder for a repository and runs what its config names; apply refuses it until the person accepts it. Each planted
 * program appends its name to a marker file; the user's own git shows each vector live (the control).
 */

interface Scene {
  repo: string;
  home: string;
  markers: string;
  env: NodeJS.ProcessEnv;
}

const FIXTURE_TOML = `[[agent]]\nid = "fixture"\nbin = "${process.execPath}"\nargs = ["${FIXTURE_AGENT}", "--objective={{prompt}}"]\n`;

function scene(): Scene {
  const home = realpathSync(mkdtempSync(path.join(tmpdir(), 'caesar-nested-planted-')));
  mkdirSync(path.join(home, '.config', 'caesar'), { recursive: true });
  writeFileSync(path.join(home, '.config', 'caesar', 'config.toml'), FIXTURE_TOML);
  writeFileSync(path.join(home, '.gitconfig'), '[user]\n\tname = Test\n\temail = test@example.invalid\n');
  const env = { ...process.env, HOME: home, GIT_CONFIG_GLOBAL: path.join(home, '.gitconfig'), CAESAR_KILL_GRACE_MS: '500', NO_COLOR: '' };
  return { repo: makeRepo({ 'notes.txt': 'line one\n' }), home, markers: path.join(home, 'ran.log'), env };
}

function plantedProgram(s: Scene, name: string, body = 'cat'): string {
  const file = path.join(s.home, `planted-${name}.sh`);
  writeFileSync(file, `#!/bin/sh\necho ${name} >> '${s.markers}'\n${body}\n`);
  chmodSync(file, 0o755);
  return file;
}

function ran(s: Scene): string[] {
  const found = existsSync(s.markers) ? readFileSync(s.markers, 'utf8').split('\n').filter(Boolean) : [];
  rmSync(s.markers, { force: true });
  return found;
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

async function runTask(s: Scene, files: Record<string, string>): Promise<{ id: string; worktree: string }> {
  const run = await cli(s, ['run', 'edit', '--agent', 'fixture', '--isolation', 'worktree', '--context', JSON.stringify({ mode: 'success', files }), '--json']);
  assert.equal(run.code, 0, run.stderr + run.stdout);
  const id = (JSON.parse(run.stdout) as { task_id: string }).task_id;
  return { id, worktree: path.join(s.repo, '.caesar', 'wt', id) };
}

function userGit(s: Scene, cwd: string, ...args: string[]): void {
  spawnSync('git', args, { cwd, env: s.env, stdio: 'ignore' });
}

function result(s: Scene, id: string): { report: { findings: Array<{ title: string; severity: string }> }; repository_changes?: string[] } {
  return JSON.parse(readFileSync(path.join(s.repo, '.caesar', 'tasks', id, 'result.json'), 'utf8')) as never;
}

describe('reliability: git never reaches into what an agent laid out below its worktree (issue 34)', function () {
  this.timeout(180_000);
  const scenes: Scene[] = [];
  const make = () => {
    const s = scene();
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

  it('a nested repository committed as a gitlink, left after the walk: its clean filter runs in the user\'s git, never in caesar diff, apply or gc', async () => {
    const s = make();
    const first = await runTask(s, { 'kept.txt': 'the task\'s own file\n' });
    // What the walk would have moved aside, had it reached it: planted now, after the task's conclusion.
    const sub = path.join(first.worktree, 'deep', 'sub');
    mkdirSync(sub, { recursive: true });
    git(sub, 'init', '-q');
    writeFileSync(path.join(sub, 'f.txt'), 'inside\n');
    writeFileSync(path.join(sub, '.gitattributes'), '* filter=evil\n');
    git(sub, '-c', 'user.name=A', '-c', 'user.email=a@b', 'add', '.');
    git(sub, '-c', 'user.name=A', '-c', 'user.email=a@b', 'commit', '-q', '-m', 'nested');
    git(sub, 'config', 'filter.evil.clean', plantedProgram(s, 'nested-clean'));
    git(first.worktree, 'add', 'deep/sub');
    git(first.worktree, '-c', 'user.name=A', '-c', 'user.email=a@b', 'commit', '-q', '-m', 'the agent commits its repository');
    writeFileSync(path.join(first.worktree, 'untracked.txt'), 'makes the diff mark new files in its own index\n');
    let tick = Date.now() / 1000 + 10;
    // A file of the nested repository whose stat data no longer matches its index: git must hash it, so filter it.
    const stale = () => utimesSync(path.join(sub, 'f.txt'), tick, (tick += 10));

    stale();
    userGit(s, first.worktree, 'diff-index', 'HEAD');
    assert.ok(ran(s).includes('nested-clean'), 'the control: the user\'s git runs the nested repository\'s filter');

    stale();
    const diff = await cli(s, ['diff', first.id]);
    assert.equal(diff.code, 0, diff.stderr);
    assert.match(diff.stdout, /kept\.txt/);
    assert.deepEqual(ran(s), [], 'caesar diff');
    stale();
    // Apply takes the task's sealed tree (worktree-seal.ts), and looks at the worktree as it is now with git, to name
    // what changed since: that look must not run the filter either. What was written after the conclusion is named.
    const apply = await cli(s, ['apply', first.id, '--files', 'kept.txt']);
    assert.equal(apply.code, 0, apply.stderr + apply.stdout);
    assert.match(apply.stdout, /The worktree changed after the task concluded \(.*untracked\.txt/);
    assert.deepEqual(ran(s), [], 'caesar apply');
    stale();
    const gc = await cli(s, ['gc']);
    assert.equal(gc.code, 0, gc.stderr);
    assert.deepEqual(ran(s), [], 'caesar gc');
    assert.equal(readFileSync(path.join(s.repo, 'kept.txt'), 'utf8'), 'the task\'s own file\n');
  });

  it('a bare-repository layout in the diff: apply refuses it with a finding; accepted, the user\'s git status there runs its fsmonitor (the control)', async () => {
    const s = make();
    const fsmonitor = plantedProgram(s, 'fsmonitor', 'exit 1');
    const first = await runTask(s, {
      'tools/HEAD': 'ref: refs/heads/main\n',
      'tools/config': `[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tworktree = ..\n\tfsmonitor = ${fsmonitor}\n`,
      'tools/objects/.keep': '',
      'tools/refs/.keep': '',
      'tools/readme.txt': 'a tools folder\n',
    });
    const finding = result(s, first.id).report.findings.find((f) => f.title === 'Repository layout in the diff');
    assert.equal(finding?.severity, 'high', JSON.stringify(result(s, first.id).report.findings));

    const refused = await cli(s, ['apply', first.id]);
    assert.notEqual(refused.code, 0, refused.stdout);
    assert.match(refused.stdout + refused.stderr, /tools\/HEAD makes tools a git repository/);
    assert.equal(existsSync(path.join(s.repo, 'tools')), false, 'nothing applied');
    const land = await cli(s, ['land', first.id]);
    assert.notEqual(land.code, 0, land.stdout);
    assert.match(land.stdout + land.stderr, /tools\/HEAD makes tools a git repository/);
    assert.equal(existsSync(path.join(s.repo, 'tools')), false, 'nothing landed');
    assert.deepEqual(ran(s), []);

    // The person accepts: the layout is applied, and plain git in that folder runs what its config names.
    const accepted = await cli(s, ['apply', first.id, '--accept-repository-changes']);
    assert.equal(accepted.code, 0, accepted.stderr + accepted.stdout);
    assert.deepEqual(ran(s), [], 'applying ran nothing');
    userGit(s, path.join(s.repo, 'tools'), 'status');
    assert.ok(ran(s).includes('fsmonitor'), 'the control: the layout is a repository to the user\'s git');
  });
});

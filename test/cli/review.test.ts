import { strict as assert } from 'node:assert';
import { bindingOf, sealDocument } from '../../src/engine/store/record-seal';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { taskPaths } from '../../src/protocol';
import { ANSI, addWorktree, appendEvents, appendRaw, cleanupAll, cli, event, git, makeRepo, makeTask, writeState } from './follow-helpers';

/** A finished worktree task whose agent edited src/app.txt, created notes/ünïcode.md and a binary file. */
function finishedWorktreeTask(repo: string) {
  const task = makeTask(repo, { status: 'succeeded', report_status: 'success', ended_at: new Date().toISOString() });
  const wt = addWorktree(repo, task.id);
  const state = { ...task, ...wt };
  writeState(repo, state);
  writeFileSync(path.join(wt.worktree, 'src', 'app.txt'), 'line 1\nline 2 changed by the agent\nline 3\nline 4\n');
  writeFileSync(path.join(wt.worktree, 'ünïcode.md'), 'new file\n');
  writeFileSync(path.join(wt.worktree, 'logo.bin'), Buffer.from([0, 1, 2, 3, 255, 0, 7]));
  return state;
}

describe('caesar diff', () => {
  after(cleanupAll);

  it('lists files with status and +/- counts, then the full patch including binary files', async () => {
    const repo = makeRepo();
    const task = finishedWorktreeTask(repo);
    const { code, stdout, stderr } = await cli(repo, ['diff', task.id]);
    assert.equal(code, 0, stderr);
    assert.match(stdout, /3 files changed/);
    assert.match(stdout, /M\s+src\/app\.txt\s+\+2 -1/);
    assert.match(stdout, /A\s+ünïcode\.md\s+\+1 -0/);
    assert.match(stdout, /A\s+logo\.bin\s+binary/);
    assert.match(stdout, /diff --git a\/src\/app\.txt b\/src\/app\.txt/);
    assert.match(stdout, /\+line 2 changed by the agent/);
    assert.match(stdout, /GIT binary patch/);
    assert.doesNotMatch(stdout, ANSI);

    const stat = await cli(repo, ['diff', task.id, '--stat']);
    assert.doesNotMatch(stat.stdout, /diff --git/);
    const json = JSON.parse((await cli(repo, ['diff', task.id, '--json'])).stdout) as { files: Array<{ path: string; binary: boolean }>; patch: string; is_empty: boolean };
    assert.equal(json.is_empty, false);
    assert.deepEqual(json.files.map((f) => f.path).sort(), ['logo.bin', 'src/app.txt', 'ünïcode.md']);
    assert.match(json.patch, /GIT binary patch/);
  });

  it('caps the files and the patch it prints, says how much it left out, and shows all of it with --all', async () => {
    const repo = makeRepo();
    const task = makeTask(repo, { status: 'succeeded', report_status: 'success', ended_at: new Date().toISOString() });
    const wt = addWorktree(repo, task.id);
    writeState(repo, { ...task, ...wt });
    for (let i = 0; i < 250; i++) writeFileSync(path.join(wt.worktree, `new${String(i).padStart(3, '0')}.txt`), `${i}\n`);
    // One line of 3 MB: the head of it is shown, never the whole line.
    writeFileSync(path.join(wt.worktree, 'zz-one-line.txt'), `${'x'.repeat(3 * 1024 * 1024)}\n`);

    const capped = await cli(repo, ['diff', task.id]);
    assert.equal(capped.code, 0, capped.stderr);
    assert.match(capped.stdout, /251 files changed/);
    assert.match(capped.stdout, /… and 51 more files \(--all lists every one\)/);
    assert.match(capped.stdout, /… [\d,]+ more lines? of patch \([\d.]+ (KiB|MiB)\) not shown: caesar diff t_\w+ --all shows the whole patch\./);
    assert.ok(capped.stdout.length < 1.5 * 1024 * 1024, `bounded output, got ${capped.stdout.length} bytes`);
    assert.doesNotMatch(capped.stdout, /x{100000}/, 'the 3 MB line is left out');

    const all = await cli(repo, ['diff', task.id, '--all']);
    assert.equal(all.code, 0, all.stderr);
    assert.doesNotMatch(all.stdout, /more files|not shown/);
    assert.match(all.stdout, /\+\+\+ b\/zz-one-line\.txt\n@@ -0,0 \+1 @@\n\+x{3145728}\n/);
    assert.match(all.stdout, /A\s+new249\.txt/);

    const json = JSON.parse((await cli(repo, ['diff', task.id, '--json'])).stdout) as { files: unknown[]; patch: string; patch_omitted?: { lines: number; bytes: number } };
    assert.equal(json.files.length, 251, 'JSON lists every file');
    assert.ok(json.patch_omitted && json.patch_omitted.bytes > 3 * 1024 * 1024 - 1024 * 1024, JSON.stringify(json.patch_omitted));
    const jsonAll = JSON.parse((await cli(repo, ['diff', task.id, '--json', '--all'])).stdout) as { patch: string; patch_omitted?: unknown };
    assert.equal(jsonAll.patch_omitted, undefined);
    assert.ok(jsonAll.patch.includes('x'.repeat(3 * 1024 * 1024)));
  });

  it('says "No changes." for an untouched worktree, even after the agent committed nothing', async () => {
    const repo = makeRepo();
    const task = makeTask(repo, { status: 'succeeded' });
    writeState(repo, { ...task, ...addWorktree(repo, task.id) });
    const r = await cli(repo, ['diff', task.id]);
    assert.equal(r.code, 0);
    assert.equal(r.stdout, 'No changes.\n');
  });

  it('shows work the agent committed in its worktree (diff against base_ref, not HEAD)', async () => {
    const repo = makeRepo();
    const task = finishedWorktreeTask(repo);
    git(task.worktree, 'add', '-A');
    git(task.worktree, 'commit', '-q', '-m', 'agent commit');
    const r = await cli(repo, ['diff', task.id, '--stat']);
    assert.match(r.stdout, /3 files changed/);
  });

  it('for an in-place task says there is no worktree and lists the files from result.json', async () => {
    const repo = makeRepo();
    const task = makeTask(repo, { status: 'succeeded', isolation: 'inplace' });
    writeFileSync(
      taskPaths(repo, task.id).result,
      JSON.stringify(sealDocument('result', bindingOf(repo, task.id), {
        report: { protocol: 'caesar.report/v1', status: 'success', summary: 'edited' },
        report_source: 'file',
        changes_verified_by: 'git',
        agent_report_valid: true,
        diff: { files: [{ path: 'src/app.txt', action: 'modified', additions: 1, deletions: 0, binary: false }], is_empty: false },
      })),
    );
    const r = await cli(repo, ['diff', task.id]);
    assert.equal(r.code, 0);
    assert.match(r.stdout, /ran in place: there is no worktree/);
    assert.match(r.stdout, /M\s+src\/app\.txt\s+\+1 -0/);
    const json = JSON.parse((await cli(repo, ['diff', task.id, '--json'])).stdout) as { worktree: null; files: unknown[] };
    assert.equal(json.worktree, null);
    assert.equal(json.files.length, 1);
  });
});

describe('caesar apply / discard', () => {
  after(cleanupAll);

  it('applies everything to the workspace; the user\'s uncommitted edits and index stay as they were', async () => {
    const repo = makeRepo();
    writeFileSync(path.join(repo, 'README.md'), '# demo\nmy own uncommitted edit\n');
    const task = finishedWorktreeTask(repo);
    const { code, stdout, stderr } = await cli(repo, ['apply', task.id]);
    assert.equal(code, 0, stderr);
    assert.match(stdout, /Applied 3 files/);
    assert.equal(readFileSync(path.join(repo, 'src', 'app.txt'), 'utf8'), 'line 1\nline 2 changed by the agent\nline 3\nline 4\n');
    assert.equal(readFileSync(path.join(repo, 'ünïcode.md'), 'utf8'), 'new file\n');
    assert.deepEqual([...readFileSync(path.join(repo, 'logo.bin'))], [0, 1, 2, 3, 255, 0, 7]);
    assert.equal(readFileSync(path.join(repo, 'README.md'), 'utf8'), '# demo\nmy own uncommitted edit\n');
    assert.equal(git(repo, 'diff', '--cached', '--name-only'), '', 'nothing staged in the user\'s index');
    assert.ok(existsSync(taskPaths(repo, task.id).applied), 'applied.json records the apply');
  });

  it('on a conflict writes nothing, names the file and exits 1', async () => {
    const repo = makeRepo();
    const task = finishedWorktreeTask(repo);
    writeFileSync(path.join(repo, 'src', 'app.txt'), 'line 1\nline 2 edited by the user\nline 3\n');
    const { code, stdout } = await cli(repo, ['apply', task.id]);
    assert.equal(code, 1);
    assert.match(stdout, /Nothing was written: 1 file does not apply/);
    assert.match(stdout, /^ {2}src\/app\.txt$/m);
    assert.equal(existsSync(path.join(repo, 'ünïcode.md')), false, 'the files that would apply were not written either');
    assert.equal(readFileSync(path.join(repo, 'src', 'app.txt'), 'utf8'), 'line 1\nline 2 edited by the user\nline 3\n');
    const json = JSON.parse((await cli(repo, ['apply', task.id, '--json'])).stdout) as { applied: boolean; reason: string; conflicts: string[] };
    assert.deepEqual([json.applied, json.reason, json.conflicts], [false, 'conflicts', ['src/app.txt']]);
  });

  it('--files applies only the named files; a file the task did not change is refused with exit 2', async () => {
    const repo = makeRepo();
    const task = finishedWorktreeTask(repo);
    const typo = await cli(repo, ['apply', task.id, '--files', 'src/app.tx']);
    assert.equal(typo.code, 2);
    assert.match(typo.stderr, /did not change src\/app\.tx/);
    const r = await cli(repo, ['apply', task.id, '--files', 'ünïcode.md,logo.bin', '--json']);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual((JSON.parse(r.stdout) as { files: string[] }).files.sort(), ['logo.bin', 'ünïcode.md']);
    assert.equal(readFileSync(path.join(repo, 'src', 'app.txt'), 'utf8'), 'line 1\nline 2\nline 3\n');
  });

  it('without a worktree answers {applied: false, reason: "no_worktree"} and exits 1; an active task is refused', async () => {
    const repo = makeRepo();
    const inplace = makeTask(repo, { status: 'succeeded', isolation: 'inplace' });
    const r = await cli(repo, ['apply', inplace.id, '--json']);
    assert.equal(r.code, 1);
    const out = JSON.parse(r.stdout) as { applied: boolean; reason: string };
    assert.deepEqual([out.applied, out.reason], [false, 'no_worktree']);
    const running = makeTask(repo);
    const active = await cli(repo, ['apply', running.id]);
    assert.equal(active.code, 1);
    assert.match(active.stderr, /still running/);
  });

  it('discard removes the worktree and its branch, keeps the task record', async () => {
    const repo = makeRepo();
    const task = finishedWorktreeTask(repo);
    const r = await cli(repo, ['discard', task.id]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(existsSync(task.worktree), false);
    assert.equal(git(repo, 'branch', '--list', task.branch), '');
    assert.ok(existsSync(taskPaths(repo, task.id).state));
    const again = await cli(repo, ['diff', task.id]);
    assert.equal(again.code, 1);
    assert.match(again.stderr, /no longer exists/);
  });
});

describe('caesar gc', () => {
  after(cleanupAll);

  it('removes clean worktrees, keeps modified and committed-unapplied ones with advice; --dry-run changes nothing', async () => {
    const repo = makeRepo();
    const clean = makeTask(repo, { status: 'succeeded' });
    writeState(repo, { ...clean, ...addWorktree(repo, clean.id) });
    const modified = finishedWorktreeTask(repo);
    const committed = finishedWorktreeTask(repo);
    git(committed.worktree, 'add', '-A');
    git(committed.worktree, 'commit', '-q', '-m', 'agent work');

    const dry = await cli(repo, ['gc', '--dry-run']);
    assert.equal(dry.code, 0, dry.stderr);
    assert.match(dry.stdout, new RegExp(`${clean.id}\\s+succeeded\\s+would remove\\s+clean`));
    assert.match(dry.stdout, /Dry run: 1 would be removed, 2 kept\. Nothing was changed\./);
    assert.ok(existsSync(path.join(repo, '.caesar', 'wt', clean.id)));

    const real = await cli(repo, ['gc']);
    assert.equal(real.code, 0, real.stderr);
    assert.match(real.stdout, new RegExp(`${modified.id}\\s+succeeded\\s+kept\\s+modified`));
    assert.match(real.stdout, new RegExp(`${committed.id}\\s+succeeded\\s+kept\\s+modified`));
    assert.match(real.stdout, new RegExp(`review with \`caesar diff ${modified.id}\`, then \`caesar apply ${modified.id}\``));
    assert.equal(existsSync(path.join(repo, '.caesar', 'wt', clean.id)), false);
    assert.ok(existsSync(committed.worktree), 'committed but unapplied work is never collected without --force');

    const forced = JSON.parse((await cli(repo, ['gc', '--force', '--json'])).stdout) as { removed: number; entries: Array<{ id: string; action: string }> };
    assert.equal(forced.removed, 2);
    assert.equal(existsSync(committed.worktree), false);
  });

  it('concludes a lost task (dead supervisor) as failed, once, and keeps its worktree work for review', async () => {
    const repo = makeRepo();
    const id = 't_lost';
    const wt = addWorktree(repo, id);
    writeFileSync(path.join(wt.worktree, 'half-done.txt'), 'work in progress\n');
    makeTask(repo, { id, status: 'running', supervisor_pid: 2 ** 22 + 777, worktree: wt.worktree, branch: wt.branch, base_ref: wt.base_ref });
    appendEvents(repo, id, event(id, { type: 'started', agent: 'demo' }));
    appendRaw(repo, id, '{"protocol":"caesar.event/v1","seq":1,"at"');

    const dry = JSON.parse((await cli(repo, ['gc', '--dry-run', '--json'])).stdout) as { concluded: Array<{ id: string }> };
    assert.deepEqual(dry.concluded.map((c) => c.id), [id]);
    assert.equal(JSON.parse(readFileSync(taskPaths(repo, id).state, 'utf8')).status, 'running', 'a dry run changes nothing');

    const r = await cli(repo, ['gc']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, new RegExp(`Lost tasks concluded as failed[^]*${id} \\(supervisor pid \\d+\\) — 1 changed file kept for review`));
    const state = JSON.parse(readFileSync(taskPaths(repo, id).state, 'utf8'));
    assert.equal(state.status, 'failed');
    const lines = readFileSync(taskPaths(repo, id).events, 'utf8').trim().split('\n');
    const finished = JSON.parse(lines.at(-1)!);
    assert.equal(finished.type, 'finished');
    assert.equal(finished.seq, 1, 'numbered after the last complete event; the torn line is closed off, not merged');
    assert.ok(existsSync(wt.worktree), 'unapplied work is kept');
    assert.doesNotMatch((await cli(repo, ['gc'])).stdout, /Lost tasks/, 'nothing to conclude the second time');
  });

  it('exits 1 when a worktree could not be inspected', async () => {
    const repo = makeRepo();
    const task = finishedWorktreeTask(repo);
    writeFileSync(taskPaths(repo, task.id).state, '{ not json');
    const r = await cli(repo, ['gc']);
    assert.equal(r.code, 1);
    assert.match(r.stdout, /inspection_failed/);
    assert.ok(existsSync(task.worktree));
  });
});

import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import * as path from 'node:path';
import { git, makeRepo, runBuiltCli, startFixture, waitForFinished } from '../runtime/helpers';
import { assertRefused, probeAgent, probeErrors, probeResults, type Probe } from './helpers';
import { needs } from '../../support/needs';

const EMPTY_BLOB = 'e6/9de29bb2d1d6434b8b29ae775ad8c2e48c5391';

/** Loose objects and packs of the user's shared object store, as the host sees them. */
function storeFiles(common: string): { loose: string[]; packs: string[] } {
  const objects = path.join(common, 'objects');
  const loose = readdirSync(objects).filter((d) => /^[0-9a-f]{2}$/.test(d)).flatMap((d) => readdirSync(path.join(objects, d)).map((f) => `${d}/${f}`));
  return { loose: loose.sort(), packs: readdirSync(path.join(objects, 'pack')).filter((f) => f.endsWith('.pack')).sort() };
}

/** Issue 21 item 2: a sandboxed agent commits in its worktree; the user's object store stays the user's. */
(process.platform === 'linux' ? describe : describe.skip)('sandbox: a task-private object store', function () {
  this.timeout(60_000);
  before(async function () {
    await needs(this, 'bubblewrap');
  });

  it('the agent commits inside the sandbox, cannot touch the shared store, and caesar diff and the branch carry its commit', async () => {
    const root = makeRepo({ 'README.md': '# test repo\n' });
    git(root, 'gc', '-q');
    const common = path.join(root, '.git');
    const before = storeFiles(common);
    const probes: Probe[] = [
      ['commit', 'echo c > committed.txt && git add committed.txt && git -c user.email=a@b.invalid -c user.name=agent commit -qm agent-commit'],
      ['shared store unchanged after the commit', `test "$(ls ${common}/objects/pack/*.pack | wc -l)" -eq ${before.packs.length} && test -z "$(find ${common}/objects -mindepth 2 -path '*/objects/[0-9a-f][0-9a-f]/*')"`],
      ['staged', 'echo s > staged.txt && git add staged.txt'],
      ['delete a pack', `rm ${common}/objects/pack/*.pack`],
      ['write a loose object in the shared store', `GIT_OBJECT_DIRECTORY=${common}/objects sh -c 'echo evil | git hash-object -w --stdin'`],
    ];
    const { id } = await startFixture(root, {}, { ...probeAgent(probes), sandbox: { mode: 'required' } });
    const done = await waitForFinished(root, id);
    assert.equal(done.state.status, 'succeeded', JSON.stringify(done.result.report));
    const results = probeResults(done.state.worktree!);
    assert.equal(results.get('commit'), 'ok');
    assert.equal(results.get('shared store unchanged after the commit'), 'ok');
    assert.equal(results.get('staged'), 'ok');
    assertRefused(done.state.worktree!, new Map([['delete a pack', /Read-only file system/], ['write a loose object in the shared store', /Read-only file system|insufficient permission/]]));

    // Brought back through index-pack: the user's packs all still there plus one, no loose object, a sound repository.
    const after = storeFiles(common);
    // The loose objects allowed are Caesar's own: the empty blob its reconcile writes (`add --intent-to-add`), and the
    // objects of the worktree's tree it seals at the conclusion (result.json worktree_tree, worktree-seal.ts).
    const sealed = (done.result as { worktree_tree?: string }).worktree_tree;
    assert.ok(sealed, 'the conclusion sealed the worktree');
    const ofSeal = new Set(git(root, 'rev-list', '--objects', '--no-object-names', sealed).split('\n').map((o) => `${o.slice(0, 2)}/${o.slice(2)}`));
    assert.deepEqual(after.loose.filter((f) => f !== EMPTY_BLOB && !ofSeal.has(f)), before.loose);
    for (const pack of before.packs) assert.ok(after.packs.includes(pack), `${pack} is gone`);
    assert.equal(after.packs.length, before.packs.length + 1);
    git(root, 'fsck', '--no-progress');
    assert.match(git(root, 'log', '-1', '--format=%s', `caesar/${id}`), /agent-commit/);
    assert.equal(git(done.state.worktree!, 'symbolic-ref', 'HEAD'), `refs/heads/caesar/${id}`);
    assert.equal(readdirSync(path.join(common, 'worktrees', path.basename(done.state.worktree!))).includes('objects'), false, 'the private store is gone');

    const files = (done.result.diff?.files ?? []).map((f) => f.path).sort();
    assert.ok(files.includes('committed.txt') && files.includes('staged.txt'), JSON.stringify(files));
    const diff = await runBuiltCli(['diff', id], root, 30_000);
    assert.equal(diff.code, 0, diff.stderr);
    assert.match(diff.stdout, /\+\+\+ b\/committed\.txt/);
  });

  it('the control: unconfined, the same probes write a loose object into the shared store and delete its pack', async () => {
    const root = makeRepo({ 'README.md': '# test repo\n' });
    git(root, 'gc', '-q');
    const common = path.join(root, '.git');
    const probes: Probe[] = [
      ['write a loose object in the shared store', `GIT_OBJECT_DIRECTORY=${common}/objects sh -c 'echo evil | git hash-object -w --stdin'`],
      ['delete a pack', `rm ${common}/objects/pack/*.pack`],
    ];
    const { id } = await startFixture(root, {}, { ...probeAgent(probes), sandbox: { mode: 'off' } });
    const done = await waitForFinished(root, id);
    const results = probeResults(done.state.worktree!);
    assert.deepEqual(probes.map(([label]) => results.get(label)), ['ok', 'ok'], JSON.stringify([...probeErrors(done.state.worktree!)]));
    const after = storeFiles(common);
    assert.equal(after.packs.length, 0, 'the control: the pack is still there');
    const evil = execFileSync('git', ['hash-object', '--stdin'], { input: 'evil\n', encoding: 'utf8' }).trim();
    assert.ok(after.loose.includes(`${evil.slice(0, 2)}/${evil.slice(2)}`), 'the control: no loose object was written');
  });
});

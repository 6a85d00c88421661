import { strict as assert } from 'node:assert';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { applyTask } from '../../src/engine/git/apply';
import { bindingOf, sealDocument } from '../../src/engine/store/record-seal';
import { taskPaths } from '../../src/protocol';
import { makeRepo, startFixture, waitForFinished } from '../engine/runtime/helpers';
import { startHostile } from './helpers';

/*
 * Issue 34: with the sandbox off, a task that edits a sibling task's worktree got its line applied as the sibling's.
 * Real tasks: B writes b.txt in its worktree and concludes; A (unconfined) then rewrites B's b.txt and plants a file
 * there. B's result.json sealed its worktree's tree at its conclusion, and apply applies that: B's own line lands,
 * A's do not, and the apply says the worktree changed after B concluded, naming the files. The control is the same
 * attack on a record without the sealed tree (as written before this change): A's lines are applied as B's.
 */
describe('reliability: a write into another task\'s worktree is never applied as that task\'s work', function () {
  this.timeout(90_000);

  async function tamperedSibling(): Promise<{ root: string; id: string }> {
    const root = makeRepo({ 'README.md': 'hello\n' });
    const { id } = await startFixture(root, { mode: 'success', files: { 'b.txt': 'from B\n' } });
    const { state, result } = await waitForFinished(root, id);
    assert.match(String(result.worktree_tree), /^[0-9a-f]{40}/, 'the conclusion sealed the worktree');
    const sibling = state.worktree as string;
    const outside = { [path.join(sibling, 'b.txt')]: 'from A, not B\n', [path.join(sibling, 'planted.txt')]: 'planted by A\n' };
    const attacker = await startHostile(root, { mode: 'write-outside', outside }, { sandbox: { mode: 'off' } });
    await waitForFinished(root, attacker.id);
    assert.equal(readFileSync(path.join(sibling, 'b.txt'), 'utf8'), 'from A, not B\n', 'the attack wrote into the sibling');
    return { root, id };
  }

  it('apply applies the sibling\'s sealed work: its own line, none of the intruder\'s, and says what changed', async () => {
    const { root, id } = await tamperedSibling();
    const state = (await waitForFinished(root, id)).state;
    const outcome = await applyTask({ root, state });
    assert.equal(outcome.applied, true, outcome.message);
    assert.deepEqual(outcome.files, ['b.txt']);
    assert.equal(readFileSync(path.join(root, 'b.txt'), 'utf8'), 'from B\n');
    assert.equal(existsSync(path.join(root, 'planted.txt')), false);
    assert.match(outcome.message, /The worktree changed after the task concluded \(b\.txt, planted\.txt\): not the task's work, not applied/);
  });

  it('control: without the sealed tree (a record from before), the intruder\'s lines are applied as the sibling\'s', async () => {
    const { root, id } = await tamperedSibling();
    const file = taskPaths(root, id).result;
    const { caesar_seal: _seal, worktree_tree: _tree, ...rest } = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
    writeFileSync(file, JSON.stringify(sealDocument('result', bindingOf(root, id), rest), null, 2));
    const state = (await waitForFinished(root, id)).state;
    const outcome = await applyTask({ root, state });
    assert.equal(outcome.applied, true, outcome.message);
    assert.equal(readFileSync(path.join(root, 'b.txt'), 'utf8'), 'from A, not B\n', 'the attack works where the defence is absent');
    assert.equal(existsSync(path.join(root, 'planted.txt')), true);
  });
});

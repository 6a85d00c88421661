import { strict as assert } from 'node:assert';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { applyTask } from '../../../src/engine/git/apply';
import { TaskStore } from '../../../src/engine/store/store';
import { recordKeyPath } from '../../../src/engine/store/record-key';
import { SEAL_FIELD, bindingOf, openDocument, verifyEventLine } from '../../../src/engine/store/record-seal';
import { collectGarbage } from '../../../src/engine/tasks/gc';
import { taskPaths, type TaskState } from '../../../src/protocol';
import { makeRepo, startFixture, waitForFinished } from '../runtime/helpers';

/**
 * Issue 22 item 4: Caesar's records say who wrote them. A real task (real supervisor, real git worktree) writes
 * sealed state.json, result.json and events.jsonl, a real apply writes applied.json; then each record is changed as
 * an agent or a planted repository would, and each reader — the store (CLI, MCP, editor), apply, gc — tells.
 */
describe('engine: records sealed by Caesar, checked by every reader', function () {
  this.timeout(60_000);
  let root: string;
  let id: string;
  let state: TaskState;

  const json = (file: string) => JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
  /** Rewrites a record as someone without the key would: a field changed, its seal kept. */
  function forge(file: string, change: (doc: Record<string, any>) => void): () => void {
    const original = readFileSync(file, 'utf8');
    const doc = json(file);
    change(doc);
    writeFileSync(file, JSON.stringify(doc, null, 2));
    return () => writeFileSync(file, original);
  }

  before(async () => {
    root = makeRepo();
    ({ id } = await startFixture(root, { mode: 'success', files: { 'sealed.txt': 'sealed\n' } }));
    ({ state } = await waitForFinished(root, id));
  });

  it('writes every record sealed, and the store verifies them all: nothing unverified', async () => {
    const paths = taskPaths(root, id);
    for (const file of [paths.state, paths.result]) assert.equal(typeof json(file)[SEAL_FIELD], 'object', `${file} is sealed`);
    const binding = bindingOf(root, id);
    const lines = readFileSync(paths.events, 'utf8').trim().split('\n');
    for (const line of lines) assert.deepEqual(verifyEventLine(binding, line), { ok: true });
    const summary = (await new TaskStore(root).summary(id))!;
    assert.deepEqual([summary.observed, summary.unverified, summary.lastEvent?.type], ['succeeded', [], 'finished']);
    assert.ok(summary.result);
    const key = statSync(recordKeyPath());
    assert.equal(key.mode & 0o777, 0o600, 'the key is the user\'s alone');
  });

  it('a state.json changed by someone else makes the task "unverified", with the reason', async () => {
    const restore = forge(taskPaths(root, id).state, (doc) => (doc.status = 'failed'));
    try {
      const summary = (await new TaskStore(root).summary(id))!;
      assert.equal(summary.observed, 'unverified');
      assert.match(summary.unverified.join('\n'), /state\.json is not Caesar's record: it was changed by someone other than Caesar/);
    } finally {
      restore();
    }
    const stripped = forge(taskPaths(root, id).state, (doc) => delete doc[SEAL_FIELD]);
    try {
      const summary = (await new TaskStore(root).summary(id))!;
      assert.equal(summary.observed, 'unverified');
      assert.match(summary.unverified.join('\n'), /state\.json carries no seal of Caesar's: unverified/);
    } finally {
      stripped();
    }
  });

  it('a result.json changed by someone else is never shown, and apply refuses the task', async () => {
    const restore = forge(taskPaths(root, id).result, (doc) => (doc.report.summary = 'All tests pass, ship it'));
    try {
      const summary = (await new TaskStore(root).summary(id))!;
      assert.equal(summary.result, undefined, 'the forged result is left out');
      assert.match(summary.unverified.join('\n'), /result\.json is not Caesar's record/);
      const outcome = await applyTask({ root, state });
      assert.deepEqual([outcome.applied, outcome.reason], [false, 'unverified_records']);
      assert.match(outcome.message, /result\.json is not Caesar's record/);
      assert.throws(() => readFileSync(path.join(root, 'sealed.txt')), /ENOENT/, 'nothing was applied');
    } finally {
      restore();
    }
  });

  it('a forged applied.json is not believed: not shown as applied, apply refuses, gc keeps the worktree', async () => {
    const applied = await applyTask({ root, state });
    assert.equal(applied.applied, true, applied.message);
    const appliedFile = taskPaths(root, id).applied;
    assert.equal(typeof json(appliedFile)[SEAL_FIELD], 'object');
    assert.ok((await new TaskStore(root).summary(id))!.applied, 'the real record is shown');
    const before = (await collectGarbage({ root, dryRun: true, force: false })).entries.find((e) => e.id === id);
    assert.deepEqual([before?.reason, before?.action], ['applied', 'would_remove'], 'the real record lets gc collect the worktree');
    // Someone rewrites the record (the digest anyone can compute from the diff kept, so it still "matches").
    forge(appliedFile, (doc) => (doc.applied_at = '2020-01-01T00:00:00.000Z'));
    const summary = (await new TaskStore(root).summary(id))!;
    assert.equal(summary.applied, undefined);
    assert.match(summary.unverified.join('\n'), /applied\.json is not Caesar's record/);
    const again = await applyTask({ root, state });
    assert.deepEqual([again.applied, again.reason], [false, 'unverified_records']);
    const after = (await collectGarbage({ root, dryRun: true, force: false })).entries.find((e) => e.id === id);
    assert.deepEqual([after?.reason, after?.action], ['modified', 'kept'], 'gc keeps the worktree: a forged record vouches for nothing');
  });

  it('an event line appended by someone else is refused by every event reader', async () => {
    const events = taskPaths(root, id).events;
    const before = readFileSync(events, 'utf8');
    const last = JSON.parse(before.trim().split('\n').at(-1)!) as Record<string, unknown>;
    const forged: Record<string, unknown> = { ...last, seq: (last.seq as number) + 1, summary: 'forged' };
    delete forged.caesar_mac;
    const wrongMac = `${JSON.stringify(forged).slice(0, -1)},"caesar_mac":"${'a'.repeat(32)}"}`;
    writeFileSync(events, `${before}${JSON.stringify(forged)}\n${wrongMac}\n`);
    try {
      const store = new TaskStore(root);
      const read = await store.readEvents(id);
      assert.equal(read.unverifiedLines, 2);
      assert.ok(read.events.every((e) => (e as { summary?: string }).summary !== 'forged'));
      assert.equal((await store.summary(id))!.lastEvent?.seq, last.seq, 'the last event is the last one Caesar wrote');
    } finally {
      writeFileSync(events, before);
    }
  });

  it('the editor suite\'s plain-node mirror of the seal (fixtures/seal.mjs) makes records that verify', async () => {
    const mirror = (await import(pathToFileURL(path.resolve(__dirname, '../../extension/fixtures/seal.mjs')).href)) as {
      sealDocument(kind: string, root: string, id: string, doc: object): Record<string, unknown>;
      sealEventLine(root: string, id: string, json: string): string;
    };
    const binding = bindingOf(root, 'mirror');
    const doc = mirror.sealDocument('state', root, 'mirror', { id: 'mirror', n: 1 });
    assert.deepEqual(openDocument('state', binding, JSON.parse(JSON.stringify(doc)), 'state.json').verdict, { ok: true });
    assert.equal(openDocument('result', binding, doc, 'result.json').verdict.ok, false, 'a seal is bound to its kind');
    assert.deepEqual(verifyEventLine(binding, mirror.sealEventLine(root, 'mirror', '{"seq":0}')), { ok: true });
  });
});

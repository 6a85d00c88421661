import { strict as assert } from 'node:assert';
import { readFileSync, writeFileSync } from 'node:fs';
import { bindingOf, sealDocument } from '../../../src/engine/store/record-seal';
import { TaskStore } from '../../../src/engine/store/store';
import { taskPaths, type TaskState } from '../../../src/protocol';
import { buildCli, makeRepo, runCliScript, startFixture, waitFor, waitForFinished } from '../runtime/helpers';

/**
 * Issue 34, item 4: a seal says who wrote a record, not when. A real task (real supervisor, real worktree) is run;
 * its state.json is copied while it runs, as anyone who can write the task folder could keep it; once the task has
 * ended the copy is put back. It verifies (Caesar wrote it), but it is older than the result and the log's end:
 * every reader refuses it, and `caesar gc` does not take the task for lost and rewrite its result as failed. A log
 * cut short is said to be so by the store (ps, watch, the editor) and by `caesar logs`.
 */
describe('engine: records bind their order, so an older one put back is refused', function () {
  this.timeout(90_000);
  let cli: string;
  let root: string;
  let id: string;
  /** state.json as it was while the agent ran, and each state written after it (the last running one included). */
  let running: string;
  let final: TaskState;

  before(async () => {
    cli = await buildCli();
    root = makeRepo();
    ({ id } = await startFixture(root, { mode: 'success', sleepMs: 1500, files: { 'ordered.txt': 'ordered\n' } }));
    const paths = taskPaths(root, id);
    running = await waitFor('the agent runs', () => {
      const text = readFileSync(paths.state, 'utf8');
      return (JSON.parse(text) as TaskState).agent_pid !== undefined ? text : undefined;
    }, 30_000);
    ({ state: final } = await waitForFinished(root, id));
  });

  function putBack(file: string, text: string): () => void {
    const original = readFileSync(file, 'utf8');
    writeFileSync(file, text);
    return () => writeFileSync(file, original);
  }

  it('each state carries its seq and the events behind it; result.json names the final state', async () => {
    const earlier = JSON.parse(running) as TaskState;
    const result = JSON.parse(readFileSync(taskPaths(root, id).result, 'utf8')) as { state_seq?: number };
    assert.ok(earlier.seq !== undefined && final.seq !== undefined && earlier.seq < final.seq, `seq ${earlier.seq} then ${final.seq}`);
    assert.equal(result.state_seq, final.seq);
    const lines = readFileSync(taskPaths(root, id).events, 'utf8').trim().split('\n').length;
    assert.equal(final.events_written, lines, 'the final state vouches for every line, its `finished` included');
    const summary = (await new TaskStore(root).summary(id))!;
    assert.deepEqual([summary.observed, summary.unverified], ['succeeded', []]);
  });

  it('the task\'s own earlier running state.json put back is refused as an older record; gc leaves the result alone', async () => {
    const paths = taskPaths(root, id);
    const result = readFileSync(paths.result, 'utf8');
    const restore = putBack(paths.state, running);
    try {
      const gc = await runCliScript(cli, ['gc', '--json'], root, 30_000);
      assert.equal(gc.code, 0, gc.stderr);
      assert.equal(readFileSync(paths.result, 'utf8'), result, 'gc did not rewrite the result as failed');
      const summary = (await new TaskStore(root).summary(id))!;
      assert.equal(summary.observed, 'unverified', 'not `lost`: nothing concludes it again');
      assert.match(summary.unverified.join('\n'), /state\.json of task .* is an older record \(seq \d+, status running\) than result\.json/);
      const ps = await runCliScript(cli, ['ps'], root, 30_000);
      assert.match(ps.stdout, /unverified/);
      assert.match(ps.stderr, /older record/);
    } finally {
      restore();
    }
  });

  it('the last running state put back (the one just before the final) is refused too once its supervisor is gone', async () => {
    const paths = taskPaths(root, id);
    const last = { ...final, status: 'running', seq: final.seq! - 1 } as Record<string, unknown>;
    // Not something an attacker can make (it is re-sealed here): it stands for the state the supervisor wrote last.
    const restore = putBack(paths.state, JSON.stringify(sealDocument('state', bindingOf(root, id), last)));
    try {
      const summary = (await new TaskStore(root).summary(id))!;
      assert.equal(summary.observed, 'unverified');
      assert.match(summary.unverified.join('\n'), /older record .* than result\.json/);
    } finally {
      restore();
    }
  });

  it('a log cut short is reported as truncated after its last seq, by the store, `caesar logs` and `caesar watch`', async () => {
    const paths = taskPaths(root, id);
    const lines = readFileSync(paths.events, 'utf8').trim().split('\n');
    const kept = lines.slice(0, lines.length - 2);
    const lastKept = (JSON.parse(kept.at(-1)!) as { seq: number }).seq;
    const restore = putBack(paths.events, `${kept.join('\n')}\n`);
    try {
      const summary = (await new TaskStore(root).summary(id))!;
      assert.match(summary.unverified.join('\n'), new RegExp(`events\\.jsonl of task ${id} was truncated after seq ${lastKept}: state\\.json \\(seq \\d+\\) vouches for ${lines.length} events`));
      const logs = await runCliScript(cli, ['logs', id], root, 30_000);
      assert.equal(logs.code, 0, logs.stderr);
      assert.match(logs.stderr, new RegExp(`truncated after seq ${lastKept}`));
      const watch = await runCliScript(cli, ['watch', id], root, 30_000);
      assert.match(watch.stderr, new RegExp(`truncated after seq ${lastKept}`), watch.stdout);
    } finally {
      restore();
    }
  });

  it('events cut out of the middle are reported as a gap in the numbering', async () => {
    const paths = taskPaths(root, id);
    const lines = readFileSync(paths.events, 'utf8').trim().split('\n');
    const restore = putBack(paths.events, `${[lines[0], ...lines.slice(3)].join('\n')}\n`);
    try {
      const read = await new TaskStore(root).readEvents(id);
      assert.equal(read.gap, 'events.jsonl misses seq 1–2 (cut out)');
      const logs = await runCliScript(cli, ['logs', id], root, 30_000);
      assert.match(logs.stderr, /misses seq 1–2/);

    } finally {
      restore();
    }
  });
});

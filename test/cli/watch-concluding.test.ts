/*
 * `caesar watch` while a conclusion runs long: a real task (demo agent, worktree, detached supervisor) whose git is
 * made slow for the conclusion's diff by a wrapper on PATH, watched by `caesar watch <id>` in another process.
 */
import { strict as assert } from 'node:assert';
import { chmodSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { execFileSync } from 'node:child_process';
import { taskPaths } from '../../src/protocol';
import { caesarOnce, cleanupAll, ensureBuilt, makeRepo, spawnCaesar } from './follow-helpers';
import { waitFor } from '../support/wait';

/** A `git` that sleeps 12 s before each `diff-index` (the conclusion's diff), then runs the real git. */
function slowGitDir(): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'caesar-slow-git-'));
  const real = execFileSync('sh', ['-c', 'command -v git'], { encoding: 'utf8' }).trim();
  writeFileSync(path.join(dir, 'git'), `#!/bin/sh\ncase " $* " in *" diff-index "*) sleep 12;; esac\nexec ${real} "$@"\n`);
  chmodSync(path.join(dir, 'git'), 0o755);
  return dir;
}

describe('caesar watch during a long conclusion', function () {
  this.timeout(90_000);
  before(ensureBuilt);
  after(cleanupAll);

  it('prints "concluding…" with the elapsed time and the phase, instead of silence, until the task ends', async () => {
    const repo = makeRepo();
    const env = { PATH: `${slowGitDir()}${path.delimiter}${process.env.PATH}`, CAESAR_DEMO_DELAY_MS: '5' };
    const run = spawnCaesar(repo, ['run', '--agent', 'demo', '--isolation', 'worktree', 'Write GREETING.md', '--json'], env);
    const id = await waitFor('the task in ps', async () => {
      const rows = JSON.parse((await caesarOnce(repo, ['ps', '--json'])).stdout || '[]') as Array<{ id: string }>;
      return rows[0]?.id;
    }, 30_000, 100);
    const state = () => JSON.parse(readFileSync(taskPaths(repo, id).state, 'utf8')) as { concluding_since?: string; phase?: string; status: string };
    await waitFor('the conclusion to begin', () => state().concluding_since, 30_000, 100);

    const watch = spawnCaesar(repo, ['watch', id]);
    await waitFor('a concluding… line', () => /concluding… \d+s \(computing the diff\)/.test(watch.output()), 20_000, 100);
    assert.equal(await run.exited, 0, run.errors());
    assert.equal(await watch.exited, 0, watch.errors());
    const lines = watch.output().split('\n');
    assert.ok(!lines.some((l) => /silence/.test(l)), watch.output());
    assert.ok(lines.some((l) => /finished/.test(l)), watch.output());
    const final = state();
    assert.equal(final.status, 'succeeded');
    assert.ok(final.concluding_since && Date.parse(final.concluding_since) > 0, 'the record keeps when concluding began');
  });
});

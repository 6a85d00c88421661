import { strict as assert } from 'node:assert';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { worktreeDiff } from '../../../src/engine/git/reconcile';
import { createWorktree } from '../../../src/engine/git/worktree';
import { cleanupTemp, makeRepo, tempDir } from './helpers';

/** Runs `fn` with GIT_TRACE on and returns the built-in git commands it started (one line each). */
async function tracedGit<T>(fn: () => Promise<T>): Promise<{ result: T; commands: string[] }> {
  const trace = path.join(tempDir(), 'trace');
  const previous = process.env.GIT_TRACE;
  process.env.GIT_TRACE = trace;
  try {
    const result = await fn();
    const log = existsSync(trace) ? readFileSync(trace, 'utf8') : '';
    return { result, commands: log.split('\n').filter((l) => l.includes('built-in: git ')).map((l) => l.slice(l.indexOf('built-in: git ') + 10)) };
  } finally {
    if (previous === undefined) delete process.env.GIT_TRACE;
    else process.env.GIT_TRACE = previous;
  }
}

/** `count` new files spread over `dirs` folders (plus a few with glob and pathspec-magic characters in their names). */
function writeManyFiles(root: string, count: number, dirs: number): string[] {
  const written: string[] = [];
  for (let i = 0; i < count; i++) {
    const rel = `gen/d${i % dirs}/f${i}.txt`;
    mkdirSync(path.join(root, path.dirname(rel)), { recursive: true });
    writeFileSync(path.join(root, rel), `${i}\n`);
    written.push(rel);
  }
  for (const odd of ['star*.txt', ':(glob)magic.txt', 'q?.txt', '[ab].txt']) {
    writeFileSync(path.join(root, odd), 'odd\n');
    written.push(odd);
  }
  return written;
}

describe('engine/git/git: worktree diff cost with many new files', () => {
  afterEach(cleanupTemp);

  it('marks 3,000 new files intent-to-add with ONE git add over the tree, never a pathspec per file', async () => {
    const repo = makeRepo({ 'a.txt': 'one\n', 'secret/keep.txt': 'old\n' });
    const wt = await createWorktree({ gitRoot: repo, id: `t_${Math.random().toString(16).slice(2, 10)}` });
    const written = writeManyFiles(wt.path, 3000, 60);
    writeFileSync(path.join(wt.path, 'secret', 'new.txt'), 'hidden\n');
    writeFileSync(path.join(wt.path, 'a.txt'), 'one\ntwo\n');

    const { result: diff, commands } = await tracedGit(() => worktreeDiff(wt.path, wt.base_ref, ['secret']));

    const adds = commands.filter((c) => /(^| )add /.test(c));
    assert.equal(adds.length, 1, `one git add, got:\n${adds.join('\n')}`);
    assert.doesNotMatch(adds[0] as string, /pathspec-from-file/);
    const created = diff.files.filter((f) => f.action === 'created').map((f) => f.path).sort();
    assert.deepEqual(created, [...written].sort());
    assert.deepEqual(diff.files.filter((f) => f.action === 'modified').map((f) => f.path), ['a.txt']);
    assert.ok(!diff.files.some((f) => f.path.startsWith('secret/')), 'the excluded folder stays out');
    assert.match(diff.patch, /\+\+\+ b\/star\*\.txt/);
  });
});

import { chmodSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import type { DelegateInput } from '../../src/engine/launch/delegate';
import type { GenericAgentDef } from '../../src/protocol';
import { startFixture } from '../engine/runtime/helpers';

/** The reliability suite's misbehaving agent (test/reliability/hostile-agent.mjs), as an [[agent]] template. */
export const hostileAgent: GenericAgentDef = { id: 'hostile', bin: process.execPath, args: [path.join(__dirname, 'hostile-agent.mjs')] };

/** Delegates a hostile-agent task through the real supervisor (worktree isolation unless overridden). */
export function startHostile(
  root: string,
  fixture: Record<string, unknown>,
  overrides: Partial<DelegateInput> = {},
  env: NodeJS.ProcessEnv = {},
): Promise<{ id: string; taskDir: string }> {
  return startFixture(root, fixture, { agent: 'hostile', generic_agent: hostileAgent, objective: `hostile ${String(fixture.mode)}`, ...overrides }, env);
}

/**
 * A `git` earlier on PATH that sleeps on `diff-index` (only the conclusion's diff runs it; worktree creation does not)
 * and records its pid in `pids`, so a test can see the supervisor ended it. Everything else goes to /usr/bin/git.
 */
export function hangingGit(): { dir: string; pids: string } {
  const dir = mkdtempSync(path.join(tmpdir(), 'caesar-hanging-git-'));
  const pids = path.join(dir, 'hung.pids');
  writeFileSync(path.join(dir, 'git'), `#!/bin/sh\ncase " $* " in *" diff-index "*) echo $$ >> '${pids}'; exec sleep 600;; esac\nexec /usr/bin/git "$@"\n`);
  chmodSync(path.join(dir, 'git'), 0o755);
  return { dir, pids };
}

/** Files `count` questions in `questionsDir` the way an asker does (the mailbox test and bench) (one JSON file each, named by its id). */
export function fileQuestions(questionsDir: string, count: number): void {
  mkdirSync(questionsDir, { recursive: true });
  const at = new Date().toISOString();
  for (let i = 0; i < count; i++) {
    const id = `q${String(i).padStart(5, '0')}`;
    writeFileSync(path.join(questionsDir, `${id}.json`), JSON.stringify({ id, question: `Question ${i}?`, asked_at: at }));
  }
}

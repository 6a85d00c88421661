import { promises as fs, readdirSync, type Dirent } from 'node:fs';
import * as path from 'node:path';
import type { Finding, TaskPaths } from '../../protocol';
import { writeJsonAtomic } from '../../base/atomic';

/*
 * A repository an agent plants inside its worktree (or, writing in place, inside the user's checkout): `src/.git` (a
 * folder, a `gitdir:` file or a link) whose config names a program (`core.fsmonitor`, a hook, a filter). Git never tracks a `.git`, so it is in no diff and never
 * applied; but whoever runs git in that folder later runs its program: the editor's own Git extension does as soon as
 * the task's diff opens a file there (it looks for the repository of every open editor's file, and `src/.git` is the
 * nearest). After the agent has run, every `.git` below the worktree's top level that was not there when the agent
 * started is moved aside into the task folder, with a high finding: nothing of the diff changes, nothing planted runs.
 */

/**
 * More directories than this and the walk stops (200,000 empty folders: 11-13 s with the load average at 17-20, ~3 s
 * extrapolated on a quiet machine): the task's result is then refused for review, never half-checked. Caesar's own git never looks
 * inside a nested repository (git-safety.ts), but the user's git and editor would.
 */
const WALK_LIMIT = 200_000;

/** The title of a finding that refuses the task's result (apply and land) until the person accepts it. */
export const NESTED_NOT_CHECKED = 'Nested repositories not checked';

const NO_SKIP: ReadonlySet<string> = new Set();

/**
 * Not walked in a checkout an in-place task writes: Caesar's own folders, whose worktrees (each with its `.git`)
 * other tasks create and remove while this one runs.
 */
export const CAESAR_FOLDERS: ReadonlySet<string> = new Set(['.caesar']);

export interface NestedGitWalk {
  /** '/'-separated paths of the `.git` entries below the top level (not the worktree's own `.git`). */
  entries: string[];
  /** The walk stopped at WALK_LIMIT directories. */
  truncated: boolean;
}

/**
 * Every entry named `.git` below `worktree`, its own top-level `.git` excepted. Links are not followed (a link named
 * `.git` is listed: git's discovery follows it), and a `.git` is not walked into.
 */
export function nestedGitEntries(worktree: string, skip: ReadonlySet<string> = NO_SKIP, limit = WALK_LIMIT): NestedGitWalk {
  const entries: string[] = [];
  const pending: string[] = [''];
  let walked = 0;
  while (pending.length) {
    if (++walked > limit) return { entries, truncated: true };
    const relative = pending.pop()!;
    // Synchronous: one folder after another through the thread pool took 3-4 times as long (20,000 folders: 1.2-1.6 s
    // against 0.36 s), and nothing else waits on this process while it concludes.
    const listing = listFolder(path.join(worktree, relative));
    for (const entry of listing) {
      const child = relative ? `${relative}/${entry.name}` : entry.name;
      if (entry.name === '.git') {
        if (relative) entries.push(child);
      } else if (entry.isDirectory() && !skip.has(entry.name)) {
        pending.push(child);
      }
    }
  }
  return { entries: entries.sort(), truncated: false };
}

function listFolder(folder: string): Dirent[] {
  try {
    return readdirSync(folder, { withFileTypes: true });
  } catch {
    return []; // gone, or unreadable to this user: to the user's git too
  }
}

/**
 * Moves aside, into `quarantine`, every nested `.git` of `worktree` that is not in `present` (those the task started
 * with: a worktree setup's submodules). The findings say what was moved and where it is kept.
 */
export async function moveAsideNestedGit(worktree: string, quarantine: string, present: ReadonlySet<string> = new Set(), skip: ReadonlySet<string> = NO_SKIP, limit = WALK_LIMIT): Promise<Finding[]> {
  const walk = nestedGitEntries(worktree, skip, limit);
  const planted = walk.entries.filter((entry) => !present.has(entry));
  const findings: Finding[] = [];
  if (walk.truncated) {
    findings.push({
      severity: 'critical',
      title: NESTED_NOT_CHECKED,
      detail: `${worktree} has more than ${limit} folders: it was not searched to the end for .git entries the agent may have planted. Apply and land refuse until you accept it; do not run git in its subfolders before you have looked.`,
    });
  }
  if (!planted.length) return findings;
  await fs.mkdir(quarantine, { recursive: true, mode: 0o700 });
  const moved: string[] = [];
  const removed: string[] = [];
  for (const [index, entry] of planted.entries()) {
    const from = path.join(worktree, ...entry.split('/'));
    const to = path.join(quarantine, `${index}-${entry.replace(/\//g, '__')}`);
    try {
      await fs.rename(from, to);
      moved.push(entry);
    } catch {
      // Another file system (a bind-mounted subfolder): not kept, but never left where git would find it.
      await fs.rm(from, { recursive: true, force: true });
      removed.push(entry);
    }
  }
  const listed = (paths: string[]) => paths.slice(0, 10).join(', ') + (paths.length > 10 ? ` and ${paths.length - 10} more` : '');
  findings.push({
    severity: 'high',
    title: 'Nested repository moved aside',
    detail:
      `The agent left ${planted.length === 1 ? 'a git repository' : 'git repositories'} in ${worktree} (${listed(planted)}): git run in ${planted.length === 1 ? 'that folder' : 'those folders'} ` +
      "(your editor's Git extension, when the diff opens a file there) would have used its configuration, which can name programs. " +
      `${moved.length ? `Moved to ${quarantine}` : ''}${moved.length && removed.length ? '; ' : ''}${removed.length ? `removed: ${listed(removed)}` : ''}. ` +
      'A .git is never part of the diff: nothing of the task changes.',
  });
  return findings;
}

/** Records the `.git` entries a worktree starts with, when a setup, copy or link may have made some (submodules). */
export async function recordNestedGitAtStart(worktree: string, file: string, skip: ReadonlySet<string> = NO_SKIP): Promise<void> {
  const { entries } = nestedGitEntries(worktree, skip);
  if (entries.length) await writeJsonAtomic(file, { entries });
}

/** After the agent (and the checks, which run its code): what it planted, moved aside; what the task began with, kept. */
export async function moveAsidePlantedGit(
  worktree: string,
  paths: Pick<TaskPaths, 'nestedGitAtStart' | 'nestedGitMovedAside'>,
  skip: ReadonlySet<string> = NO_SKIP,
): Promise<Finding[]> {
  try {
    return await moveAsideNestedGit(worktree, paths.nestedGitMovedAside, await presentAtStart(paths.nestedGitAtStart), skip);
  } catch (err) {
    const why = err instanceof Error ? err.message : String(err);
    return [{ severity: 'critical', title: NESTED_NOT_CHECKED, detail: `The .git entries the agent may have left below ${worktree} could not be moved aside (${why}): apply and land refuse until you accept it; do not run git in its subfolders before you have looked.` }];
  }
}

/** What refuses the task's result among `findings` (result.json's repository_changes, which apply and land honour). */
export function uncheckedNestedRepositories(findings: readonly Finding[]): string[] {
  return findings.filter((f) => f.title === NESTED_NOT_CHECKED).map((f) => `nested repositories not checked: ${f.detail}`);
}

/** The record of the start; none (or one that is not ours to trust) keeps nothing, which is the safe side. */
async function presentAtStart(file: string): Promise<Set<string>> {
  const text = await fs.readFile(file, 'utf8').catch(() => undefined);
  if (!text) return new Set();
  try {
    const entries = (JSON.parse(text) as { entries?: unknown }).entries;
    return new Set(Array.isArray(entries) ? entries.filter((e): e is string => typeof e === 'string') : []);
  } catch {
    return new Set();
  }
}

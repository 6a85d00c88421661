import { existsSync } from 'node:fs';
import * as path from 'node:path';
import { literalPathspec, runGitNeutral, splitNul } from './git';
import { checkObjectId, checkRecordPath, rootRepository } from './record-checks';
import type { TaskSummary } from '../store/store';

export interface Overlap {
  file: string;
  /** Other tasks already applied that changed this file too. */
  appliedBy: string[];
}

/**
 * The task's files that the workspace no longer holds as they were at the task's base commit: changed since by the
 * user (committed or not) or by another task applied in the meantime. Applying over them may still succeed (hunks
 * elsewhere in the file) but mixes the task's work with changes its agent never saw: the caller warns first.
 * Computed with git in this root's repository (read-only, neutral config); files this task applied itself are left out.
 */
export async function changedSinceBase(root: string, summary: TaskSummary, files: string[], others: TaskSummary[]): Promise<Overlap[]> {
  const base = checkObjectId(summary.state.base_ref);
  const rels = files.map((f) => checkRecordPath(f, 'file'));
  const repo = await rootRepository(root);
  if (!repo || rels.length === 0) return [];
  const cwd = repo.gitRoot;
  const specs = ['--', ...rels.map(literalPathspec)];
  // Tracked files that differ between the base commit and the working tree (commits since base included).
  const diff = await runGitNeutral(['diff', '--no-ext-diff', '--no-textconv', '--no-renames', '--name-only', '-z', '--end-of-options', base, ...specs], { cwd });
  const changed = new Set(splitNul(diff.stdout));
  // A file absent from the base (the task created it) that exists in the workspace now was created by someone else.
  const inBase = new Set(splitNul((await runGitNeutral(['ls-tree', '-r', '--name-only', '-z', '--end-of-options', base, ...specs], { cwd })).stdout));
  for (const rel of rels) if (!inBase.has(rel) && existsSync(path.join(cwd, ...rel.split('/')))) changed.add(rel);
  const ownApplied = new Set(summary.applied?.files ?? []);
  return rels
    .filter((rel) => changed.has(rel) && !ownApplied.has(rel))
    .map((file) => ({
      file,
      appliedBy: others.filter((o) => o.id !== summary.id && o.applied?.files.includes(file)).map((o) => o.id),
    }));
}

import type { Finding } from '../../protocol';
import { inplaceDiff, takeSnapshot, type Snapshot, type SnapshotRepo } from './reconcile';
import { ignoredWritesFinding, recordIgnoredAtStart } from './ignored-writes';

/*
 * A worktree is not a sandbox: an agent can write `../../x` or an absolute path into the user's checkout. We cannot
 * prevent it, so we detect it: the checkout's full working-tree state (the same snapshot an in-place task takes) at
 * the start of a worktree task, compared with the state at its end; its ignored files (node_modules, .env), which
 * that snapshot leaves out, by their change time (ignored-writes.ts), for an in-place task too.
 */

/**
 * The user's checkout before the agent starts; undefined when it cannot be taken (the task runs unguarded). `repo`:
 * the checkout's toplevel and index when the caller already knows them (one git process less).
 */
export async function guardCheckout(gitRoot: string, repo: SnapshotRepo | undefined, taskDir: string): Promise<Snapshot | undefined> {
  return snapshotWithIgnored(gitRoot, repo, taskDir).catch(() => undefined);
}

/**
 * A snapshot of the checkout (git's view: tracked and untracked files) with the record of its ignored files, which
 * git's view leaves out (ignored-writes.ts). A failure to record those is kept and becomes a finding at the end.
 */
export async function snapshotWithIgnored(workspace: string, repo: SnapshotRepo | undefined, taskDir: string): Promise<Snapshot> {
  const snapshot = takeSnapshot(workspace, repo);
  snapshot.catch(() => undefined);
  const gitRoot = repo?.gitRoot ?? (await snapshot).gitRoot;
  const ignored = await recordIgnoredAtStart(gitRoot, taskDir).catch((err: unknown) => ({ error: err instanceof Error ? err.message : String(err) }));
  return { ...(await snapshot), ignored };
}

/** The findings for ignored files the task changed in the checkout `before` was taken of (none recorded: none). */
export async function ignoredFilesFindings(before: Snapshot | undefined, who: 'worktree' | 'inplace'): Promise<Finding[]> {
  const ignored = before?.ignored;
  if (!before || !ignored) return [];
  if ('error' in ignored) {
    return [{ severity: 'high', title: 'Ignored files not checked', detail: `The ignored files of your checkout (${before.gitRoot}) could not be recorded at the task's start (${ignored.error}): writes into them (node_modules, .env) are not reported. Review them before you trust the result.` }];
  }
  return ignoredWritesFinding(before.gitRoot, ignored, who);
}

/** A finding naming every file of the checkout that changed since `before`, or undefined when none did. */
export async function checkoutWritesFinding(before: Snapshot): Promise<Finding | undefined> {
  let changed: string[];
  try {
    const diff = await inplaceDiff(before.gitRoot, before, [], { patch: false });
    changed = diff.files.map((f) => f.path);
  } catch (err) {
    return {
      severity: 'medium',
      title: 'Checkout not verified',
      detail: `Whether the agent wrote into your checkout could not be checked: ${err instanceof Error ? err.message : String(err)}.`,
    };
  }
  if (!changed.length) return undefined;
  const shown = changed.length > 20 ? `${changed.slice(0, 20).join(', ')} and ${changed.length - 20} more` : changed.join(', ');
  return {
    severity: 'high',
    title: 'Your checkout changed during the task',
    detail:
      `While the agent worked in its worktree, these files of your checkout (${before.gitRoot}) changed: ${shown}. ` +
      'A worktree is not a sandbox: the agent may have written outside it. If you (or an in-place task) edited them, ignore this.',
  };
}

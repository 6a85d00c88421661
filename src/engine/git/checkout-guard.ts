import type { Finding } from '../../protocol';
import { inplaceDiff, takeSnapshot, type Snapshot, type SnapshotRepo } from './reconcile';

/*
 * A worktree is not a sandbox: an agent can write `../../x` or an absolute path into the user's checkout. We cannot
 * prevent it, so we detect it: the checkout's full working-tree state (the same snapshot an in-place task takes) at
 * the start of a worktree task, compared with the state at its end.
 */

/**
 * The user's checkout before the agent starts; undefined when it cannot be taken (the task runs unguarded). `repo`:
 * the checkout's toplevel and index when the caller already knows them (one git process less).
 */
export async function guardCheckout(gitRoot: string, repo?: SnapshotRepo): Promise<Snapshot | undefined> {
  return takeSnapshot(gitRoot, repo).catch(() => undefined);
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

import { gitText } from '../git/git';
import { throwawayCommit, type ReplayConflict } from '../git/land-replay';

/**
 * A conflict goes back to the agent that made the change, as a Continue with Feedback (continue-task.ts) whose
 * worktree starts from the new HEAD: `base_commit` is the merged tree WITH git's conflict markers, its parent the
 * checkout's state (HEAD, plus the tasks landed before in the same queue). The follow-up's base_ref is that parent
 * (isolation.ts takes `<base_commit>^1`), so its diff — and the next land — carries the old change with the
 * conflicts resolved, against the new HEAD.
 */
export interface LandFollowUp {
  base_commit: string;
  /** The follow-up's objective: the conflicts, file by file, with their lines. */
  feedback: string;
  /** The exact command, as argv: `caesar continue <id> --base-commit <sha> <feedback>`. */
  command: string[];
}

export async function landFollowUp(options: {
  checkout: string;
  head: string;
  onto: string;
  mergedTree: string;
  taskId: string;
  conflicts: readonly ReplayConflict[];
}): Promise<LandFollowUp> {
  const { checkout, head, taskId } = options;
  const headTree = await gitText(['rev-parse', `${head}^{tree}`], checkout);
  const parent = options.onto === headTree ? head : await throwawayCommit(checkout, options.onto, head, 'caesar land: landed so far');
  const base_commit = await throwawayCommit(checkout, options.mergedTree, parent, `caesar land: ${taskId} merged onto ${head.slice(0, 12)}, with conflicts`);
  const feedback = followUpFeedback(head, options.conflicts);
  return { base_commit, feedback, command: ['caesar', 'continue', taskId, '--base-commit', base_commit, feedback] };
}

function followUpFeedback(head: string, conflicts: readonly ReplayConflict[]): string {
  const lines = conflicts.map((c) => {
    const where = c.hunks.length ? `lines ${c.hunks.map((h) => `${h.start}-${h.end}`).join(', ')}` : c.messages.join('; ') || 'the whole file';
    return `- ${c.path}: ${where}`;
  });
  return [
    `Your change could not be landed: it conflicts with what was committed since you started (now HEAD ${head.slice(0, 12)}).`,
    'Your work has been merged onto the new HEAD in your working directory; git marked the conflicts (<<<<<<< … >>>>>>>) in:',
    ...lines,
    'Resolve each conflict keeping both intents (the new HEAD and your change), remove every marker, and make sure the checks still pass.',
  ].join('\n');
}

/** The command as one line a user can paste into a POSIX shell. */
export function shellCommand(argv: readonly string[]): string {
  return argv.map((a) => (/^[A-Za-z0-9_./:=@-]+$/.test(a) ? a : `'${a.replace(/'/g, `'\\''`)}'`)).join(' ');
}

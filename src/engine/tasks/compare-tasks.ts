import { rankCandidates, type RankedCandidate } from '../../common/ranking';
import { diffTask, requireTaskView } from './operations';

/**
 * Best of N (issue 25, issue 33 item 4): the tasks ranked on what Caesar observed, each with the identity of its
 * change as git computes it now (the digest of its patch against its base), so that tasks which made the very same
 * change are said to. `caesar compare` and the editor's Compare Tasks read this one ranking.
 */
export async function rankTasks(root: string, ids: readonly string[]): Promise<RankedCandidate[]> {
  const candidates = await Promise.all(
    ids.map(async (id) => {
      const view = await requireTaskView(root, id);
      const diff = await diffTask(root, id).catch(() => undefined);
      return diff?.patch_digest ? { ...view, change: diff.patch_digest } : view;
    }),
  );
  return rankCandidates(candidates);
}

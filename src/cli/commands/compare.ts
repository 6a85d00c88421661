import type { Command } from 'commander';
import type { RankedCandidate } from '../../common/ranking';
import { rankTasks } from '../../engine/tasks';
import { formatDuration, plural } from '../../common/format';
import { addCommonOptions, requireTask, storeFor, taskIdArgument, type CommonOptions } from '../common';
import { shortId, table, termSafe } from '../format';
import { UsageError, printJson, type CliIo } from '../io';

/**
 * `caesar compare <id>...`: best of N on evidence. The same ranking as the editor's Compare Tasks
 * (src/common/ranking.ts): checks Caesar ran, then git's diff size, then duration and cost, with one line per task
 * saying why it stands where it does.
 */
export function registerCompare(program: Command, io: CliIo): void {
  addCommonOptions(
    program
      .command('compare')
      .description('Rank tasks (e.g. one objective run on several agents) by checks passed, then diff size, duration and cost')
      .addArgument(taskIdArgument('<ids...>', 'two or more task ids')),
  ).action((ids: string[], opts: CommonOptions) => compare(io, ids, opts));
}

async function compare(io: CliIo, ids: string[], opts: CommonOptions): Promise<void> {
  const unique = [...new Set(ids)];
  if (unique.length < 2) throw new UsageError('Name two tasks or more to compare (see `caesar ps`).');
  const store = storeFor(io, opts);
  for (const id of unique) await requireTask(store, id);
  const ranked = await rankTasks(store.root, unique);
  if (opts.json) {
    printJson(io, ranked);
    return;
  }
  io.out(rankingText(ranked).join('\n'));
}

function rankingText(ranked: readonly RankedCandidate[]): string[] {
  const rankOf = new Map(ranked.map((r, i) => [r.id, i + 1]));
  // Numbered by position, as the why lines name them ("after #2"); tied tasks say so there.
  const rows = ranked.map((r, i) => [
    `#${i + 1}`,
    termSafe(shortId(r.id)),
    termSafe(r.agent),
    r.status,
    r.checks.total === 0 ? '-' : `${r.checks.passed}/${r.checks.total}`,
    `${plural(r.changed_lines, 'line')}, ${plural(r.files, 'file')}${r.same_change_as ? ` (same as #${rankOf.get(r.same_change_as)})` : ''}`,
    r.duration_ms === undefined ? '-' : formatDuration(r.duration_ms),
    r.cost_usd === undefined ? '-' : `$${r.cost_usd.toFixed(2)}`,
  ]);
  // A record may come from a cloned repository: the agent name in each line is escaped like the table's.
  const why = ranked.map((r, i) => `#${i + 1} ${termSafe(r.agent)}: ${termSafe(r.why)}`);
  return [...table([['#', 'ID', 'AGENT', 'STATUS', 'CHECKS', 'DIFF', 'DURATION', 'COST'], ...rows]), '', 'Why:', ...why];
}

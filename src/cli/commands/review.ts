import type { Command } from 'commander';
import { noun, plural } from '../../common/format';
import { existsSync } from 'node:fs';
import { applyTask, concludeLostTasks, discardTask, isActive, worktreeDiff, type ConcludedTask, type FileChange, type TaskSummary, type TaskView } from '../../engine/tasks';
import { taskLifecycle } from '../../common/lifecycle';
import { cliAdvice, nextActions, type TaskActionId } from '../../common/next-actions';
import { collectGarbage, type GcEntry, type GcResult } from '../../engine/tasks/gc';
import { addCommonOptions, requireTask, splitList, storeFor, taskIdArgument, type CommonOptions } from '../common';
import { styleFor, table, termSafe, termSafeBlock, type Style } from '../format';
import { ExitCode, UsageError, printJson, type CliIo } from '../io';
import { DIFF_MAX_FILES_SHOWN, DIFF_MAX_PATCH_LINES, capLines, formatCount } from '../output-caps';
import { formatBytes } from '../../protocol';

export function registerReview(program: Command, io: CliIo): void {
  addCommonOptions(
    program
      .command('diff')
      .description("Show a task's changes against the commit it started from: files with +/- counts, then the patch")
      .addArgument(taskIdArgument('<id>', 'task id'))
      .option('--stat', 'only the list of files')
      .option('--all', `every file and the whole patch (without it: ${DIFF_MAX_FILES_SHOWN} files, ${DIFF_MAX_PATCH_LINES} lines of patch, then how much was left out)`),
  ).action((id: string, opts: DiffOptions) => diff(io, id, opts));

  addCommonOptions(
    program
      .command('apply')
      .description("Apply a worktree task's changes to your workspace, all or nothing (your uncommitted edits stay)")
      .addArgument(taskIdArgument('<id>', 'task id'))
      .option('--files <list>', 'only these repository-relative paths (comma-separated)', splitList)
      .option('--accept-repository-changes', "apply although the repository's git dir (hooks, config, info/, refs) changed during the task"),
  ).action((id: string, opts: ApplyOptions) => apply(io, id, opts));

  addCommonOptions(
    program.command('discard').description("Remove a finished task's worktree and branch (its task record stays)").addArgument(taskIdArgument('<id>', 'task id')),
  ).action((id: string, opts: CommonOptions) => discard(io, id, opts));

  addCommonOptions(
    program
      .command('gc')
      .description('Remove task worktrees that hold nothing unapplied; keeps modified ones unless --force')
      .option('--dry-run', 'say what would be removed, change nothing')
      .option('--force', 'also remove worktrees with unapplied changes (never active tasks)'),
  ).action((opts: CommonOptions & { dryRun?: boolean; force?: boolean }) => gc(io, opts));
}

const ACTION_LETTER: Record<FileChange['action'], string> = { created: 'A', modified: 'M', deleted: 'D', renamed: 'R' };

function fileLines(files: readonly FileChange[], style: Style): string[] {
  return table(
    files.map((f) => [
      ACTION_LETTER[f.action],
      // File names are the agent's choice: a name may hold ESC sequences, tabs or newlines.
      f.old_path ? `${termSafe(f.old_path)} → ${termSafe(f.path)}` : termSafe(f.path),
      f.too_large ? `too large to show (${formatBytes(f.size ?? 0)})` : f.binary ? 'binary' : `${style.green(`+${f.additions}`)} ${style.red(`-${f.deletions}`)}`,
    ]),
  ).map((line) => `  ${line}`);
}

function colourPatch(patch: string, style: Style): string {
  if (!style.enabled) return patch;
  return patch
    .split('\n')
    .map((line) => {
      if (line.startsWith('+++') || line.startsWith('---') || line.startsWith('diff --git')) return style.bold(line);
      if (line.startsWith('+')) return style.green(line);
      if (line.startsWith('-')) return style.red(line);
      if (line.startsWith('@@')) return style.cyan(line);
      return line;
    })
    .join('\n');
}

/** A task that ran in place has no worktree: its changes are already in the workspace; result.json lists them. */
function hasNoWorktree(view: TaskView): boolean {
  return !view.state.worktree || !view.state.base_ref;
}

type DiffOptions = CommonOptions & { stat?: boolean; all?: boolean };

async function diff(io: CliIo, id: string, opts: DiffOptions): Promise<void> {
  const store = storeFor(io, opts);
  const view = await requireTask(store, id);
  const { state } = view;
  const style = styleFor(io);
  if (hasNoWorktree(view)) {
    const files = view.result?.diff?.files ?? [];
    const why =
      state.isolation === 'inplace'
        ? `Task ${id} ran in place: there is no worktree, its changes are already in your workspace (${state.workspace}).`
        : `Task ${id} has no worktree${isActive(view.observed) ? ' yet' : ''} (status ${view.observed}).`;
    if (opts.json) {
      printJson(io, { task_id: id, worktree: null, isolation: state.isolation, files, is_empty: files.length === 0, patch: null, message: why });
      return;
    }
    io.out(termSafe(why));
    if (view.result?.diff) {
      const total = view.result.diff.files_total ?? files.length;
      io.out(files.length ? ['Files it changed, according to git:', ...cappedFileLines(files, total, style, Boolean(opts.all))].join('\n') : 'It changed no file, according to git.');
    }
    return;
  }
  if (!existsSync(state.worktree!)) {
    throw new ExitCode(1, `The worktree of task ${id} (${state.worktree}) no longer exists (discarded or collected by gc): there is no diff to show.`);
  }
  const result = await worktreeDiff(state.worktree!, state.base_ref!, state.excluded_paths);
  const patch = opts.all ? { shown: result.patch, omittedLines: 0, omittedBytes: 0 } : capLines(result.patch);
  if (opts.json) {
    printJson(io, {
      task_id: id,
      worktree: state.worktree,
      base_ref: state.base_ref,
      files: result.files,
      is_empty: result.is_empty,
      patch_digest: result.patch_digest,
      ...(opts.stat ? {} : { patch: patch.shown }),
      ...(!opts.stat && patch.omittedBytes ? { patch_omitted: { lines: patch.omittedLines, bytes: patch.omittedBytes } } : {}),
    });
    return;
  }
  if (result.is_empty) {
    io.out('No changes.');
    return;
  }
  const header = `${plural(result.files.length, 'file')} changed in ${termSafe(state.worktree!)} since ${termSafe(state.base_ref!.slice(0, 12))}:`;
  io.out([header, ...cappedFileLines(result.files, result.files.length, style, Boolean(opts.all))].join('\n'));
  if (opts.stat) return;
  io.out(`\n${colourPatch(termSafeBlock(patch.shown.replace(/\n$/, '')), style)}`);
  if (patch.omittedBytes) {
    io.out(`\n… ${formatCount(patch.omittedLines)} more ${noun(patch.omittedLines, 'line')} of patch (${formatBytes(patch.omittedBytes)}) not shown: caesar diff ${id} --all shows the whole patch.`);
  }
  adviseNext(io, view, id, ['review']);
}

/**
 * The "next:" line after a command, from the one lifecycle the editor and the MCP server read too
 * (src/common/next-actions.ts), leaving out what the command just did.
 */
function adviseNext(io: CliIo, summary: TaskSummary, id: string, done: readonly TaskActionId[]): void {
  const advice = cliAdvice(nextActions(taskLifecycle(summary)).filter((a) => !done.includes(a.id)), id);
  if (advice) io.out(`\n${advice}`);
}

/** The file table, cut at DIFF_MAX_FILES_SHOWN rows unless `all`, then how many more there are. */
function cappedFileLines(files: readonly FileChange[], total: number, style: Style, all: boolean): string[] {
  const shown = all ? files : files.slice(0, DIFF_MAX_FILES_SHOWN);
  const lines = fileLines(shown, style);
  if (total > shown.length) lines.push(`  … and ${formatCount(total - shown.length)} more ${noun(total - shown.length, 'file')}${all ? '' : ' (--all lists every one)'}`);
  return lines;
}

type ApplyOptions = CommonOptions & { files?: string[]; acceptRepositoryChanges?: boolean };

async function apply(io: CliIo, id: string, opts: ApplyOptions): Promise<void> {
  const store = storeFor(io, opts);
  const view = await requireTask(store, id);
  if (isActive(view.observed)) {
    throw new ExitCode(1, `Task ${id} is still ${view.observed}: wait for it to finish (caesar watch ${id}) or cancel it first.`);
  }
  if (opts.files?.length && !hasNoWorktree(view) && existsSync(view.state.worktree!)) await assertFilesInDiff(view, opts.files);
  const outcome = await applyTask({
    root: store.root,
    state: view.state,
    ...(opts.files?.length ? { files: opts.files } : {}),
    ...(opts.acceptRepositoryChanges ? { acceptRepositoryChanges: true } : {}),
  });
  if (opts.json) printJson(io, { task_id: id, ...outcome });
  else if (outcome.applied) {
    const listed = outcome.files.slice(0, DIFF_MAX_FILES_SHOWN).map((f) => `  ${termSafe(f)}`);
    if (outcome.files.length > listed.length) listed.push(`  … and ${formatCount(outcome.files.length - listed.length)} more ${noun(outcome.files.length - listed.length, 'file')}`);
    io.out(outcome.empty ? termSafeBlock(outcome.message) : [termSafeBlock(outcome.message), ...listed].join('\n'));
    // Read again: applied.json is written now, so the advice is what is left after this apply.
    const after = await store.summary(view.id).catch(() => undefined);
    if (after && !outcome.empty) adviseNext(io, after, id, ['review']);
  } else if (outcome.reason === 'conflicts') {
    io.out(`Nothing was written: ${outcome.conflicts.length === 1 ? '1 file does' : `${outcome.conflicts.length} files do`} not apply to your workspace as it is now:`);
    io.out(outcome.conflicts.map((f) => `  ${termSafe(f)}`).join('\n'));
    io.out(termSafeBlock(outcome.message));
  } else {
    io.out(termSafeBlock(outcome.message));
  }
  // Not applying is a failure whatever the reason, also without a worktree (MCP caesar_apply answers the same way),
  // except when the work is in the workspace already: a second apply finds what the first one left, and says so.
  if (!outcome.applied && outcome.reason !== 'already_applied') throw new ExitCode(1);
}

/** `--files` naming a path the task did not change is a typo: say so instead of applying less than asked. */
async function assertFilesInDiff(view: TaskView, files: string[]): Promise<void> {
  const { state } = view;
  const changed = await worktreeDiff(state.worktree!, state.base_ref!, state.excluded_paths);
  const known = new Set(changed.files.flatMap((f) => (f.old_path ? [f.path, f.old_path] : [f.path])));
  const unknown = files.filter((f) => !known.has(f.replace(/^\.\//, '')));
  if (unknown.length) {
    throw new UsageError(`Task ${view.id} did not change ${unknown.join(', ')}. Its files: ${[...known].join(', ') || '(none)'}.`);
  }
}

async function discard(io: CliIo, id: string, opts: CommonOptions): Promise<void> {
  const store = storeFor(io, opts);
  const view = await requireTask(store, id);
  if (isActive(view.observed)) throw new ExitCode(1, `Task ${id} is still ${view.observed}: cancel it before discarding its worktree.`);
  const outcome = await discardTask({ root: store.root, state: view.state });
  if (opts.json) printJson(io, { task_id: id, ...outcome });
  else io.out(termSafeBlock(outcome.message));
  if (!outcome.discarded) throw new ExitCode(1);
}

async function gc(io: CliIo, opts: CommonOptions & { dryRun?: boolean; force?: boolean }): Promise<void> {
  const store = storeFor(io, opts);
  // Lost tasks first: concluding them stops the agents they orphaned and lets the worktree rules below apply.
  const concluded = await concludeLostTasks(store.root, { dryRun: Boolean(opts.dryRun) });
  const result = await collectGarbage({ root: store.root, dryRun: Boolean(opts.dryRun), force: Boolean(opts.force) });
  const failed = result.entries.filter((e) => e.reason === 'inspection_failed');
  if (opts.json) printJson(io, { ...result, concluded });
  else io.out([...renderConcluded(concluded, Boolean(opts.dryRun)), ...renderGc(result, styleFor(io))].join('\n'));
  if (failed.length) throw new ExitCode(1, `${failed.length} worktree(s) could not be inspected and were kept.`);
}

function renderConcluded(concluded: ConcludedTask[], dryRun: boolean): string[] {
  if (!concluded.length) return [];
  const lines = [dryRun ? 'Lost tasks that would be concluded as failed:' : 'Lost tasks concluded as failed (their supervisor had died):'];
  for (const t of concluded) {
    const notes = [t.agent_stopped ? 'its orphaned agent was stopped' : '', t.changed_files ? `${plural(t.changed_files, 'changed file')} kept for review` : '']
      .filter(Boolean)
      .join('; ');
    lines.push(`  ${t.id}${t.supervisor_pid ? ` (supervisor pid ${t.supervisor_pid})` : ''}${notes ? ` — ${notes}` : ''}`);
  }
  return [...lines, ''];
}

function renderGc(result: GcResult, style: Style): string[] {
  if (result.entries.length === 0) return ['No task worktree to collect.'];
  const rows = [
    ['ID', 'ORIGIN', 'DECISION', 'REASON'].map((h) => style.bold(h)),
    ...result.entries.map((e) => [
      termSafe(e.id),
      e.orphan ? 'orphan' : termSafe(e.status ?? '-'),
      decision(e, style),
      termSafe(e.reason + (e.error ? ` (${e.error})` : '')),
    ]),
  ];
  const lines = table(rows);
  lines.push(
    '',
    result.dry_run
      ? `Dry run: ${result.would_remove} would be removed, ${result.kept} kept. Nothing was changed.`
      : `${result.removed} removed, ${result.kept} kept.`,
  );
  const modified = result.entries.filter((e) => e.action === 'kept' && (e.reason === 'modified' || e.reason === 'not_in_checkout'));
  if (modified.length) {
    lines.push('', 'Kept because they hold unapplied work:');
    for (const e of modified) {
      lines.push(e.orphan ? `  ${termSafe(e.path)}  (no task record: inspect it there)` : `  ${e.id}: review with \`caesar diff ${e.id}\`, then \`caesar apply ${e.id}\` or \`caesar discard ${e.id}\``);
    }
    lines.push('  `caesar gc --force` removes them anyway.');
  }
  return lines;
}

function decision(entry: GcEntry, style: Style): string {
  if (entry.action === 'removed') return style.green('removed');
  if (entry.action === 'would_remove') return style.yellow('would remove');
  return 'kept';
}

import * as vscode from 'vscode';
import { existsSync } from 'node:fs';
import { taskLifecycle } from '../../common/lifecycle';
import { taskVersionPath, type TaskSummary } from '../../engine/tasks';
import { pickMany, pickOne } from '../picker';
import { UNTRUSTED_REVIEW } from '../review/baseContent';
import { baseSideOf } from '../review/openChange';
import { targetOf } from '../review/target';
import type { LiveTasks } from '../tasks/liveTasks';
import { runNumbers, taskTitle } from '../../common/titles';
import { compareMarkdown } from './compareTable';

/** `caesar-compare:/Compare.md?<id>,<id>…`: the comparison of those tasks, re-rendered when any of them changes. */
export const COMPARE_SCHEME = 'caesar-compare';
/** `caesar-compare:/absent/<file>`: the empty side of a diff, for a task that deleted or never had the file. */
const ABSENT_PREFIX = '/absent/';

export interface CompareDeps {
  tasks: LiveTasks;
  log: vscode.LogOutputChannel;
}

export interface CompareShown {
  uri: vscode.Uri;
  ids: string[];
  content: string;
}

export interface Compare extends vscode.Disposable {
  compare(ids: string[]): Promise<CompareShown>;
  compareFile(file: string, ids: [string, string]): Promise<[vscode.Uri, vscode.Uri] | undefined>;
}

/** Serves the comparison documents (and the empty side of a diff); fires a change when a compared task changes. */
class CompareDocuments implements vscode.TextDocumentContentProvider, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.changed.event;
  private readonly open = new Map<string, vscode.Uri>();
  private readonly subscription: vscode.Disposable;

  constructor(private readonly tasks: LiveTasks) {
    this.subscription = tasks.onDidChange((ids) => {
      for (const uri of this.open.values()) if (idsOf(uri).some((id) => ids.includes(id))) this.changed.fire(uri);
    });
  }

  uriFor(ids: string[]): vscode.Uri {
    const uri = vscode.Uri.from({ scheme: COMPARE_SCHEME, path: `/Compare ${ids.length} tasks.md`, query: ids.join(',') });
    this.open.set(uri.toString(), uri);
    return uri;
  }

  provideTextDocumentContent(uri: vscode.Uri): string {
    if (uri.path.startsWith(ABSENT_PREFIX)) return '';
    const summaries = idsOf(uri).map((id) => this.tasks.get(id)).filter((s): s is TaskSummary => s !== undefined);
    return compareMarkdown(summaries);
  }

  dispose(): void {
    this.subscription.dispose();
    this.changed.dispose();
  }
}

function idsOf(uri: vscode.Uri): string[] {
  return uri.query ? uri.query.split(',').filter(Boolean) : [];
}

/**
 * "Compare Tasks" (the tasks of one objective, or the tasks selected in the tree: a Markdown table, one column per
 * task) and "Compare File Across Tasks…" (two tasks' versions of a file in the native diff editor).
 */
export function createCompare(deps: CompareDeps): Compare {
  const { tasks, log } = deps;
  const documents = new CompareDocuments(tasks);
  const report = (what: string) => (err: Error) => {
    log.warn(`${what}: ${err.message}`);
    void vscode.window.showErrorMessage(`Caesar: ${err.message}`);
    return undefined;
  };

  async function compare(ids: string[]): Promise<CompareShown> {
    const uri = documents.uriFor(ids);
    const document = await vscode.workspace.openTextDocument(uri);
    await vscode.window.showTextDocument(document, { preview: false });
    return { uri, ids, content: document.getText() };
  }

  async function compareFile(file: string, ids: [string, string]): Promise<[vscode.Uri, vscode.Uri] | undefined> {
    if (!vscode.workspace.isTrusted) {
      void vscode.window.showWarningMessage(`Caesar: ${UNTRUSTED_REVIEW}`);
      return undefined;
    }
    const [left, right] = await Promise.all(ids.map((id) => versionOf(tasks, id, file)));
    const numbers = runNumbers(tasks.list());
    // Named as the tree names them (agent, run number among re-runs), not by id.
    const name = (id: string) => `${tasks.get(id)?.state.agent ?? id}${numbers.has(id) ? ` #${numbers.get(id)}` : ''}`;
    await vscode.commands.executeCommand('vscode.diff', left, right, `${file} (${name(ids[0])} ↔ ${name(ids[1])})`);
    return [left!, right!];
  }

  const disposables: vscode.Disposable[] = [
    documents,
    vscode.workspace.registerTextDocumentContentProvider(COMPARE_SCHEME, documents),
    vscode.commands.registerCommand('caesar.compareTasks', async (arg?: unknown, selection?: unknown) => {
      const ids = await tasksToCompare(tasks, arg, selection);
      return ids ? compare(ids).catch(report('compare tasks')) : undefined;
    }),
    vscode.commands.registerCommand('caesar.compareFile', async (file?: unknown, a?: unknown, b?: unknown) => {
      const fromTree = typeof file === 'object' && file !== null && !(file instanceof vscode.Uri) ? targetOf(tasks, file) : undefined;
      if (fromTree?.files?.length === 1) {
        // A changed file in the tree: that task's version against the other tasks of its objective.
        const others = sameObjective(tasks, tasks.get(fromTree.taskId)!).map((s) => s.id).filter((id) => id !== fromTree.taskId);
        const compared = [fromTree.taskId, ...others];
        const pair = compared.length === 2 ? (compared as [string, string]) : await pickTwo(tasks, compared, fromTree.files[0]!);
        return pair ? compareFile(fromTree.files[0]!, pair).catch(report('compare file')) : undefined;
      }
      // Tasks first, then the file: the files offered are those the two tasks changed.
      const pair = typeof a === 'string' && typeof b === 'string' ? ([a, b] as [string, string]) : await pickTwo(tasks, comparedInFront() ?? tasks.list().map((s) => s.id));
      if (!pair) return undefined;
      const chosenFile = typeof file === 'string' ? file : await pickFile(tasks, pair);
      return chosenFile ? compareFile(chosenFile, pair).catch(report('compare file')) : undefined;
    }),
  ];
  return {
    compare,
    compareFile,
    dispose: () => {
      for (const d of disposables) d.dispose();
    },
  };
}

/** The tasks of the comparison document in front, if one is. */
function comparedInFront(): string[] | undefined {
  const uri = vscode.window.activeTextEditor?.document.uri;
  return uri?.scheme === COMPARE_SCHEME && !uri.path.startsWith(ABSENT_PREFIX) ? idsOf(uri) : undefined;
}

/**
 * Which tasks: several selected in the tree (or ids from a caller); one task means every task of its objective in
 * its folder; nothing means a pick among the objectives run more than once, or of any tasks.
 */
async function tasksToCompare(tasks: LiveTasks, arg: unknown, selection: unknown): Promise<string[] | undefined> {
  const given = Array.isArray(arg) ? arg : Array.isArray(selection) && selection.length > 1 ? selection : arg !== undefined ? [arg] : [];
  const ids = [...new Set(given.map((n) => targetOf(tasks, n)?.taskId).filter((id): id is string => id !== undefined))];
  if (ids.length > 1) return ids;
  if (ids.length === 1) {
    const one = tasks.get(ids[0]!)!;
    const same = sameObjective(tasks, one);
    if (same.length > 1) return same.map((s) => s.id);
    void vscode.window.showInformationMessage('Caesar: no other task has this objective. Select several tasks in the Tasks view (Ctrl/Cmd-click), then Compare Tasks.');
    return undefined;
  }
  return pickTasks(tasks);
}

function sameObjective(tasks: LiveTasks, one: TaskSummary): TaskSummary[] {
  return tasks.list(tasks.rootOf(one.id)).filter((s) => s.state.objective === one.state.objective);
}

const COMPARE_TASKS = 'Caesar: Compare Tasks';
const COMPARE_FILE = 'Caesar: Compare File Across Tasks';

/** A task as the pickers name it: its title (numbered among re-runs), its agent and status. */
function taskItem(tasks: LiveTasks, id: string, numbers: ReadonlyMap<string, number>) {
  const s = tasks.get(id);
  // Its lifecycle's words (a discarded task reads "discarded", not its run's "succeeded"), as the tree says it.
  return { label: s ? taskTitle(s, numbers) : id, description: s ? `${s.state.agent} · ${taskLifecycle(s).label}` : '', id };
}

async function pickTasks(tasks: LiveTasks): Promise<string[] | undefined> {
  const groups = new Map<string, TaskSummary[]>();
  for (const s of tasks.list()) groups.set(`${tasks.rootOf(s.id)}\0${s.state.objective}`, [...(groups.get(`${tasks.rootOf(s.id)}\0${s.state.objective}`) ?? []), s]);
  const objectives = [...groups.values()].filter((g) => g.length > 1);
  type Item = vscode.QuickPickItem & { ids?: string[] };
  const numbers = runNumbers(tasks.list());
  const items: Item[] = [
    ...objectives.map((g) => ({ label: taskTitle(g[0]!, new Map()), description: `${g.length} tasks: ${g.map((s) => s.state.agent).join(', ')}`, ids: g.map((s) => s.id) })),
    { label: '$(checklist) Choose tasks…', description: 'any tasks, side by side' },
  ];
  const picked = await pickOne(items, { title: COMPARE_TASKS, placeholder: 'Compare the tasks of which objective?' });
  if (!picked) return undefined;
  if (picked.ids) return picked.ids;
  const chosen = await pickMany(
    tasks.list().map((s) => taskItem(tasks, s.id, numbers)),
    { title: `${COMPARE_TASKS}: choose tasks`, placeholder: 'Compare which tasks? (two or more)' },
  );
  if (chosen && chosen.length === 1) void vscode.window.showInformationMessage('Caesar: choose two tasks or more to compare.');
  return chosen && chosen.length > 1 ? chosen.map((c) => c.id) : undefined;
}

async function pickFile(tasks: LiveTasks, ids: [string, string]): Promise<string | undefined> {
  const files = [...new Set(ids.flatMap((id) => tasks.get(id)?.result?.diff?.files.map((f) => f.path) ?? []))].sort();
  if (files.length === 0) {
    void vscode.window.showInformationMessage('Caesar: these tasks changed no file.');
    return undefined;
  }
  const changedBy = (file: string) => ids.filter((id) => tasks.get(id)?.result?.diff?.files.some((f) => f.path === file)).length;
  const picked = await pickOne(
    files.map((file) => ({ label: file, description: changedBy(file) === 2 ? 'changed by both' : 'changed by one' })),
    { title: `${COMPARE_FILE} (2/2): file`, placeholder: 'Compare which file between the two tasks?' },
  );
  return picked?.label;
}

/** Two tasks to diff a file between; with `file`, those that changed it come first and are preselected. */
async function pickTwo(tasks: LiveTasks, ids: string[], file?: string): Promise<[string, string] | undefined> {
  if (ids.length < 2) {
    void vscode.window.showInformationMessage('Caesar: comparing a file needs two tasks.');
    return undefined;
  }
  const changed = (id: string) => (file ? (tasks.get(id)?.result?.diff?.files.some((f) => f.path === file) ?? false) : true);
  const ordered = [...ids.filter(changed), ...ids.filter((id) => !changed(id))];
  const numbers = runNumbers(tasks.list());
  const items = ordered.map((id, i) => ({
    ...taskItem(tasks, id, numbers),
    ...(file ? { detail: changed(id) ? `changed ${file}` : `did not change ${file}` } : {}),
    picked: file !== undefined && i < 2,
  }));
  const picked = await pickMany(items, {
    title: file ? `${COMPARE_FILE}: ${file}` : `${COMPARE_FILE} (1/2): tasks`,
    placeholder: file ? `Which two tasks' versions of ${file}?` : 'Which two tasks? Check two',
  });
  if (!picked) return undefined;
  if (picked.length !== 2) {
    void vscode.window.showInformationMessage('Caesar: choose exactly two tasks to compare a file between.');
    return undefined;
  }
  return [picked[0]!.id, picked[1]!.id];
}

/**
 * A task's version of `file`: the file in its worktree (checked like any record), the base version when the worktree
 * has no such file but the task did not touch it, or an empty document when the task deleted it.
 */
async function versionOf(tasks: LiveTasks, id: string, file: string): Promise<vscode.Uri> {
  const summary = tasks.get(id);
  if (!summary) throw new Error(`Unknown task ${id}.`);
  if (!summary.state.worktree || summary.discarded) {
    throw new Error(`Task ${id} has no worktree to read ${file} from (${summary.state.isolation === 'inplace' ? 'it ran in place' : 'discarded or not created'}).`);
  }
  const onDisk = await taskVersionPath(tasks.rootOf(id), summary.state, file);
  if (existsSync(onDisk)) return vscode.Uri.file(onDisk);
  const deleted = summary.result?.diff?.files.some((f) => f.path === file && f.action === 'deleted');
  return (!deleted && baseSideOf(tasks, id, file)) || vscode.Uri.from({ scheme: COMPARE_SCHEME, path: `${ABSENT_PREFIX}${file}`, query: id });
}

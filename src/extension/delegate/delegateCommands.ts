import * as path from 'node:path';
import * as vscode from 'vscode';
import { Disposable } from '../../base/disposable';
import { delegateTask, isActive, type DelegateTaskRequest, type DelegatedTask, type TaskSummary } from '../../engine/tasks';
import type { LiveTasks } from '../tasks/liveTasks';
import type { TasksTreeProvider, TaskTreeNode } from '../tasks/tree';
import { defaultTarget, loadDelegateChoices, type DelegateChoices } from './choices';
import { DelegateFlow, type DelegatePreset } from './flow';

const LAST_TARGET_KEY = 'caesar.delegate.lastTarget';
/** How long the progress notification waits for the agent to start before it lets go (the task goes on anyway). */
const START_WAIT_MS = 120_000;

export interface DelegateDeps {
  /** The window's task roots (one per folder) come from here; new tasks appear in it. */
  tasks: LiveTasks;
  tree: TasksTreeProvider;
  view: vscode.TreeView<TaskTreeNode>;
  /** dist/caesar.js of the extension: the supervisor runs from it under the extension host's own binary. */
  cliScript: string;
  state: vscode.Memento;
  log: vscode.LogOutputChannel;
  /** Workspace Trust, read at each delegation (tests may replace it). */
  isTrusted?: () => boolean;
}

/** What the delegate commands resolve with (the tests read it): the tasks started, the refusals. */
export interface DelegateOutcome {
  tasks: DelegatedTask[];
  refused: { target: string; message: string }[];
  /** The observed status each task had when the progress notification closed. */
  statuses: Record<string, string>;
}

/**
 * "Caesar: Delegate Task" and "Delegate to Several Agents…": asks (DelegateFlow), delegates through the engine's
 * use case (config → catalogue → resolve → supervisor), shows progress until the agent runs, then reveals the task.
 */
export class DelegateCommands extends Disposable {
  readonly flow = this._register(new DelegateFlow());

  constructor(private readonly deps: DelegateDeps) {
    super();
  }

  /**
   * Arguments: none (palette, view title), the editor's (uri) from its context menu, or a preset — with an objective
   * and an agent or role the flow is skipped (the walkthrough, tests, other extensions).
   */
  async delegate(arg?: unknown): Promise<DelegateOutcome | undefined> {
    if (!this.trusted()) return this.explainUntrusted();
    const root = await this.chooseRoot(arg);
    if (!root) return undefined;
    const preset: DelegatePreset = { ...presetOf(arg) };
    preset.context ??= selectionContext(root, arg instanceof vscode.Uri);
    const choices = await this.choices(root);
    if (!choices) return undefined;
    let request: DelegateTaskRequest;
    let remembered: string | undefined;
    if (preset.objective && (preset.agent || preset.role) && !preset.customize) {
      request = requestOf(preset);
    } else {
      const setting = vscode.workspace.getConfiguration('caesar').get<string>('defaultAgent') || undefined;
      const asked = await this.flow.ask(choices, preset, defaultTarget(choices.targets, setting, this.deps.state.get<string>(LAST_TARGET_KEY)));
      if (!asked) return undefined;
      request = asked.request;
      remembered = asked.target.label;
    }
    const outcome = await this.launch(root, [{ label: request.role ? `role ${request.role}` : request.agent!, request }]);
    if (remembered && outcome.tasks.length) await this.deps.state.update(LAST_TARGET_KEY, remembered);
    return outcome;
  }

  /** One objective, N agents, each in its own worktree, in parallel. */
  async delegateSeveral(arg?: unknown): Promise<DelegateOutcome | undefined> {
    if (!this.trusted()) return this.explainUntrusted();
    const root = await this.chooseRoot(arg);
    if (!root) return undefined;
    const preset: DelegatePreset = { ...presetOf(arg) };
    preset.context ??= selectionContext(root, arg instanceof vscode.Uri);
    let objective = preset.objective;
    let agents = preset.agents;
    if (!objective || !agents?.length) {
      const choices = await this.choices(root);
      if (!choices) return undefined;
      const asked = await this.flow.askSeveral(choices, preset);
      if (!asked) return undefined;
      ({ objective, agents } = asked);
      preset.checks = asked.checks;
    }
    const common = { ...requestOf({ ...preset, objective }), isolation: 'worktree' as const };
    if (agents.length === 1) void vscode.window.showInformationMessage(`Caesar: only ${agents[0]} was checked, so it runs alone; check two or more agents to compare their results.`);
    return this.launch(root, agents.map((agent) => ({ label: agent, request: { ...common, agent, role: undefined } })));
  }

  /**
   * The root the task runs in: the only one; the one named by the arguments (`folder`: a root or a folder's name) or
   * holding the file of the editor's context menu; else, with several folders, the user picks.
   */
  private async chooseRoot(arg: unknown): Promise<string | undefined> {
    const roots = this.deps.tasks.roots;
    if (roots.length === 1) return roots[0]!.root;
    const named = arg && typeof arg === 'object' && !(arg instanceof vscode.Uri) ? (arg as { folder?: unknown }).folder : undefined;
    const byName = roots.find((r) => r.root === named || r.name === named);
    if (byName) return byName.root;
    if (arg instanceof vscode.Uri && arg.scheme === 'file') {
      const holding = roots.filter((r) => !path.relative(r.root, arg.fsPath).startsWith('..')).sort((a, b) => b.root.length - a.root.length)[0];
      if (holding) return holding.root;
    }
    return this.flow.askFolder(roots.map((r) => ({ name: r.name, root: r.root })));
  }

  private trusted(): boolean {
    return (this.deps.isTrusted ?? (() => vscode.workspace.isTrusted))();
  }

  /** Replaces the Workspace Trust probe (the in-editor tests' seam, absent from the shipped API); returns the previous one. */
  replaceTrustProbe(probe: (() => boolean) | undefined): (() => boolean) | undefined {
    const previous = this.deps.isTrusted;
    this.deps.isTrusted = probe;
    return previous;
  }

  /** Nothing runs in an untrusted folder: says why, offers to manage trust, and resolves at once (nothing started). */
  private explainUntrusted(): DelegateOutcome {
    const manage = 'Manage Workspace Trust';
    const message =
      'Caesar cannot delegate in an untrusted workspace: a task starts an agent program and runs git in this folder, and the folder’s own .caesar configuration could choose which programs run. Existing tasks stay visible; trust the workspace to delegate.';
    void vscode.window.showWarningMessage(message, manage).then((picked) => picked === manage && vscode.commands.executeCommand('workbench.trust.manage'));
    this.deps.log.info('delegation refused: the workspace is not trusted');
    return { tasks: [], refused: [{ target: 'workspace', message }], statuses: {} };
  }

  private async choices(root: string): Promise<DelegateChoices | undefined> {
    try {
      return await loadDelegateChoices(root, this.trusted());
    } catch (err) {
      void vscode.window.showErrorMessage(`Caesar: cannot read the configuration: ${(err as Error).message}`);
      return undefined;
    }
  }

  private async launch(root: string, jobs: { label: string; request: DelegateTaskRequest }[]): Promise<DelegateOutcome> {
    const outcome: DelegateOutcome = { tasks: [], refused: [], statuses: {} };
    const names = jobs.map((j) => j.label).join(', ');
    await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: `Caesar: delegating to ${names}`, cancellable: true },
      async (progress, token) => {
        progress.report({ message: 'resolving the configuration and starting the supervisor…' });
        const results = await Promise.allSettled(
          // Tasks started from the editor pass the agent a minimal environment (issue: the editor's own IPC handles
          // and the user's cloud keys are not the agent's business); [policy] env_allow adds names.
          jobs.map((j) => delegateTask(root, { env: 'minimal', ...j.request }, { cliScript: this.deps.cliScript, trusted: this.trusted() })),
        );
        results.forEach((r, i) => {
          const label = jobs[i]!.label;
          if (r.status === 'fulfilled') {
            outcome.tasks.push(r.value);
            this.deps.log.info(`delegated task ${r.value.id} to ${r.value.launch.agent} (${r.value.launch.mode}, ${r.value.launch.isolation})`);
          } else {
            const message = (r.reason as Error).message;
            outcome.refused.push({ target: label, message });
            this.deps.log.warn(`delegation to ${label} refused: ${message}`);
          }
        });
        if (outcome.tasks.length === 0) return;
        progress.report({ message: 'waiting for the agent to start…' });
        const started = await Promise.all(outcome.tasks.map((t) => this.waitUntilStarted(t.id, token)));
        outcome.tasks.forEach((t, i) => (outcome.statuses[t.id] = started[i]?.observed ?? 'pending'));
      },
    );
    for (const r of outcome.refused) {
      void vscode.window.showErrorMessage(`Caesar: delegation to ${r.target} refused: ${r.message}`);
    }
    for (const t of outcome.tasks) {
      for (const w of t.warnings) void vscode.window.showWarningMessage(`Caesar (${t.launch.agent}): ${w}`);
    }
    // Reveal every new task; the first one ends up selected, and its timeline opens: the work is watched from there.
    for (const t of [...outcome.tasks].reverse()) await this.reveal(t.id);
    if (outcome.tasks[0]) await vscode.commands.executeCommand('caesar.openTimeline', outcome.tasks[0].id);
    return outcome;
  }

  /** Resolves with the summary once the task runs (or already ended, or the wait is cancelled / times out). */
  private waitUntilStarted(id: string, token: vscode.CancellationToken): Promise<TaskSummary | undefined> {
    const { tasks } = this.deps;
    const started = (s: TaskSummary | undefined) => !!s && (s.observed === 'running' || !isActive(s.observed));
    return new Promise((resolve) => {
      const subs: vscode.Disposable[] = [];
      const done = () => {
        clearTimeout(timer);
        clearTimeout(relist);
        for (const s of subs) s.dispose();
        resolve(tasks.get(id));
      };
      const timer = setTimeout(done, START_WAIT_MS);
      // The file watchers report the new folder within a second; a re-listing covers a missed event.
      const relist = setTimeout(() => void tasks.reloadAll(), 3000);
      subs.push(
        tasks.onDidChange(() => started(tasks.get(id)) && done()),
        token.onCancellationRequested(done),
      );
      if (started(tasks.get(id))) done();
    });
  }

  private async reveal(id: string): Promise<void> {
    try {
      if (!this.deps.tasks.get(id)) await this.deps.tasks.reloadAll();
      if (!this.deps.tasks.get(id)) return;
      await this.deps.view.reveal(this.deps.tree.nodeFor(id), { select: true, focus: false, expand: true });
    } catch (err) {
      this.deps.log.warn(`revealing task ${id}: ${(err as Error).message}`);
    }
  }
}

function presetOf(arg: unknown): DelegatePreset | undefined {
  if (!arg || typeof arg !== 'object' || arg instanceof vscode.Uri) return undefined;
  const o = arg as Record<string, unknown>;
  const str = (k: string) => (typeof o[k] === 'string' && o[k] !== '' ? (o[k] as string) : undefined);
  const preset: DelegatePreset = {};
  for (const k of ['objective', 'agent', 'role', 'mode', 'isolation', 'network', 'model', 'context', 'transport'] as const) {
    const v = str(k);
    if (v !== undefined) (preset as Record<string, string>)[k] = v;
  }
  if (o.customize === true) preset.customize = true;
  if (Array.isArray(o.agents)) preset.agents = o.agents.filter((a): a is string => typeof a === 'string');
  if (Array.isArray(o.checks)) preset.checks = o.checks.filter((c): c is string => typeof c === 'string' && c.trim() !== '');
  return preset;
}

function requestOf(p: DelegatePreset): DelegateTaskRequest {
  return {
    objective: p.objective ?? '',
    ...(p.role ? { role: p.role } : p.agent ? { agent: p.agent } : {}),
    ...(p.mode ? { mode: p.mode } : {}),
    ...(p.isolation ? { isolation: p.isolation } : {}),
    ...(p.network ? { network: p.network } : {}),
    ...(p.model ? { model: p.model } : {}),
    ...(p.context ? { context: p.context } : {}),
    ...(p.transport ? { transport: p.transport } : {}),
    ...(p.checks?.length ? { checks: p.checks } : {}),
  };
}

/**
 * The active editor's selection as context ("path lines a–b" and the text), or, from the editor's context menu with
 * nothing selected, the file's name. Undefined when there is neither.
 */
function selectionContext(root: string, fromEditorMenu: boolean): string | undefined {
  const editor = vscode.window.activeTextEditor;
  if (!editor) return undefined;
  const doc = editor.document;
  const name = doc.uri.scheme === 'file' ? path.relative(root, doc.uri.fsPath) || path.basename(doc.uri.fsPath) : doc.uri.toString();
  const selection = editor.selection;
  if (!selection.isEmpty) {
    const text = doc.getText(selection);
    return `Selected in ${name}, lines ${selection.start.line + 1}–${selection.end.line + 1}:\n\`\`\`${doc.languageId}\n${text}\n\`\`\``;
  }
  return fromEditorMenu ? `The user was looking at ${name}.` : undefined;
}

import * as vscode from 'vscode';
import { Disposable, toDisposable } from '../../base/disposable';
import { Emitter } from '../../base/event';
import { ISOLATIONS, MODES, NETWORK_REQUESTS, type IsolationRequest, type ModeName, type NetworkRequest, type TransportName } from '../../config';
import type { DelegateTaskRequest } from '../../engine/tasks';
import type { DelegateChoices, TargetChoice } from './choices';
import { sandboxPickerWords } from '../tasks/sandboxMark';

export type StepName = 'folder' | 'objective' | 'target' | 'targets' | 'checks' | 'mode' | 'isolation' | 'network' | 'model';

/** A step being shown: the live quick input, so a test can drive it as a user would (value, active item, accept). */
export interface ShownStep {
  step: StepName;
  input: vscode.QuickPick<vscode.QuickPickItem> | vscode.InputBox;
  /** Presses the step's own title-bar button with this tooltip, as a click would (tests cannot click). */
  press?: (tooltip: string) => void;
}

/** What the caller already knows (command arguments, the selection): steps with a preset answer start from it. */
export interface DelegatePreset {
  objective?: string;
  agent?: string;
  role?: string;
  agents?: string[];
  mode?: ModeName;
  isolation?: IsolationRequest;
  network?: NetworkRequest;
  model?: string;
  context?: string;
  /** stream or acp; absent: the agent's configured transport. Only from command arguments (no step asks for it). */
  transport?: TransportName;
  /** Shell commands Caesar runs as checks after the agent (like `caesar run --check`); Delegate to Several asks for them too. */
  checks?: string[];
  /** Go through mode, isolation, network and model after the agent (as the gear button does). */
  customize?: boolean;
}

interface TargetItem extends vscode.QuickPickItem {
  target?: TargetChoice;
}

interface ValueItem<T> extends vscode.QuickPickItem {
  value: T;
}

const BACK = Symbol('back');
type Outcome<T> = T | typeof BACK | undefined;

const OPTIONS_BUTTON: vscode.QuickInputButton = {
  iconPath: new vscode.ThemeIcon('settings-gear'),
  tooltip: 'Choose mode, isolation, network and model before delegating',
};

/** On the agents step of Delegate to Several Agents: the same checks for every agent, so their results compare. */
export const CHECKS_TOOLTIP = 'Checks Caesar runs in each worktree after its agent (besides the configured [[check]] ones)';
const CHECKS_BUTTON: vscode.QuickInputButton = { iconPath: new vscode.ThemeIcon('beaker'), tooltip: CHECKS_TOOLTIP };

/** The agents step settles with this when the checks button is pressed: the agents checked so far. */
interface EditChecks {
  editChecks: string[];
}

const MODE_HELP: Record<ModeName, string> = {
  write: 'the agent may edit files (in its worktree unless isolation says otherwise)',
  'read-only': 'the agent reads and reports; it changes nothing',
};
const ISOLATION_HELP: Record<IsolationRequest, string> = {
  auto: 'a git worktree when the folder is a repository, else in place',
  worktree: 'its own git worktree: your files change only when you apply',
  inplace: 'directly in your folder',
};
const NETWORK_HELP: Record<NetworkRequest, string> = {
  auto: 'closed where the agent can close it and the mode allows',
  on: 'the agent may use the network',
  off: 'no network (refused for agents that cannot close it)',
};

/**
 * The quick-input steps of "Caesar: Delegate Task": objective → agent or role (Enter delegates with the defaults; the
 * gear button, or the title's, goes on to mode → isolation → network → model). Back returns to the previous step.
 * It only asks: it returns the request, and the caller delegates.
 */
export class DelegateFlow extends Disposable {
  private readonly shown = this._register(new Emitter<ShownStep>());
  private current: ShownStep | undefined;
  /** Fires each time a step is shown. */
  readonly onDidShowStep = this.shown.event;

  constructor() {
    super();
    this._register(toDisposable(() => this.current?.input.dispose()));
  }

  /** The step on screen now, if any. */
  get currentStep(): ShownStep | undefined {
    return this.current;
  }

  /** In a window with several folders: which folder's repository the task runs in. Undefined when cancelled. */
  async askFolder(folders: { name: string; root: string }[]): Promise<string | undefined> {
    const pick = vscode.window.createQuickPick<ValueItem<string>>();
    pick.title = 'Caesar: Delegate Task — folder';
    pick.placeholder = 'Which folder should the agent work in?';
    pick.ignoreFocusOut = true;
    pick.items = folders.map((f) => ({ label: f.name, description: f.root, value: f.root }));
    const picked = await this.run<string>('folder', pick as unknown as vscode.QuickPick<vscode.QuickPickItem>, (settle) => [
      pick.onDidAccept(() => pick.activeItems[0] && settle(pick.activeItems[0].value)),
    ]);
    return typeof picked === 'string' ? picked : undefined;
  }

  /** Asks for one delegation. Undefined when the user cancelled. */
  async ask(choices: DelegateChoices, preset: DelegatePreset, defaultTarget: TargetChoice | undefined): Promise<{ request: DelegateTaskRequest; target: TargetChoice } | undefined> {
    let objective = preset.objective ?? '';
    let target: TargetChoice | undefined =
      choices.targets.find((t) => (preset.role ? t.kind === 'role' && t.name === preset.role : preset.agent ? t.kind === 'agent' && t.name === preset.agent : false)) ?? defaultTarget;
    let mode = preset.mode ?? choices.defaults.mode;
    let isolation = preset.isolation ?? choices.defaults.isolation;
    let network = preset.network ?? choices.defaults.network;
    let model = preset.model;
    const total = 6;
    let step = 0;
    let customize = preset.customize === true;
    for (;;) {
      if (step === 0) {
        const value = await this.inputStep('objective', {
          title: 'Caesar: Delegate Task',
          step: 1,
          total: customize ? total : 2,
          value: objective,
          prompt: preset.context ? 'The objective for the agent (your selection is sent as context)' : 'The objective for the agent',
          placeholder: 'What should the agent do?',
          validate: (v) => (v.trim() ? undefined : 'An objective is required.'),
        });
        if (value === undefined || value === BACK) return undefined;
        objective = value.trim();
        step = 1;
      } else if (step === 1) {
        const picked = await this.targetStep(choices, target, customize ? total : 2);
        if (picked === undefined) return undefined;
        if (picked === BACK) {
          step = 0;
          continue;
        }
        target = picked.target;
        model = !target.takesModel ? undefined : (preset.model ?? target.model);
        if (!picked.customize && !customize) break;
        customize = true;
        step = 2;
      } else if (step === 2) {
        const v = await this.valueStep('mode', 'Mode', 3, total, MODES, mode, choices.defaults.mode, MODE_HELP);
        if (v === undefined) return undefined;
        if (v === BACK) step = 1;
        else (mode = v), (step = 3);
      } else if (step === 3) {
        const v = await this.valueStep('isolation', 'Isolation', 4, total, ISOLATIONS, isolation, choices.defaults.isolation, ISOLATION_HELP);
        if (v === undefined) return undefined;
        if (v === BACK) step = 2;
        else (isolation = v), (step = 4);
      } else if (step === 4) {
        const v = await this.valueStep('network', 'Network', 5, total, NETWORK_REQUESTS, network, choices.defaults.network, NETWORK_HELP);
        if (v === undefined) return undefined;
        if (v === BACK) step = 3;
        else (network = v), (step = 5);
      } else {
        if (!target?.takesModel) break;
        const v = await this.inputStep('model', {
          title: `Caesar: Delegate Task — model for ${target.name}`,
          step: 6,
          total,
          value: model ?? '',
          prompt: 'The model the agent runs with; empty = the agent’s own default',
          placeholder: target.model ? `configured: ${target.model}` : 'the agent’s default',
        });
        if (v === undefined) return undefined;
        if (v === BACK) {
          step = 4;
          continue;
        }
        model = v.trim() || undefined;
        break;
      }
    }
    if (!target) return undefined;
    const request: DelegateTaskRequest = {
      objective,
      ...(target.kind === 'role' ? { role: target.name } : { agent: target.name }),
      // Only what was chosen (or preset) is sent: the engine applies the role's and the policy's defaults otherwise.
      ...(customize || preset.mode ? { mode } : {}),
      ...(customize || preset.isolation ? { isolation } : {}),
      ...(customize || preset.network ? { network } : {}),
      ...(model !== undefined && model !== target.model ? { model } : {}),
      ...(preset.context ? { context: preset.context } : {}),
      ...(preset.transport ? { transport: preset.transport } : {}),
      ...(preset.checks?.length ? { checks: preset.checks } : {}),
    };
    return { request, target };
  }

  /**
   * "Delegate to Several Agents…": the objective, then several usable agents; the agents step's beaker button asks
   * for checks (one box; several commands separated by `;;`), run the same for each agent.
   */
  async askSeveral(choices: DelegateChoices, preset: DelegatePreset): Promise<{ objective: string; agents: string[]; checks: string[] } | undefined> {
    let objective = preset.objective ?? '';
    let selected = preset.agents ?? [];
    let checks = preset.checks ?? [];
    for (;;) {
      const value = await this.inputStep('objective', {
        title: 'Caesar: Delegate to Several Agents',
        step: 1,
        total: 2,
        value: objective,
        prompt: 'One objective, run by each agent in its own worktree, for comparison',
        placeholder: 'What should the agents do?',
        validate: (v) => (v.trim() ? undefined : 'An objective is required.'),
      });
      if (value === undefined || value === BACK) return undefined;
      objective = value.trim();
      for (;;) {
        const agents = await this.severalStep(choices, selected, checks);
        if (agents === undefined) return undefined;
        if (agents === BACK) break;
        if (Array.isArray(agents)) return { objective, agents, checks };
        selected = agents.editChecks;
        const edited = await this.checksStep(checks);
        if (edited === undefined) return undefined;
        if (edited !== BACK) checks = edited;
      }
    }
  }

  private async checksStep(current: string[]): Promise<Outcome<string[]>> {
    const value = await this.inputStep('checks', {
      title: 'Caesar: Delegate to Several Agents — checks',
      step: 3,
      total: 3,
      value: current.join(' ;; '),
      prompt: 'Shell commands Caesar runs in each worktree after its agent ends, separated by ;; (empty: only the configured [[check]] ones)',
      placeholder: 'e.g. npm test ;; npm run lint',
    });
    return value === undefined || value === BACK ? value : value.split(';;').map((c) => c.trim()).filter(Boolean);
  }

  private inputStep(
    step: StepName,
    o: { title: string; step: number; total: number; value: string; prompt: string; placeholder: string; validate?: (v: string) => string | undefined },
  ): Promise<Outcome<string>> {
    const box = vscode.window.createInputBox();
    box.title = o.title;
    box.step = o.step;
    box.totalSteps = o.total;
    box.value = o.value;
    box.prompt = o.prompt;
    box.placeholder = o.placeholder;
    box.ignoreFocusOut = true;
    if (o.step > 1) box.buttons = [vscode.QuickInputButtons.Back];
    return this.run<string>(step, box, (settle) => [
      box.onDidChangeValue(() => (box.validationMessage = undefined)),
      box.onDidAccept(() => {
        const problem = o.validate?.(box.value);
        if (problem) box.validationMessage = problem;
        else settle(box.value);
      }),
      box.onDidTriggerButton((b) => b === vscode.QuickInputButtons.Back && settle(BACK)),
    ]);
  }

  private targetStep(choices: DelegateChoices, initial: TargetChoice | undefined, total: number): Promise<Outcome<{ target: TargetChoice; customize: boolean }>> {
    const pick = vscode.window.createQuickPick<TargetItem>();
    pick.title = 'Caesar: Delegate Task — agent or role';
    pick.step = 2;
    pick.totalSteps = total;
    pick.placeholder = 'Enter delegates with the defaults; the gear chooses mode, isolation, network and model first';
    pick.matchOnDescription = true;
    pick.matchOnDetail = true;
    pick.ignoreFocusOut = true;
    pick.buttons = [vscode.QuickInputButtons.Back, OPTIONS_BUTTON];
    pick.items = targetItems(choices.targets, initial, choices.sandbox);
    const first = pick.items.find((i) => i.target === initial);
    if (first) pick.activeItems = [first];
    return this.run(
      'target',
      pick as vscode.QuickPick<vscode.QuickPickItem>,
      (settle) => {
        const choose = (item: TargetItem | undefined, customize: boolean) => {
          const target = item?.target;
          if (!target) return;
          if (!target.usable) {
            pick.placeholder = `${target.label} cannot be used: ${target.verdict} — ${target.detail}`;
            return;
          }
          settle({ target, customize });
        };
        return [
          pick.onDidAccept(() => choose(pick.activeItems[0], false)),
          pick.onDidTriggerItemButton((e) => choose(e.item, true)),
          pick.onDidTriggerButton((b) => (b === vscode.QuickInputButtons.Back ? settle(BACK) : choose(pick.activeItems[0], true))),
        ];
      },
    );
  }

  private severalStep(choices: DelegateChoices, preset: string[], checks: string[]): Promise<Outcome<string[] | EditChecks>> {
    const pick = vscode.window.createQuickPick<TargetItem>();
    pick.title = `Caesar: Delegate to Several Agents — agents${checks.length ? ` (checks: ${checks.join(' ;; ')})` : ''}`;
    pick.step = 2;
    pick.totalSteps = 2;
    pick.canSelectMany = true;
    pick.placeholder = 'Check two or more agents; each runs the objective in its own worktree';
    pick.ignoreFocusOut = true;
    pick.buttons = [vscode.QuickInputButtons.Back, CHECKS_BUTTON];
    pick.items = targetItems(
      choices.targets.filter((t) => t.kind === 'agent'),
      undefined,
      choices.sandbox,
    );
    pick.selectedItems = pick.items.filter((i) => i.target && preset.includes(i.target.name));
    let pressed: ((b: vscode.QuickInputButton) => void) | undefined;
    const press = (tooltip: string) => pick.buttons.filter((b) => b.tooltip === tooltip).forEach((b) => pressed?.(b));
    return this.run('targets', pick as vscode.QuickPick<vscode.QuickPickItem>, (settle) => [
      pick.onDidAccept(() => {
        const chosen = pick.selectedItems.map((i) => i.target).filter((t): t is TargetChoice => !!t);
        const unusable = chosen.filter((t) => !t.usable);
        if (unusable.length) {
          pick.placeholder = unusable.map((t) => `${t.name} cannot be used: ${t.verdict}`).join('; ');
          return;
        }
        // One agent is "Delegate Task": said, instead of silently starting a single task nothing is compared with.
        if (chosen.length < 2) {
          const usable = choices.targets.filter((t) => t.kind === 'agent' && t.usable).length;
          pick.placeholder =
            usable < 2
              ? `Only ${usable} agent can be used here: delegate to it with Caesar: Delegate Task (install another agent to compare)`
              : `Check two or more agents to compare (${chosen.length} checked); for one agent, use Caesar: Delegate Task`;
          return;
        }
        settle(chosen.map((t) => t.name));
      }),
      pick.onDidTriggerButton(
        (pressed = (b) => {
          if (b === vscode.QuickInputButtons.Back) settle(BACK);
          else settle({ editChecks: pick.selectedItems.map((i) => i.target?.name).filter((n): n is string => !!n) });
        }),
      ),
    ], press);
  }

  private valueStep<T extends string>(
    step: StepName,
    title: string,
    n: number,
    total: number,
    values: readonly T[],
    current: T,
    configured: T,
    help: Record<T, string>,
  ): Promise<Outcome<T>> {
    const pick = vscode.window.createQuickPick<ValueItem<T>>();
    pick.title = `Caesar: Delegate Task — ${title.toLowerCase()}`;
    pick.step = n;
    pick.totalSteps = total;
    pick.ignoreFocusOut = true;
    pick.buttons = [vscode.QuickInputButtons.Back];
    pick.items = values.map((value) => ({ label: value, value, description: value === configured ? 'configured default' : '', detail: help[value] }));
    pick.activeItems = pick.items.filter((i) => i.value === current);
    return this.run(step, pick as unknown as vscode.QuickPick<vscode.QuickPickItem>, (settle) => [
      pick.onDidAccept(() => pick.activeItems[0] && settle(pick.activeItems[0].value)),
      pick.onDidTriggerButton((b) => b === vscode.QuickInputButtons.Back && settle(BACK)),
    ]);
  }

  /** Shows a quick input until it settles (a value, Back) or is hidden (cancel). */
  private run<T>(
    step: StepName,
    input: vscode.QuickPick<vscode.QuickPickItem> | vscode.InputBox,
    wire: (settle: (v: T | typeof BACK) => void) => vscode.Disposable[],
    press?: (tooltip: string) => void,
  ): Promise<Outcome<T>> {
    return new Promise((resolve) => {
      let settled = false;
      const subs: vscode.Disposable[] = [];
      const finish = (v: Outcome<T>) => {
        if (settled) return;
        settled = true;
        for (const s of subs) s.dispose();
        if (this.current?.input === input) this.current = undefined;
        input.dispose();
        resolve(v);
      };
      subs.push(...wire((v) => finish(v)), input.onDidHide(() => finish(undefined)));
      input.show();
      this.current = { step, input, ...(press ? { press } : {}) };
      this.shown.fire(this.current);
    });
  }
}

/**
 * The rows of the agent step: the usable agents (the default first), the usable roles, then — after a separator —
 * what cannot be used here and why, so the row Enter picks is at the top and a person reads what works first.
 */
function targetItems(targets: TargetChoice[], initial: TargetChoice | undefined, sandbox: DelegateChoices['sandbox']): TargetItem[] {
  const mark = sandboxPickerWords(sandbox);
  const row = (t: TargetChoice): TargetItem => ({
    label: `${t.usable ? '$(check)' : t.verdict === 'not found' ? '$(circle-slash)' : '$(shield)'} ${t.label}`,
    description: `${t.verdict}${t === initial ? ' · default' : ''}${t.usable ? ` · ${mark.word}` : ''}`,
    detail: [t.detail, t.usable ? mark.detail : ''].filter(Boolean).join(' · '),
    buttons: t.usable ? [OPTIONS_BUTTON] : [],
    target: t,
  });
  const defaultFirst = (list: TargetChoice[]) => [...list].sort((a, b) => Number(b === initial) - Number(a === initial));
  const agents = defaultFirst(targets.filter((t) => t.kind === 'agent' && t.usable));
  const roles = defaultFirst(targets.filter((t) => t.kind === 'role' && t.usable));
  const unusable = targets.filter((t) => !t.usable).sort((a, b) => Number(a.kind === 'role') - Number(b.kind === 'role'));
  const items: TargetItem[] = [];
  if (agents.length) items.push({ label: 'Agents', kind: vscode.QuickPickItemKind.Separator }, ...agents.map(row));
  if (roles.length) items.push({ label: 'Roles', kind: vscode.QuickPickItemKind.Separator }, ...roles.map(row));
  if (unusable.length) items.push({ label: 'Not usable here', kind: vscode.QuickPickItemKind.Separator }, ...unusable.map(row));
  return items;
}

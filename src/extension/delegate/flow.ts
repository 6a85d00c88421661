import * as vscode from 'vscode';
import { ISOLATIONS, MODES, NETWORK_REQUESTS, type IsolationRequest, type ModeName, type NetworkRequest, type TransportName } from '../../config';
import type { DelegateTaskRequest } from '../../engine/tasks';
import type { DelegateChoices, TargetChoice } from './choices';
import { BACK, QuickSteps, type Outcome, type StepName, type ValueItem } from './quickSteps';
import { askSeveralAgents } from './severalSteps';
import { OPTIONS_BUTTON, targetItems, type TargetItem } from './targetRows';

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
 * It only asks: it returns the request, and the caller delegates. "Delegate to Several Agents…" is severalSteps.ts.
 */
export class DelegateFlow extends QuickSteps {
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

  /** "Delegate to Several Agents…" (severalSteps.ts). */
  askSeveral(choices: DelegateChoices, preset: DelegatePreset): ReturnType<typeof askSeveralAgents> {
    return askSeveralAgents(this, choices, preset);
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
}

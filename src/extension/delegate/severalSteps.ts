import * as vscode from 'vscode';
import type { DelegateChoices, TargetChoice } from './choices';
import { BACK, type Outcome, type QuickSteps } from './quickSteps';
import { targetItems, type TargetItem } from './targetRows';

/** On the agents step of Delegate to Several Agents: the same checks for every agent, so their results compare. */
export const CHECKS_TOOLTIP = 'Checks Caesar runs in each worktree after its agent (besides the configured [[check]] ones)';
const CHECKS_BUTTON: vscode.QuickInputButton = { iconPath: new vscode.ThemeIcon('beaker'), tooltip: CHECKS_TOOLTIP };

/** The agents step settles with this when the checks button is pressed: the agents checked so far. */
interface EditChecks {
  editChecks: string[];
}

/** What the caller already knows, as far as these steps ask (a DelegatePreset). */
export interface SeveralPreset {
  objective?: string;
  agents?: string[];
  checks?: string[];
}

/**
 * "Delegate to Several Agents…": the objective, then several usable agents; the agents step's beaker button asks
 * for checks (one box; several commands separated by `;;`), run the same for each agent.
 */
export async function askSeveralAgents(steps: QuickSteps, choices: DelegateChoices, preset: SeveralPreset): Promise<{ objective: string; agents: string[]; checks: string[] } | undefined> {
  let objective = preset.objective ?? '';
  let selected = preset.agents ?? [];
  let checks = preset.checks ?? [];
  for (;;) {
    const value = await steps.inputStep('objective', {
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
      const agents = await severalStep(steps, choices, selected, checks);
      if (agents === undefined) return undefined;
      if (agents === BACK) break;
      if (Array.isArray(agents)) return { objective, agents, checks };
      selected = agents.editChecks;
      const edited = await checksStep(steps, checks);
      if (edited === undefined) return undefined;
      if (edited !== BACK) checks = edited;
    }
  }
}

/**
 * The usable agents, checkable; then, under one separator each, the agents that cannot be used here and why: a
 * separator has no checkbox, so nothing unusable can be checked, and its reason is read in full.
 */
function severalItems(choices: DelegateChoices): TargetItem[] {
  const agents = choices.targets.filter((t) => t.kind === 'agent');
  const usable = targetItems(agents.filter((t) => t.usable), undefined, choices.sandbox);
  const unusable = agents.filter((t) => !t.usable).map((t): TargetItem => ({ label: `${t.label} cannot be used here: ${t.verdict}${t.detail ? ` — ${t.detail}` : ''}`, kind: vscode.QuickPickItemKind.Separator }));
  return [...usable, ...unusable];
}

async function checksStep(steps: QuickSteps, current: string[]): Promise<Outcome<string[]>> {
  const value = await steps.inputStep('checks', {
    title: 'Caesar: Delegate to Several Agents — checks',
    step: 3,
    total: 3,
    value: current.join(' ;; '),
    prompt: 'Shell commands Caesar runs in each worktree after its agent ends, separated by ;; (empty: only the configured [[check]] ones)',
    placeholder: 'e.g. npm test ;; npm run lint',
  });
  return value === undefined || value === BACK ? value : value.split(';;').map((c) => c.trim()).filter(Boolean);
}

function severalStep(steps: QuickSteps, choices: DelegateChoices, preset: string[], checks: string[]): Promise<Outcome<string[] | EditChecks>> {
  const pick = vscode.window.createQuickPick<TargetItem>();
  pick.title = `Caesar: Delegate to Several Agents — agents${checks.length ? ` (checks: ${checks.join(' ;; ')})` : ''}`;
  pick.step = 2;
  pick.totalSteps = 2;
  pick.canSelectMany = true;
  pick.placeholder = 'Check two or more agents; each runs the objective in its own worktree';
  pick.ignoreFocusOut = true;
  pick.buttons = [vscode.QuickInputButtons.Back, CHECKS_BUTTON];
  pick.items = severalItems(choices);
  pick.selectedItems = pick.items.filter((i) => i.target && preset.includes(i.target.name));
  let pressed: ((b: vscode.QuickInputButton) => void) | undefined;
  const press = (tooltip: string) => pick.buttons.filter((b) => b.tooltip === tooltip).forEach((b) => pressed?.(b));
  return steps.run('targets', pick as vscode.QuickPick<vscode.QuickPickItem>, (settle) => [
    pick.onDidAccept(() => {
      const chosen = pick.selectedItems.map((i) => i.target).filter((t): t is TargetChoice => !!t && t.usable);
      // None checked: Enter means nothing yet (the placeholder says what to do). One checked runs that agent alone —
      // the caller says there is nothing to compare it with — rather than ignoring the Enter.
      if (chosen.length === 0) {
        pick.placeholder = 'Check at least one agent (two or more to compare them), then press Enter';
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

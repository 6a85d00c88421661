import * as vscode from 'vscode';
import type { DelegateChoices, TargetChoice } from './choices';
import { sandboxPickerWords } from '../tasks/sandboxMark';

export interface TargetItem extends vscode.QuickPickItem {
  target?: TargetChoice;
}

export const OPTIONS_BUTTON: vscode.QuickInputButton = {
  iconPath: new vscode.ThemeIcon('settings-gear'),
  tooltip: 'Choose mode, isolation, network and model before delegating',
};


/**
 * The rows of the agent step: the usable agents (the default first), the usable roles, then — after a separator —
 * what cannot be used here and why, so the row Enter picks is at the top and a person reads what works first.
 */
export function targetItems(targets: TargetChoice[], initial: TargetChoice | undefined, sandbox: DelegateChoices['sandbox']): TargetItem[] {
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

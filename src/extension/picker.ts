import * as vscode from 'vscode';

/** A picker or input box on screen: its title names the command (and the task it is about), as VS Code's own do. */
export interface ShownInput {
  title: string;
  input: vscode.QuickPick<vscode.QuickPickItem> | vscode.InputBox;
}

const shown = new vscode.EventEmitter<ShownInput>();
let current: ShownInput | undefined;

/** Fires each time pickOne, pickMany or askText shows its input (the tests drive it as a user would). */
export const onDidShowInput = shown.event;

/** The picker or input box on screen now, if one of ours is. */
export function currentInput(): ShownInput | undefined {
  return current;
}

export interface PickOptions {
  /** Required: a picker without a title does not say which command (or task) it belongs to. */
  title: string;
  placeholder: string;
  matchOnDescription?: boolean;
  matchOnDetail?: boolean;
}

/** One item, or undefined when dismissed. Stays open when the focus moves (a webview taking it back, a toast). */
export async function pickOne<T extends vscode.QuickPickItem>(items: readonly T[], options: PickOptions): Promise<T | undefined> {
  const pick = vscode.window.createQuickPick<T>();
  configure(pick, items, options);
  return show(pick, (settle) => pick.onDidAccept(() => pick.activeItems[0] && settle(pick.activeItems[0])));
}

/** Several items (those with `picked: true` start checked), or undefined when dismissed. */
export async function pickMany<T extends vscode.QuickPickItem>(items: readonly T[], options: PickOptions): Promise<T[] | undefined> {
  const pick = vscode.window.createQuickPick<T>();
  pick.canSelectMany = true;
  configure(pick, items, options);
  pick.selectedItems = items.filter((i) => i.picked);
  return show(pick, (settle) => pick.onDidAccept(() => settle([...pick.selectedItems])));
}

/** A line of text, or undefined when dismissed. */
export async function askText(options: { title: string; prompt: string; placeholder: string; value?: string }): Promise<string | undefined> {
  const box = vscode.window.createInputBox();
  box.title = options.title;
  box.prompt = options.prompt;
  box.placeholder = options.placeholder;
  box.value = options.value ?? '';
  box.ignoreFocusOut = true;
  return show(box, (settle) => box.onDidAccept(() => settle(box.value)));
}

function configure<T extends vscode.QuickPickItem>(pick: vscode.QuickPick<T>, items: readonly T[], options: PickOptions): void {
  pick.title = options.title;
  pick.placeholder = options.placeholder;
  pick.matchOnDescription = options.matchOnDescription ?? true;
  pick.matchOnDetail = options.matchOnDetail ?? false;
  pick.ignoreFocusOut = true;
  pick.items = items;
}

function show<V>(input: vscode.QuickPick<never> | vscode.QuickPick<vscode.QuickPickItem> | vscode.InputBox, wire: (settle: (v: V) => void) => vscode.Disposable): Promise<V | undefined> {
  return new Promise((resolve) => {
    let settled = false;
    const entry: ShownInput = { title: input.title ?? '', input: input as ShownInput['input'] };
    const subs: vscode.Disposable[] = [];
    const finish = (v: V | undefined) => {
      if (settled) return;
      settled = true;
      for (const s of subs) s.dispose();
      if (current === entry) current = undefined;
      input.dispose();
      resolve(v);
    };
    subs.push(wire((v) => finish(v)), input.onDidHide(() => finish(undefined)));
    input.show();
    current = entry;
    shown.fire(entry);
  });
}

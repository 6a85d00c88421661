import * as vscode from 'vscode';
import { Disposable, toDisposable } from '../../base/disposable';
import { Emitter } from '../../base/event';

export type StepName = 'folder' | 'objective' | 'target' | 'targets' | 'checks' | 'mode' | 'isolation' | 'network' | 'model';

/** A step being shown: the live quick input, so a test can drive it as a user would (value, active item, accept). */
export interface ShownStep {
  step: StepName;
  input: vscode.QuickPick<vscode.QuickPickItem> | vscode.InputBox;
  /** Presses the step's own title-bar button with this tooltip, as a click would (tests cannot click). */
  press?: (tooltip: string) => void;
}

export interface ValueItem<T> extends vscode.QuickPickItem {
  value: T;
}

export const BACK = Symbol('back');
export type Outcome<T> = T | typeof BACK | undefined;

export interface InputStepOptions {
  title: string;
  step: number;
  total: number;
  value: string;
  prompt: string;
  placeholder: string;
  validate?: (v: string) => string | undefined;
}

/**
 * The quick inputs of the Delegate flows (flow.ts, severalSteps.ts), shown one step at a time: a step settles with a
 * value, with Back, or undefined once hidden (cancelled). The step on screen is exposed, so the in-editor tests can
 * drive it as a user would.
 */
export class QuickSteps extends Disposable {
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

  /** An input box step; Back is offered from the second step on. */
  inputStep(step: StepName, o: InputStepOptions): Promise<Outcome<string>> {
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

  /** Shows a quick input until it settles (a value, Back) or is hidden (cancel). */
  run<T>(
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

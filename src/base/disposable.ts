/** The VS Code Disposable shape, without importing vscode: the extension can hand these straight to its subscriptions. */
export interface Disposable {
  dispose(): void;
}

export function toDisposable(dispose: () => void): Disposable {
  let done = false;
  return {
    dispose() {
      if (done) return;
      done = true;
      dispose();
    },
  };
}

export function combineDisposables(items: Disposable[]): Disposable {
  return toDisposable(() => {
    for (const item of items.splice(0)) item.dispose();
  });
}

/** The VS Code Disposable shape, without importing vscode: the extension can hand these straight to its subscriptions. */
export interface IDisposable {
  dispose(): void;
}

export function toDisposable(dispose: () => void): IDisposable {
  let done = false;
  return {
    dispose() {
      if (done) return;
      done = true;
      dispose();
    },
  };
}

export function combineDisposables(items: IDisposable[]): IDisposable {
  return toDisposable(() => {
    for (const item of items.splice(0)) item.dispose();
  });
}

/** Disposes what was added to it, newest first (what depends on something goes before it); later additions die at once. */
export class DisposableStore implements IDisposable {
  private readonly items = new Set<IDisposable>();
  private disposed = false;

  add<T extends IDisposable>(item: T): T {
    if (this.disposed) item.dispose();
    else this.items.add(item);
    return item;
  }

  /** Disposes one item now and forgets it. */
  delete(item: IDisposable): void {
    if (this.items.delete(item)) item.dispose();
  }

  get isDisposed(): boolean {
    return this.disposed;
  }

  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    const items = [...this.items].reverse();
    this.items.clear();
    for (const item of items) item.dispose();
  }
}

/**
 * A base class like VS Code's own: whatever a subclass `_register`s (listeners, emitters, watchers, timers) is
 * disposed with it, so no class keeps a hand-rolled array of subscriptions.
 */
export abstract class Disposable implements IDisposable {
  protected readonly _store = new DisposableStore();

  protected _register<T extends IDisposable>(item: T): T {
    return this._store.add(item);
  }

  dispose(): void {
    this._store.dispose();
  }
}

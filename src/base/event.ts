import { toDisposable, type IDisposable } from './disposable';

/**
 * Events as VS Code shapes them (`vscode.Event<T>` accepts these, and these accept VS Code's listeners), with no
 * vscode import so the engine can use them too.
 */
export type Event<T> = (listener: (e: T) => unknown, thisArgs?: unknown, disposables?: IDisposable[]) => IDisposable;

export class Emitter<T> implements IDisposable {
  private readonly listeners = new Set<(e: T) => unknown>();
  private disposed = false;

  constructor(private readonly onListenerError: (err: unknown) => void = (err) => console.error('listener failed:', err)) {}

  readonly event: Event<T> = (listener, thisArgs, disposables) => {
    const bound = thisArgs === undefined ? listener : listener.bind(thisArgs);
    if (this.disposed) return toDisposable(() => undefined);
    this.listeners.add(bound);
    const subscription = toDisposable(() => this.listeners.delete(bound));
    disposables?.push(subscription);
    return subscription;
  };

  /** Calls every listener; one that throws does not stop the others (the error is reported, not swallowed). */
  fire(e: T): void {
    for (const listener of [...this.listeners]) {
      try {
        listener(e);
      } catch (err) {
        this.onListenerError(err);
      }
    }
  }

  get hasListeners(): boolean {
    return this.listeners.size > 0;
  }

  dispose(): void {
    this.disposed = true;
    this.listeners.clear();
  }
}

/**
 * Collects items and hands them over once, `delayMs` after the first one arrived (not after the last: a stream that
 * never pauses is still reported). The one debounce of the extension; everything that coalesces goes through it.
 */
export class Debouncer<K> implements IDisposable {
  private readonly pending = new Set<K>();
  private timer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    private readonly delayMs: number,
    private readonly flush: (items: K[]) => void,
  ) {}

  add(item: K): void {
    this.pending.add(item);
    this.timer ??= setTimeout(() => this.flushNow(), this.delayMs);
  }

  /** Hands over what is pending now (nothing: no call). */
  flushNow(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    if (this.pending.size === 0) return;
    const items = [...this.pending];
    this.pending.clear();
    this.flush(items);
  }

  dispose(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.pending.clear();
  }
}

/** An event that fires once with every value the source fired within `delayMs` of the first (see Debouncer). */
export function debounceEvent<T>(source: Event<T>, delayMs: number): { event: Event<T[]> } & IDisposable {
  const out = new Emitter<T[]>();
  const debouncer = new Debouncer<T>(delayMs, (items) => out.fire(items));
  const subscription = source((e) => debouncer.add(e));
  return {
    event: out.event,
    dispose() {
      subscription.dispose();
      debouncer.dispose();
      out.dispose();
    },
  };
}

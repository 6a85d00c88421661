import { strict as assert } from 'node:assert';
import { Disposable, DisposableStore, toDisposable } from '../../../src/base/disposable';
import { Debouncer, Emitter, debounceEvent } from '../../../src/base/event';
import { waitFor } from '../../support/wait';

describe('base: Disposable, Emitter, Debouncer (the plumbing the extension is built on)', () => {
  it('an Emitter calls each listener until its subscription is disposed, and none after the emitter is', () => {
    const emitter = new Emitter<number>();
    const seen: number[] = [];
    const other: number[] = [];
    const sub = emitter.event((n) => seen.push(n));
    emitter.event((n) => other.push(n));
    emitter.fire(1);
    sub.dispose();
    emitter.fire(2);
    emitter.dispose();
    emitter.fire(3);
    assert.deepEqual(seen, [1]);
    assert.deepEqual(other, [1, 2]);
    assert.equal(emitter.hasListeners, false);
  });

  it('a listener that throws does not keep the others from hearing the event, and its error is reported', () => {
    const errors: unknown[] = [];
    const emitter = new Emitter<string>((err) => errors.push(err));
    const heard: string[] = [];
    emitter.event(() => {
      throw new Error('boom');
    });
    emitter.event((s) => heard.push(s));
    emitter.fire('x');
    assert.deepEqual(heard, ['x']);
    assert.match(String(errors[0]), /boom/);
  });

  it('a Disposable subclass disposes what it registered, newest first, and anything registered afterwards at once', () => {
    const order: string[] = [];
    class Owner extends Disposable {
      constructor() {
        super();
        this._register(toDisposable(() => order.push('first')));
        this._register(toDisposable(() => order.push('second')));
      }
      late(): void {
        this._register(toDisposable(() => order.push('late')));
      }
    }
    const owner = new Owner();
    owner.dispose();
    owner.dispose();
    assert.deepEqual(order, ['second', 'first']);
    owner.late();
    assert.deepEqual(order, ['second', 'first', 'late']);
  });

  it('a DisposableStore disposes one item on delete and forgets it', () => {
    const store = new DisposableStore();
    let count = 0;
    const item = store.add(toDisposable(() => count++));
    store.delete(item);
    store.dispose();
    assert.equal(count, 1);
  });

  it('a Debouncer hands over every distinct item once, in one batch per window', async () => {
    const batches: string[][] = [];
    const debouncer = new Debouncer<string>(20, (items) => batches.push(items));
    debouncer.add('a');
    debouncer.add('b');
    debouncer.add('a');
    await waitFor('the first batch', () => batches.length === 1);
    debouncer.add('c');
    await waitFor('the second batch', () => batches.length === 2);
    assert.deepEqual(batches, [['a', 'b'], ['c']]);
    debouncer.add('d');
    debouncer.dispose();
    debouncer.flushNow();
    assert.equal(batches.length, 2, 'a disposed debouncer hands nothing over');
  });

  it('debounceEvent turns a burst of events into one', async () => {
    const source = new Emitter<number>();
    const debounced = debounceEvent(source.event, 10);
    const got: number[][] = [];
    debounced.event((batch) => got.push(batch));
    source.fire(1);
    source.fire(2);
    await waitFor('one batch', () => got.length === 1);
    assert.deepEqual(got, [[1, 2]]);
    debounced.dispose();
    source.fire(3);
    assert.equal(source.hasListeners, false);
  });
});

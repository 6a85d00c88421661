import { strict as assert } from 'node:assert';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import * as path from 'node:path';
import { SlotWaitAborted, acquireSlot, slotsDir } from '../../../src/engine/store/slots';
import { waitFor } from '../../support/wait';

function root(): string {
  return mkdtempSync(path.join(tmpdir(), 'caesar-slots-'));
}

function deadPid(): number {
  const r = spawnSync(process.execPath, ['-e', 'console.log(process.pid)'], { encoding: 'utf8' });
  return Number(r.stdout.trim());
}

/** Long safety period: any prompt wake-up below must come from fs.watch, not from the re-check timer. */
const NO_POLL = 60_000;

describe('engine runtime: slots (max_parallel across processes, FIFO)', () => {
  it('refuses a limit below 1', async () => {
    await assert.rejects(acquireSlot({ root: root(), limit: 0 }), /at least 1/);
  });

  it('serves waiters in arrival order and wakes them through fs.watch, not polling', async () => {
    const r = root();
    const first = await acquireSlot({ root: r, limit: 1, safetyIntervalMs: NO_POLL });
    const order: string[] = [];
    const aheads: Record<string, number[]> = { b: [], c: [] };
    const b = acquireSlot({ root: r, limit: 1, safetyIntervalMs: NO_POLL, onWait: (n) => aheads.b!.push(n) }).then((s) => (order.push('b'), s));
    // c arrives once b is queued (its onWait has run), so the arrival order is b then c whatever the load.
    await waitFor('b to queue', () => aheads.b!.length > 0);
    const c = acquireSlot({ root: r, limit: 1, safetyIntervalMs: NO_POLL, onWait: (n) => aheads.c!.push(n) }).then((s) => (order.push('c'), s));
    await waitFor('c to queue', () => aheads.c!.length > 0);
    assert.deepEqual(order, []);
    assert.deepEqual(aheads.b, [0]);
    assert.deepEqual(aheads.c, [1]);
    await first.release();
    // With the safety poll a minute away, b can only be woken by the watcher (a poll would outlast the test).
    const slotB = await b;
    assert.deepEqual(order, ['b']);
    await slotB.release();
    const slotC = await c;
    assert.deepEqual(order, ['b', 'c']);
    await slotC.release();
    assert.ok(!existsSync(path.join(slotsDir(r), '0.json')));
  });

  it('shares the limit with another process', async () => {
    const r = root();
    // The child notes, synchronously, that it is about to release: the note exists before its slot is freed.
    const releasing = path.join(r, 'child-releasing');
    const child = spawn(
      process.execPath,
      ['-r', 'tsx/cjs', '-e', `require(${JSON.stringify(path.resolve(__dirname, '../../../src/engine/store/slots.ts'))}).acquireSlot({root:${JSON.stringify(r)},limit:1}).then(s=>{console.log('held');setTimeout(()=>{require('node:fs').writeFileSync(${JSON.stringify(releasing)},'');s.release().then(()=>process.exit(0))},800)})`],
      { stdio: ['ignore', 'pipe', 'inherit'], cwd: path.resolve(__dirname, '../../..') },
    );
    await new Promise<void>((res) => child.stdout!.on('data', (d) => String(d).includes('held') && res()));
    const slot = await acquireSlot({ root: r, limit: 1, safetyIntervalMs: NO_POLL });
    assert.ok(existsSync(releasing), 'the slot was granted only after the other process let go of it');
    await slot.release();
  });

  it('reclaims the slot of a dead holder on this host, never one held on another host', async () => {
    const r = root();
    mkdirSync(slotsDir(r), { recursive: true });
    writeFileSync(path.join(slotsDir(r), '0.json'), JSON.stringify({ pid: deadPid(), host: hostname(), token: 'x', started_at: '' }));
    const slot = await acquireSlot({ root: r, limit: 1, safetyIntervalMs: NO_POLL });
    assert.equal(slot.index, 0);
    await slot.release();

    writeFileSync(path.join(slotsDir(r), '0.json'), JSON.stringify({ pid: deadPid(), host: 'elsewhere.example', token: 'y', started_at: '' }));
    const controller = new AbortController();
    const seen: string[] = [];
    const waiting = acquireSlot({ root: r, limit: 1, signal: controller.signal, safetyIntervalMs: 100, onWait: (_n, holders) => seen.push(...holders.map((h) => h.host)) });
    // It waits behind the foreign holder it has looked at (and left alone) rather than taking its slot.
    await waitFor('the wait behind the other host', () => seen.includes('elsewhere.example'));
    controller.abort();
    await assert.rejects(waiting, SlotWaitAborted);
  });

  it('an abort during the wait takes no slot and leaves no ticket', async () => {
    const r = root();
    const held = await acquireSlot({ root: r, limit: 1 });
    const controller = new AbortController();
    let queued = false;
    const waiting = acquireSlot({ root: r, limit: 1, signal: controller.signal, safetyIntervalMs: NO_POLL, onWait: () => (queued = true) });
    await waitFor('the waiter to queue', () => queued);
    controller.abort();
    await assert.rejects(waiting, SlotWaitAborted);
    await held.release();
    const again = await acquireSlot({ root: r, limit: 1, safetyIntervalMs: NO_POLL });
    assert.equal(again.index, 0);
    await again.release();
    const { readdirSync } = await import('node:fs');
    assert.deepEqual(readdirSync(path.join(slotsDir(r), 'queue')).filter((n) => !n.startsWith('.')), []);
  });

  it('a release by a stale owner does not free a slot someone else now holds', async () => {
    const r = root();
    mkdirSync(slotsDir(r), { recursive: true });
    const a = await acquireSlot({ root: r, limit: 1 });
    writeFileSync(path.join(slotsDir(r), '0.json'), JSON.stringify({ pid: process.pid, host: hostname(), token: 'someone-else', started_at: '' }));
    await a.release();
    assert.ok(existsSync(path.join(slotsDir(r), '0.json')));
  });
});

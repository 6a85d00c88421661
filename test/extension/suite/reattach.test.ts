import * as assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import type { TreeItemSnapshot } from '../../../src/extension/api';
import { caesar, record, rowsOf } from './helpers';

// Runs in the extension host that starts after `workbench.action.reloadWindow` (see index.ts).
describe('after reload', () => {
  it('re-attaches: the running task is listed, still updates live, and its timeline panel is restored', async function () {
    this.timeout(90_000);
    const { id, eventsBefore } = JSON.parse(readFileSync(path.join(process.env.CAESAR_TEST_STATE_DIR!, 'reattach.json'), 'utf8')) as {
      id: string; eventsBefore: number;
    };
    const api = await caesar();
    record('activationMsAfterReload', api.activationMs);
    const first = (await api.treeSnapshot()).find((t) => t.id === id);
    assert.ok(first, 'the task is listed after the reload');
    assert.equal(first.icon, 'sync~spin', 'still running when the new window attached (otherwise nothing live is proven)');
    // Its events are followed again from the start: the slow step still spins.
    await api.waitForTree((t) => rowsOf(t.find((x) => x.id === id) ?? { children: [] } as unknown as TreeItemSnapshot).some((c) => c.label === 'slow_step' && c.icon === 'loading~spin'), 20_000);

    // Live after the reload: open the fixture's gate; the slow step ends and the task finishes, seen through the new
    // window's watchers.
    writeFileSync(path.join(process.env.CAESAR_TEST_STATE_DIR!, 'reattach.gate'), 'go');
    const tree = await api.waitForTree((t) => t.find((x) => x.id === id)?.icon === 'pass', 60_000, [id]);
    const slow = rowsOf(tree.find((x) => x.id === id)!).find((c) => c.label === 'slow_step')!;
    assert.equal(slow.icon, 'tools');
    assert.doesNotMatch(slow.description, /running/);

    // The timeline panel that was open came back (webview serializer) and streams again.
    const stats = await api.timeline.waitForStats(id, (s) => s.caughtUp && s.recentLabels.some((l) => l.startsWith('Finished')), 30_000);
    assert.ok(stats.received > eventsBefore);
  });
});

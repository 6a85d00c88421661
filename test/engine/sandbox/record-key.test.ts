import { strict as assert } from 'node:assert';
import { readFileSync } from 'node:fs';
import { recordKey, recordKeyPath } from '../../../src/engine/store/record-key';
import { makeRepo, startFixture, waitForFinished } from '../runtime/helpers';
import { probeAgent, probeResults, type Probe } from './helpers';
import { needs } from '../../support/needs';

/**
 * Caesar's record key (record-key.ts) seals every record; an agent that could read it could forge them. Inside a
 * sandboxed task its folder is hidden; the same probe with the sandbox off reads it (the control: the probe can tell).
 */
(process.platform === 'linux' ? describe : describe.skip)('engine/sandbox: the record key is hidden from agents', function () {
  this.timeout(60_000);

  async function probe(sandbox: 'required' | 'off'): Promise<Map<string, string>> {
    recordKey();
    assert.match(readFileSync(recordKeyPath(), 'utf8'), /^[0-9a-f]{64}\n$/);
    // The key itself is never put in the probe (it would land in task.json): its shape is enough to tell it was read.
    const probes: Probe[] = [
      ['read the key', `head -c 64 '${recordKeyPath()}' | grep -Eq '^[0-9a-f]{64}$'`],
      ['list its folder', `ls -A "$(dirname '${recordKeyPath()}')" | grep -q record.key`],
    ];
    const root = makeRepo();
    const { id } = await startFixture(root, {}, { ...probeAgent(probes), sandbox: { mode: sandbox } });
    const finished = await waitForFinished(root, id);
    assert.deepEqual(finished.state.sandbox?.confined ?? false, sandbox === 'required');
    return probeResults(finished.state.worktree!);
  }

  it('inside the sandbox the key and its folder cannot be read', async function () {
    await needs(this, 'bubblewrap');
    const results = await probe('required');
    assert.equal(results.get('read the key'), 'refused');
    assert.equal(results.get('list its folder'), 'refused');
  });

  it('without the sandbox the same probes read it (the control)', async () => {
    const results = await probe('off');
    assert.equal(results.get('read the key'), 'ok');
    assert.equal(results.get('list its folder'), 'ok');
  });
});

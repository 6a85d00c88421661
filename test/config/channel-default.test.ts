import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import type { AgentAdapter, AgentCapabilities } from '../../src/agents/types';
import { loadConfig } from '../../src/config';
import { catalogueFromAdapters } from '../../src/engine/resolve/agent-catalogue';
import { resolveDelegation, type DelegationRequest } from '../../src/engine/resolve/resolve';
import { fakeProgram, sandbox, type Sandbox } from './helpers';

const CAPS: AgentCapabilities = { nativeReadOnly: true, network: 'open', schemaTier: false, channel: true, model: true, reportsUsage: false };

describe('config: the return channel by default ([policy] default_channel)', () => {
  let box: Sandbox;
  afterEach(() => box.cleanup());

  async function resolve(request: Partial<DelegationRequest>) {
    const bin = path.join(box.home, 'bin');
    fakeProgram(bin, 'fake-codex');
    const catalogue = catalogueFromAdapters([{ id: 'codex', displayName: 'Fake codex', bin: 'fake-codex', capabilities: CAPS } as unknown as AgentAdapter], { env: { PATH: bin } });
    const loaded = await loadConfig({ root: box.root, home: box.home });
    return resolveDelegation({ objective: 'do it', workspace: box.root, agent: 'codex', ...request }, { loaded, catalogue, root: box.root, env: {} });
  }

  it('is off unless asked; default_channel = true offers it to every delegation; an explicit request wins', async () => {
    box = sandbox({ git: true, commit: true });
    assert.equal((await resolve({})).launch.channel, false);
    assert.equal((await resolve({ channel: true })).launch.channel, true);
    box.write(box.projectFile, '[policy]\ndefault_channel = true\n');
    assert.equal((await resolve({})).launch.channel, true);
    assert.equal((await resolve({ channel: false })).launch.channel, false);
    box.write(box.projectFile, '[policy]\ndefault_channel = "yes"\n');
    await assert.rejects(resolve({}), /default_channel/);
  });
});

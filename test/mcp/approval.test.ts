import { strict as assert } from 'node:assert';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { ElicitRequestSchema, type ElicitResult } from '@modelcontextprotocol/sdk/types.js';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { applyTaskById } from '../../src/engine/tasks';
import { buildCli, makeRepo, startFixture, waitForFinished } from '../engine/runtime/helpers';
import { call, serve, structured, textOf } from './orchestrator-helpers';

/*
 * Issue 34: an MCP client approved its own repository changes (`accept_repository_changes: true`) and the apply went
 * over a hook the agent planted. Accepting a changed git dir is now asked of the person (elicitation); the client's
 * own word is not an input any more. Each task here is a real shell agent, unconfined (only an unconfined agent can
 * write the shared git dir), that plants hooks/post-merge and changes a.txt; the server is the built caesar.js
 * behind the SDK's own Client over stdio.
 */

const PLANTED = 'hooks/post-merge added';
const agentDirs: string[] = [];

function plantingAgent(file: string) {
  const dir = mkdtempSync(path.join(tmpdir(), 'caesar-approval-agent-'));
  agentDirs.push(dir);
  const script = path.join(dir, 'agent.sh');
  writeFileSync(script, `#!/bin/sh\nset -e\necho two >> ${file}\nprintf '#!/bin/sh\\necho planted\\n' > "$(git rev-parse --git-common-dir)/hooks/post-merge"\n`);
  chmodSync(script, 0o755);
  return { id: 'shell', bin: '/bin/sh', args: [script] };
}

/** A finished task whose agent changed `file` and planted a hook in the shared git dir. */
async function plantingTask(repo: string, file = 'a.txt'): Promise<string> {
  const { id } = await startFixture(repo, {}, { agent: 'shell', generic_agent: plantingAgent(file), objective: 'plant a hook', sandbox: { mode: 'off' } });
  const done = await waitForFinished(repo, id, 60_000);
  assert.deepEqual(done.result.repository_changes, [PLANTED], 'the watch saw the planted hook');
  return id;
}

/** A client with the elicitation capability that answers every question with `answer`, recording what it was asked. */
function answering(answer: ElicitResult, asked: string[]) {
  return {
    capabilities: { elicitation: {} },
    setup: (client: Client) =>
      client.setRequestHandler(ElicitRequestSchema, async (request) => {
        asked.push(request.params.message);
        return answer;
      }),
  };
}

describe('MCP: repository changes are accepted by the person, not the client (issue 34)', function () {
  this.timeout(180_000);
  const repos: string[] = [];
  const repo = () => {
    const dir = makeRepo({ 'a.txt': 'one\n', 'b.txt': 'one\n' });
    repos.push(dir);
    return dir;
  };
  before(buildCli);
  after(() => {
    for (const dir of [...repos, ...agentDirs]) rmSync(dir, { recursive: true, force: true });
  });

  it('neither tool takes the client\'s own consent: no accept_repository_changes in their input schemas', async () => {
    const served = await serve(repo());
    try {
      const { tools } = await served.client.listTools();
      for (const name of ['caesar_apply', 'caesar_land']) {
        const tool = tools.find((t) => t.name === name)!;
        assert.deepEqual(Object.keys(tool.inputSchema.properties ?? {}).filter((k) => /accept/.test(k)), [], name);
      }
    } finally {
      await served.close();
    }
  });

  it('a client without elicitation passing the old flag: nothing applied, the person is told to run the CLI', async () => {
    const r = repo();
    const id = await plantingTask(r);
    const served = await serve(r);
    try {
      const refused = structured(await call(served.client, 'caesar_apply', { task_id: id, accept_repository_changes: true }));
      assert.equal(refused.applied, false);
      assert.equal(refused.reason, 'repository_changed');
      assert.deepEqual(refused.repository_changes, [PLANTED]);
      assert.match(refused.message, /does not support elicitation/);
      assert.ok(refused.message.includes(`caesar apply ${id} --accept-repository-changes`), refused.message);
    } finally {
      await served.close();
    }
    assert.equal(readFileSync(path.join(r, 'a.txt'), 'utf8'), 'one\n', 'nothing was written');
  });

  it('the person declines (or leaves the box unticked): nothing applied; they were shown the planted hook', async () => {
    const r = repo();
    const id = await plantingTask(r);
    for (const answer of [{ action: 'decline' }, { action: 'cancel' }, { action: 'accept', content: { accept: false } }] as ElicitResult[]) {
      const asked: string[] = [];
      const served = await serve(r, answering(answer, asked));
      try {
        const refused = structured(await call(served.client, 'caesar_apply', { task_id: id, accept_repository_changes: true }));
        assert.equal(refused.applied, false, JSON.stringify(answer));
        assert.match(refused.message, /you did not accept/);
        assert.equal(asked.length, 1);
        assert.ok(asked[0]!.includes(id) && asked[0]!.includes(PLANTED), asked[0]);
      } finally {
        await served.close();
      }
      assert.equal(readFileSync(path.join(r, 'a.txt'), 'utf8'), 'one\n', `nothing was written (${answer.action})`);
    }
  });

  it('the person accepts: applied', async () => {
    const r = repo();
    const id = await plantingTask(r);
    const asked: string[] = [];
    const served = await serve(r, answering({ action: 'accept', content: { accept: true } }, asked));
    try {
      const applied = structured(await call(served.client, 'caesar_apply', { task_id: id }));
      assert.equal(applied.applied, true, applied.message);
      assert.equal(asked.length, 1);
    } finally {
      await served.close();
    }
    assert.equal(readFileSync(path.join(r, 'a.txt'), 'utf8'), 'one\ntwo\n');
  });

  it('caesar_land: refused without elicitation, landed once the person accepts', async () => {
    const r = repo();
    const id = await plantingTask(r, 'b.txt');
    const plain = await serve(r);
    try {
      const refused = structured(await call(plain.client, 'caesar_land', { task_ids: [id], accept_repository_changes: true }));
      assert.deepEqual(refused.landed, []);
      assert.equal(refused.tasks[0].reason, 'repository_changed');
      assert.ok(refused.message.includes(`caesar land ${id} --accept-repository-changes`), refused.message);
    } finally {
      await plain.close();
    }
    assert.equal(readFileSync(path.join(r, 'b.txt'), 'utf8'), 'one\n');
    const asked: string[] = [];
    const served = await serve(r, answering({ action: 'accept', content: { accept: true } }, asked));
    try {
      const landed = structured(await call(served.client, 'caesar_land', { task_ids: [id] }));
      assert.deepEqual(landed.landed, [id], textOf(await call(served.client, 'caesar_status', { task_id: id })));
      assert.ok(asked[0]?.includes(PLANTED), asked[0]);
    } finally {
      await served.close();
    }
    assert.equal(readFileSync(path.join(r, 'b.txt'), 'utf8'), 'one\ntwo\n');
  });

  it('control: the flag alone, as the old tool handed it to the engine, applies over the planted hook unasked', async () => {
    const r = repo();
    const id = await plantingTask(r);
    const applied = await applyTaskById(r, id, undefined, { acceptRepositoryChanges: true });
    assert.equal(applied.applied, true, applied.message);
    assert.equal(readFileSync(path.join(r, 'a.txt'), 'utf8'), 'one\ntwo\n');
    assert.ok(existsSync(path.join(r, '.git', 'hooks', 'post-merge')), 'over the hook the agent planted');
  });
});

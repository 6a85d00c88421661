import { strict as assert } from 'node:assert';
import { buildCli } from '../engine/runtime/helpers';
import { makeFixtureRepo, serve, type Served } from './orchestrator-helpers';

/** Every caesar_* tool a prompt's text names. */
function toolsNamed(text: string): string[] {
  return [...new Set(text.match(/caesar_[a-z_]+/g) ?? [])].sort();
}

function textOfPrompt(result: { messages: Array<{ role: string; content: { type: string; text?: string } }> }): string {
  assert.equal(result.messages.length, 1);
  const [message] = result.messages;
  assert.equal(message?.role, 'user');
  assert.equal(message?.content.type, 'text');
  return message?.content.text ?? '';
}

describe('mcp: the orchestrator prompts (SDK client over stdio, built caesar.js)', function () {
  this.timeout(60_000);
  let served: Served;

  before(async () => {
    await buildCli();
    served = await serve(makeFixtureRepo());
  });
  after(async () => {
    await served?.close();
  });

  it('publishes race, fanout, review and land, each with a description and its arguments', async () => {
    assert.ok(served.client.getServerCapabilities()?.prompts, 'the server announces the prompts capability');
    const { prompts } = await served.client.listPrompts();
    const byName = new Map(prompts.map((p) => [p.name, p]));
    assert.deepEqual([...byName.keys()].sort(), ['fanout', 'land', 'race', 'review']);
    for (const prompt of prompts) assert.ok((prompt.description ?? '').length > 20, `${prompt.name} has a description`);
    const required = (name: string) => (byName.get(name)?.arguments ?? []).filter((a) => a.required).map((a) => a.name);
    assert.deepEqual(required('race'), ['objective']);
    assert.deepEqual(required('fanout'), ['objective']);
    assert.deepEqual(required('review'), ['task_id']);
    assert.deepEqual(required('land'), ['task_ids']);
    assert.deepEqual((byName.get('race')?.arguments ?? []).map((a) => a.name), ['objective', 'agents', 'check']);
  });

  it('race names the agents and checks it was given, and the tools in the order they are called', async () => {
    const text = textOfPrompt(await served.client.getPrompt({ name: 'race', arguments: { objective: 'Fix the parser', agents: 'codex, claude', check: 'npm test, npm run lint' } }));
    assert.match(text, /Objective: Fix the parser/);
    assert.match(text, /these agents: codex, claude/);
    assert.match(text, /checks: \["npm test","npm run lint"\]/);
    const order = ['caesar_list_agents', 'caesar_delegate', 'caesar_await', 'caesar_diff', 'caesar_apply'].map((tool) => text.indexOf(tool));
    assert.ok(order.every((at) => at >= 0), 'every step names its tool');
    assert.deepEqual([...order].sort((a, b) => a - b), order, 'the tools appear in calling order');
    assert.match(text, /Never apply two racers/);
  });

  it('every tool a prompt names is one the server publishes', async () => {
    const published = new Set((await served.client.listTools()).tools.map((t) => t.name));
    const texts = [
      textOfPrompt(await served.client.getPrompt({ name: 'race', arguments: { objective: 'x' } })),
      textOfPrompt(await served.client.getPrompt({ name: 'fanout', arguments: { objective: 'x', parts: 'a,b' } })),
      textOfPrompt(await served.client.getPrompt({ name: 'review', arguments: { task_id: 't_1' } })),
      textOfPrompt(await served.client.getPrompt({ name: 'land', arguments: { task_ids: 't_1,t_2' } })),
    ];
    const named = toolsNamed(texts.join('\n'));
    assert.ok(named.includes('caesar_land'));
    assert.deepEqual(named.filter((tool) => !published.has(tool)), []);
  });

  it('review and land quote the task ids they were given; land keeps their order', async () => {
    const review = textOfPrompt(await served.client.getPrompt({ name: 'review', arguments: { task_id: 't_abc' } }));
    assert.match(review, /caesar_diff with `task_id: "t_abc"`/);
    assert.match(review, /commands_claimed/);
    const land = textOfPrompt(await served.client.getPrompt({ name: 'land', arguments: { task_ids: ' t_b , t_a,' } }));
    assert.match(land, /caesar_land with `task_ids: \["t_b","t_a"\]`/);
    assert.ok(land.indexOf('caesar_status') < land.indexOf('caesar_land'), 'status is checked before landing');
  });

  it('a missing required argument is a protocol error naming it, and the server goes on serving', async () => {
    await assert.rejects(served.client.getPrompt({ name: 'review', arguments: {} }), /task_id/);
    await assert.rejects(served.client.getPrompt({ name: 'nope', arguments: {} }), /nope/);
    assert.equal((await served.client.listPrompts()).prompts.length, 4);
  });
});

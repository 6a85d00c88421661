import { strict as assert } from 'node:assert';
import type { BuildContext } from '../../../src/agents/types';
import { demoTranslator } from '../../../src/agents/demo';
import { eventLineTranslator, expandArg, genericAdapter } from '../../../src/agents/generic';
import { catalogueAdapters, knownAgentIds, resolveAdapter } from '../../../src/agents/registry';

function ctx(over: { model?: string; network?: boolean; extraArgs?: string[] } = {}): BuildContext {
  return {
    task: {
      protocol: 'caesar.task/v1', id: 't_1', created_at: new Date().toISOString(), agent: 'x', objective: 'o', context: '', constraints: [],
      acceptance_criteria: [], mode: 'write', isolation: 'worktree', network: over.network ?? true, workspace: '/ws', deadline_ms: 1000, depth: 0,
      report_path: '/td/report.json', events_path: '/td/events.jsonl',
    },
    taskDir: '/td', prompt: 'THE PROMPT', promptFile: '/td/brief.md', tier: 'file', extraArgs: over.extraArgs ?? [],
    reportSchemaFile: '/td/report.schema.json', finalMessageFile: '/td/final-message.txt', ...(over.model ? { model: over.model } : {}),
  };
}

describe('agents: the [[agent]] template adapter (reference §3.6)', () => {
  it('expands the five tokens, several per argument, and drops an argument with a valueless or unknown token', () => {
    const values = { prompt: 'P', workspace: '/w', taskDir: '/t', reportPath: '/t/r.json' };
    assert.equal(expandArg('--in={{workspace}}:{{ taskDir }}', values), '--in=/w:/t');
    assert.equal(expandArg('--model={{model}}', values), undefined);
    assert.equal(expandArg('{{nope}}', values), undefined);
    assert.equal(expandArg('plain', values), 'plain');
  });

  it('builds argv without a shell, network_args only with network, extra args last, cwd per cwd_mode', () => {
    const adapter = genericAdapter({ id: 'g', bin: 'tool', args: ['run', '{{prompt}}', '--model', '{{model}}', '--report={{reportPath}}'], network_args: ['--net'] });
    const plan = adapter.build(ctx({ extraArgs: ['--x'] }));
    assert.deepEqual(plan.args, ['run', 'THE PROMPT', '--model', '--report=/td/report.json', '--net', '--x']);
    assert.equal(plan.cwd, '/ws');
    assert.ok(!plan.display.includes('THE PROMPT'), 'the prompt is elided from the displayed command');
    assert.deepEqual(adapter.build(ctx({ network: false, model: 'm1' })).args, ['run', 'THE PROMPT', '--model', 'm1', '--report=/td/report.json']);
    assert.equal(genericAdapter({ id: 'g', bin: 'tool', args: [], cwd_mode: 'flag' }).build(ctx()).cwd, '/td');
    assert.equal(adapter.capabilities.network, 'controllable');
    assert.equal(adapter.capabilities.model, true);
    assert.equal(genericAdapter({ id: 'g', bin: 'tool', args: ['{{prompt}}'] }).capabilities.network, 'unknown');
  });

  it('turns caesar.event/v1 lines on stdout into drafts and ignores everything else', () => {
    const t = eventLineTranslator();
    assert.deepEqual(t.line('plain text'), []);
    assert.deepEqual(t.line('{"type":"message","text":"no protocol"}'), []);
    assert.deepEqual(t.line('{"protocol":"caesar.event/v1","type":"question","id":"q","question":"?"}'), [], 'questions come from files only');
    assert.deepEqual(t.line('{"protocol":"caesar.event/v1","seq":5,"task_id":"x","type":"message","text":"hi"}'), [{ type: 'message', text: 'hi' }]);
    assert.deepEqual(t.end(0), { finalText: 'hi' });
  });
});

describe('agents: the demo adapter and the registry', () => {
  it('translates the demo stream: paired tools, relative paths, usage, a native failure', () => {
    const t = demoTranslator('/ws');
    const lines = [
      { kind: 'say', text: 'hello' },
      { kind: 'step', phase: 'begin', id: 'd1', tool: 'edit', input: 'a.md' },
      { kind: 'step', phase: 'end', id: 'd1', ok: false },
      { kind: 'edit', path: '/ws/a.md', action: 'created' },
      { kind: 'progress', message: 'half', pct: 50 },
      { kind: 'usage', input_tokens: 3, output_tokens: 4, cost_usd: 0.5 },
      { kind: 'done', status: 'failed', summary: 'broke' },
    ];
    const drafts = lines.flatMap((l) => t.line(JSON.stringify(l)));
    assert.deepEqual(drafts, [
      { type: 'message', text: 'hello' },
      { type: 'tool_use', tool: 'edit', id: 'd1', input_summary: 'a.md', status: 'started' },
      { type: 'tool_use', tool: 'edit', id: 'd1', input_summary: 'a.md', status: 'failed' },
      { type: 'file_changed', path: 'a.md', action: 'created' },
      { type: 'progress', message: 'half', pct: 50 },
      { type: 'finished', status: 'failed', summary: 'broke' },
    ]);
    assert.deepEqual(t.end(0), { finalText: 'hello', usage: { input_tokens: 3, output_tokens: 4, cost_usd: 0.5 }, nativeFailure: 'broke' });
  });

  it('lists natives then demo; an [[agent]] entry replaces a built-in of the same id; unknown ids name the known ones', () => {
    const ids = knownAgentIds();
    assert.ok(ids.includes('codex') && ids.at(-1) === 'demo');
    const override = { id: 'codex', bin: 'my-codex', args: ['{{prompt}}'] };
    assert.equal(resolveAdapter('codex', [override]).bin, 'my-codex');
    assert.equal(catalogueAdapters([override]).find((a) => a.id === 'codex')?.bin, 'my-codex');
    assert.equal(catalogueAdapters([{ id: 'mine', bin: 'x', args: [] }]).at(-1)?.id, 'mine');
    assert.throws(() => resolveAdapter('nope'), /Unknown agent "nope". Known agents: .*codex.*demo/);
  });
});

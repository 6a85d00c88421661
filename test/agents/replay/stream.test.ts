import * as assert from 'node:assert/strict';
import { ToolPairing, UsageTotals, displayCommand, parseJsonObject, relativeToWorkspace, summarizeInput, workspaceChangePath } from '../../../src/agents/stream';

describe('adapter stream helpers', () => {
  it('display quotes only what needs quoting and elides the prompt', () => {
    assert.equal(displayCommand('codex', ['exec', '-C', '/a b', '-'], { stdinFile: '/t/brief.md' }), "codex exec -C '/a b' - < /t/brief.md");
    assert.equal(displayCommand('agy', ['--print', 'secret brief', '--x'], { arg: 1 }), 'agy --print <prompt> --x');
    assert.equal(displayCommand('x', ["it's"]), "x 'it'\\''s'");
  });

  it('paths: relative inside the workspace, untouched outside or without one; outside is no workspace change', () => {
    assert.equal(relativeToWorkspace('/w/src/a.ts', '/w'), 'src/a.ts');
    assert.equal(relativeToWorkspace('/other/a.ts', '/w'), '/other/a.ts');
    assert.equal(relativeToWorkspace('/w2/a.ts', '/w'), '/w2/a.ts');
    assert.equal(relativeToWorkspace('/w/a.ts', undefined), '/w/a.ts');
    assert.equal(workspaceChangePath('/t/report.json', '/w'), undefined);
    assert.equal(workspaceChangePath('/w/a.ts', '/w'), 'a.ts');
  });

  it('summaries prefer the command or path, else clipped JSON', () => {
    assert.equal(summarizeInput({ command: 'ls  -la\n' }), 'ls -la');
    assert.equal(summarizeInput({ filePath: '/w/a' }), '/w/a');
    assert.equal(summarizeInput({ a: 1 }), '{"a":1}');
    assert.equal(summarizeInput({ text: 'x'.repeat(500) }).length, 200);
  });

  it('tool pairing: an end without a start gets one, ids without a value are ignored, a start is shown once', () => {
    const tools = new ToolPairing();
    assert.deepEqual(tools.end('a', true, { tool: 't' }).map((e) => e.type === 'tool_use' && e.status), ['started', 'succeeded']);
    assert.deepEqual(tools.start('', 't', ''), []);
    assert.equal(tools.start('b', 't', '').length, 1);
    assert.equal(tools.start('b', 't', '').length, 0);
  });

  it('pair(): id-less calls get stable synthetic ids; an id-less end closes the oldest open call of its tool and summary', () => {
    const tools = new ToolPairing();
    const pair = (tool: string, input_summary: string, status: 'started' | 'succeeded' | 'failed', id?: string) =>
      tools.pair({ type: 'tool_use', tool, input_summary, status, ...(id ? { id } : {}) }).map((e) => (e.type === 'tool_use' ? [e.id, e.tool, e.status] : []));
    const [[a]] = pair('bash', 'sleep 1', 'started') as [[string]];
    const [[b]] = pair('bash', 'sleep 1', 'started') as [[string]];
    const [[c]] = pair('read', 'x.ts', 'started') as [[string]];
    assert.ok(a && b && c && new Set([a, b, c]).size === 3);
    assert.deepEqual(pair('bash', 'sleep 1', 'succeeded'), [[a, 'bash', 'succeeded']], 'same summary: the oldest first');
    assert.deepEqual(pair('bash', 'other', 'failed'), [[b, 'bash', 'failed']], 'else the oldest of that tool');
    assert.deepEqual(pair('', '', 'succeeded'), [[c, 'read', 'succeeded']], 'an end naming no tool: the oldest, named after its start');
    const orphan = pair('grep', 'TODO', 'succeeded');
    assert.deepEqual(orphan.map((e) => e.slice(1)), [['grep', 'started'], ['grep', 'succeeded']], 'an end nobody started gets a start');
    assert.ok(orphan[0]![0] && orphan[0]![0] === orphan[1]![0]);
    assert.deepEqual(pair('bash', 'ls', 'started', 'native_1'), [['native_1', 'bash', 'started']], 'native ids are kept');
    assert.deepEqual(tools.pair({ type: 'message', text: 'hi' }), [{ type: 'message', text: 'hi' }]);
  });

  it('usage sums what was given and never invents zeros', () => {
    const usage = new UsageTotals();
    assert.equal(usage.get(), undefined);
    usage.add({ input_tokens: 10 });
    usage.add({ input_tokens: 5, cost_usd: 0.25 });
    assert.deepEqual(usage.get(), { input_tokens: 15, cost_usd: 0.25 });
  });

  it('a JSON final message, fenced or not, is an object; prose is not', () => {
    assert.deepEqual(parseJsonObject('{"a":1}'), { a: 1 });
    assert.deepEqual(parseJsonObject('```json\n{"a":1}\n```'), { a: 1 });
    assert.equal(parseJsonObject('Done.'), undefined);
    assert.equal(parseJsonObject('[1]'), undefined);
  });
});

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

import { strict as assert } from 'node:assert';
import { parseTask, renderBrief } from '../../../src/protocol';
import { SPEC_TASK } from './fixtures';

const task = (patch: Record<string, unknown> = {}) => parseTask({ ...SPEC_TASK, context: '', ...patch });

describe('protocol: the brief', () => {
  it('opens with the task id and holds the objective verbatim', () => {
    const brief = renderBrief(task({ objective: 'Réparer le parseur — vite' }), 'file');
    assert.match(brief, /^You are a delegated sub-agent .* task t_7f3a\. Work only toward the objective below\./);
    assert.ok(brief.includes('## Objective\nRéparer le parseur — vite'));
  });

  it('shows context only when not blank, trimmed', () => {
    assert.ok(!renderBrief(task({ context: '   ' }), 'file').includes('## Context'));
    assert.ok(renderBrief(task({ context: '  see #12  ' }), 'file').includes('## Context\nsee #12\n'));
  });

  it('orders constraints: read-only, user, no-network, workspace', () => {
    const brief = renderBrief(task({ mode: 'read-only', network: false }), 'file');
    const section = brief.split('## Constraints\n')[1]!.split('\n\n')[0]!;
    const bullets = section.split('\n');
    assert.match(bullets[0]!, /read-only investigation/);
    assert.equal(bullets[1], '- Do not touch the public API');
    assert.match(bullets[2]!, /No network access/);
    assert.match(bullets[3]!, /^- Stay inside the workspace: \/abs\/path/);
  });

  it('never mentions the network when it is available', () => {
    assert.ok(!/network/i.test(renderBrief(task({ network: true }), 'file')));
  });

  it('does not contradict itself in read-only mode (reference §8.29)', () => {
    const brief = renderBrief(task({ mode: 'read-only' }), 'file');
    assert.ok(!/do not modify, create or delete any file\./i.test(brief), 'no blanket ban on creating files');
    assert.match(brief, /only file you write/);
    assert.match(brief, /report file under "Reporting" is the one exception/);
    assert.ok(brief.includes(SPEC_TASK.report_path));
  });

  it('lists acceptance criteria only when present', () => {
    assert.ok(renderBrief(task(), 'file').includes('## Acceptance criteria\n- pnpm test passes'));
    assert.ok(!renderBrief(task({ acceptance_criteria: [] }), 'file').includes('## Acceptance criteria'));
  });

  it('adapts the Reporting section to the tier and always ends with an example report', () => {
    const file = renderBrief(task(), 'file');
    assert.match(file, /Write your report as JSON to this exact path \(also given in \$CAESAR_REPORT_PATH\)/);
    assert.match(file, /very last action/);
    const schema = renderBrief(task(), 'schema');
    assert.match(schema, /final response must be the report object itself/);
    const channel = renderBrief(task({ channel: { transport: 'mcp-stdio', command: 'node', server_name: 'caesar' } }), 'channel');
    assert.match(channel, /submit_report/);
    assert.match(channel, /ask_orchestrator/);
    assert.ok(channel.includes(SPEC_TASK.report_path), 'channel tier falls back to the file');
    for (const brief of [file, schema, channel]) {
      const example = JSON.parse(brief.split('```json\n')[1]!.split('\n```')[0]!);
      assert.equal(example.protocol, 'caesar.report/v1');
      assert.equal(example.task_id, 't_7f3a');
    }
  });

  it('never mentions the deadline, the role or the depth', () => {
    const brief = renderBrief(task({ role: 'security-auditor' }), 'file');
    assert.ok(!brief.includes('600000'));
    assert.ok(!brief.includes('security-auditor'));
    assert.ok(!/depth/i.test(brief));
  });
});

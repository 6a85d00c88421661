/** The spec's own examples (../shared/spec/oacp-v1.md), as data. */
export const SPEC_TASK = {
  protocol: 'caesar.task/v1',
  id: 't_7f3a',
  created_at: '2026-08-09T10:00:00.000Z',
  role: 'reviewer',
  agent: 'codex',
  objective: 'Fix the parser regression on empty inputs',
  context: '…',
  constraints: ['Do not touch the public API'],
  acceptance_criteria: ['pnpm test passes'],
  mode: 'write',
  isolation: 'worktree',
  network: true,
  workspace: '/abs/path',
  base_ref: '3f2a91c',
  deadline_ms: 600000,
  depth: 1,
  report_path: '/abs/.caesar/tasks/t_7f3a/report.json',
  events_path: '/abs/.caesar/tasks/t_7f3a/events.jsonl',
  channel: null,
};

export const SPEC_REPORT = {
  protocol: 'caesar.report/v1',
  task_id: 't_7f3a',
  status: 'success',
  summary: 'Two files fixed, the tests pass.',
  details: '…',
  changes: [{ path: 'src/parser.ts', action: 'modified', summary: 'guard on empty input' }],
  commands_run: [{ command: 'pnpm test', exit_code: 0 }],
  findings: [{ severity: 'medium', title: '…', file: 'src/x.ts', line: 42, detail: '…' }],
  questions: [{ id: 'q1', question: 'Should the old behavior be kept?', options: ['yes', 'no'] }],
  next_steps: ['Document the change'],
  artifacts: [{ path: 'bench.json', description: 'before/after measurements' }],
  usage: { input_tokens: 12000, output_tokens: 3000, duration_ms: 84000 },
};

export const SPEC_EVENTS = [
  { protocol: 'caesar.event/v1', seq: 0, at: '2026-08-09T10:00:00.000Z', task_id: 't_7f3a', type: 'started', agent: 'codex', command: 'codex exec …' },
  { protocol: 'caesar.event/v1', seq: 1, at: '2026-08-09T10:00:01.000Z', task_id: 't_7f3a', type: 'tool_use', tool: 'bash', id: 'item_1', input_summary: 'pnpm test', status: 'started' },
  { protocol: 'caesar.event/v1', seq: 2, at: '2026-08-09T10:00:02.000Z', task_id: 't_7f3a', type: 'tool_use', tool: 'bash', id: 'item_1', input_summary: 'pnpm test', status: 'succeeded' },
  { protocol: 'caesar.event/v1', seq: 3, at: '2026-08-09T10:00:03.000Z', task_id: 't_7f3a', type: 'finished', status: 'success', summary: '…' },
];

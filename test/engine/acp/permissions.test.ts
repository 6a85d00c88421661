import { strict as assert } from 'node:assert';
import { decide, offeredOrder, optionForAnswer, optionLabel, questionText, type PermissionContext, type PermissionOption } from '../../../src/engine/acp/permissions';

/** The options of the five agents as the captures show them (ids differ, kinds do not). */
const AGENT_OPTIONS: Record<string, PermissionOption[]> = {
  gemini: [
    { optionId: 'proceed_always', name: 'Allow for this session', kind: 'allow_always' },
    { optionId: 'proceed_once', name: 'Allow', kind: 'allow_once' },
    { optionId: 'cancel', name: 'Reject', kind: 'reject_once' },
  ],
  opencode: [
    { optionId: 'once', name: 'Allow once', kind: 'allow_once' },
    { optionId: 'always', name: 'Always allow', kind: 'allow_always' },
    { optionId: 'reject', name: 'Reject', kind: 'reject_once' },
  ],
  codex: [
    { optionId: 'approved', name: 'Yes, proceed', kind: 'allow_once' },
    { optionId: 'approved-execpolicy-amendment', name: "Yes, and don't ask again", kind: 'allow_always' },
    { optionId: 'abort', name: 'No, and tell Codex what to do differently', kind: 'reject_once' },
  ],
};

const WS = '/repo/.caesar/wt/t1';
const base: PermissionContext = { policy: 'ask', mode: 'write', inWorktree: true, workspace: WS, channelServer: 'caesar', reportPath: '/repo/.caesar/tasks/t1/report.json' };
const shell = { toolCallId: 'c1', kind: 'execute', title: 'printf hi > hello.txt' };
const edit = { toolCallId: 'c2', kind: 'edit', title: 'Write a.txt', locations: [{ path: `${WS}/a.txt` }] };

describe('ACP permissions: policy', () => {
  it('ask asks; deny rejects; a read-only task never allows execute/edit, whatever the policy', () => {
    assert.deepEqual(decide(shell, base), { kind: 'ask' });
    assert.equal(decide(shell, { ...base, policy: 'deny' }).kind, 'reject_once');
    for (const policy of ['ask', 'allow-in-worktree', 'deny'] as const) {
      for (const call of [shell, edit, { ...edit, kind: 'delete' }, { ...edit, kind: 'move' }]) {
        assert.equal(decide(call, { ...base, policy, mode: 'read-only' }).kind, 'reject_once', `${policy} ${call.kind}`);
      }
    }
  });

  it('allow-in-worktree allows in a worktree only, and never for a location outside it', () => {
    assert.equal(decide(edit, { ...base, policy: 'allow-in-worktree' }).kind, 'allow_once');
    assert.equal(decide(shell, { ...base, policy: 'allow-in-worktree' }).kind, 'allow_once');
    assert.equal(decide(edit, { ...base, policy: 'allow-in-worktree', inWorktree: false }).kind, 'ask');
    assert.equal(decide({ ...edit, locations: [{ path: '/etc/passwd' }] }, { ...base, policy: 'allow-in-worktree' }).kind, 'ask');
    assert.equal(decide({ ...edit, kind: 'read' }, { ...base, policy: 'allow-in-worktree', mode: 'read-only' }).kind, 'allow_once');
  });

  it('the orchestration itself is always allowed: the return channel, the report file (even read-only)', () => {
    assert.equal(decide({ kind: 'other', title: 'mcp__caesar__submit_report' }, { ...base, policy: 'deny' }).kind, 'allow_once');
    assert.equal(decide({ kind: 'other', title: 'mcp__other__submit_report' }, base).kind, 'ask');
    const report = { kind: 'edit', locations: [{ path: base.reportPath! }] };
    assert.equal(decide(report, { ...base, mode: 'read-only' }).kind, 'allow_once');
    assert.equal(decide({ kind: 'edit', locations: [{ path: base.reportPath! }, { path: `${WS}/x` }] }, { ...base, mode: 'read-only' }).kind, 'reject_once');
  });
});

describe('ACP permissions: answers map back by kind', () => {
  for (const [agent, options] of Object.entries(AGENT_OPTIONS)) {
    it(`${agent}: labels, kinds named in words, plain yes/no — each to the option of the right kind`, () => {
      const kindOf = (answer: string) => optionForAnswer(answer, options).option?.kind;
      for (const option of options) assert.equal(optionForAnswer(optionLabel(option), options).option, option);
      assert.equal(kindOf('allow once'), 'allow_once');
      assert.equal(kindOf('Allow-Always'), 'allow_always');
      assert.equal(kindOf('reject_once'), 'reject_once');
      assert.equal(kindOf('yes'), 'allow_once');
      assert.equal(kindOf('no'), 'reject_once');
      assert.equal(kindOf('never allow this'), 'reject_once');
      assert.equal(kindOf('always allow'), 'allow_always');
      assert.equal(kindOf('reject always'), 'reject_once', 'no reject_always offered: the reject of the same sense');
    });
  }

  it('offers one-time choices first, so the first button never allows for good; every option is still offered', () => {
    for (const options of Object.values(AGENT_OPTIONS)) {
      const offered = offeredOrder(options);
      assert.deepEqual([...offered].sort((a, b) => a.optionId.localeCompare(b.optionId)), [...options].sort((a, b) => a.optionId.localeCompare(b.optionId)));
      assert.notEqual(offered[0]!.kind, 'allow_always');
      if (options.some((o) => o.kind === 'allow_once')) assert.equal(offered[0]!.kind, 'allow_once');
    }
    const odd: PermissionOption[] = [
      { optionId: 'x', name: 'Something new', kind: 'later_maybe' },
      { optionId: 'a', name: 'Always', kind: 'allow_always' },
      { optionId: 'r', name: 'No', kind: 'reject_once' },
    ];
    assert.deepEqual(offeredOrder(odd).map((o) => o.optionId), ['r', 'a', 'x']);
  });

  it('an answer nobody can read is a reject, flagged as not understood', () => {
    const result = optionForAnswer('¯\\_(ツ)_/¯', AGENT_OPTIONS.codex!);
    assert.equal(result.option?.kind, 'reject_once');
    assert.equal(result.understood, false);
  });

  it('the question names the agent, what it wants to do and where', () => {
    assert.equal(questionText(shell, 'Gemini CLI', WS), 'Gemini CLI asks permission to run a command: printf hi > hello.txt');
    assert.equal(
      questionText({ kind: 'edit', title: 'write', locations: [{ path: `${WS}/src/a.ts` }] }, 'OpenCode', WS),
      'OpenCode asks permission to edit: write (src/a.ts)',
    );
    assert.equal(questionText({ kind: 'execute', title: 'Create hello.txt', rawInput: { command: 'printf hi > hello.txt' } }, 'GitHub Copilot', WS), 'GitHub Copilot asks permission to run a command: printf hi > hello.txt');
  });
});

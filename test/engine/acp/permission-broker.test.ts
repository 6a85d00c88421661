import { strict as assert } from 'node:assert';
import { existsSync, promises as fs, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { PermissionBroker, type AnswerSource, type PermissionBrokerOptions } from '../../../src/engine/acp/permission-broker';
import { answerQuestion, RequestError } from '../../../src/engine/store/requests';
import { writeJsonAtomic } from '../../../src/base/atomic';
import { QuestionFileSchema, taskPaths, type EventDraft, type QuestionFile, type TaskPaths } from '../../../src/protocol';
import { waitFor } from '../../support/wait';
import { runningState } from '../runtime/helpers';

/*
 * The ACP PermissionBroker on its own, with the real mailbox files and the real `answerQuestion` (the one path `caesar
 * answer`, MCP and the editor share). The relay is a stand-in whose watcher "has not noticed yet" (onAnswer never
 * fires) and whose scan() lets the test act at the exact moments the broker calls it: after filing the question, and
 * after marking it expired. So "an answer arriving as the question expires" is the same interleaving on every run.
 */

const OPTIONS = [
  { optionId: 'allow', name: 'Allow', kind: 'allow_once' },
  { optionId: 'reject', name: 'Reject', kind: 'reject_once' },
];
const SHELL_CALL = { toolCallId: 'call_1', kind: 'execute', title: 'printf hi > hello.txt' };
const TASK = 't_broker';

interface Harness {
  root: string;
  paths: TaskPaths;
  emitted: EventDraft[];
  rejected: string[];
  scans: number;
  broker(overrides?: Partial<PermissionBrokerOptions>): PermissionBroker;
  /** Runs `action` at the n-th call of relay.scan() (1-based), awaited before scan() returns. */
  onScan(n: number, action: () => Promise<void>): void;
}

async function harness(): Promise<Harness> {
  const root = await fs.mkdtemp(path.join(tmpdir(), 'caesar-broker-'));
  const paths = taskPaths(root, TASK);
  await fs.mkdir(paths.questionsDir, { recursive: true });
  await writeJsonAtomic(paths.state, runningState(TASK, root, { objective: 'permission broker' }));
  const actions = new Map<number, () => Promise<void>>();
  const h: Harness = {
    root,
    paths,
    emitted: [],
    rejected: [],
    scans: 0,
    onScan: (n, action) => void actions.set(n, action),
    broker: (overrides = {}) => {
      const relay: AnswerSource = {
        scan: async () => {
          h.scans++;
          await actions.get(h.scans)?.();
        },
        onAnswer: () => () => undefined,
      };
      return new PermissionBroker({
        policy: 'ask',
        mode: 'write',
        inWorktree: true,
        workspace: root,
        questionsDir: paths.questionsDir,
        answersDir: paths.answersDir,
        relay,
        agentName: 'fixture',
        // Already past the margin: the question's wait ends at once, so what decides is what is on disk by then.
        deadlineAt: Date.now(),
        emit: (drafts) => h.emitted.push(...drafts),
        onRejected: (id) => h.rejected.push(id),
        ...overrides,
      });
    },
  };
  return h;
}

async function onlyQuestion(paths: TaskPaths): Promise<QuestionFile> {
  const names = readdirSync(paths.questionsDir).filter((n) => n.endsWith('.json') && !n.startsWith('.'));
  assert.equal(names.length, 1, `one question filed, saw ${names.join(', ')}`);
  return QuestionFileSchema.parse(JSON.parse(await fs.readFile(path.join(paths.questionsDir, names[0]!), 'utf8')));
}

const progress = (h: Harness) => h.emitted.filter((d) => d.type === 'progress').map((d) => (d as { message: string }).message);

describe('ACP PermissionBroker', () => {
  let h: Harness;
  beforeEach(async () => {
    h = await harness();
  });
  afterEach(async () => {
    await fs.rm(h.root, { recursive: true, force: true });
  });

  it('an answer filed as the question expires (before the expiry marker, unseen by the watcher) still wins', async () => {
    h.onScan(1, async () => {
      const question = await onlyQuestion(h.paths);
      await answerQuestion(h.root, TASK, question.id, 'Allow (allow_once)', 'test');
    });
    const outcome = await h.broker().request({ toolCall: SHELL_CALL, options: OPTIONS });
    assert.deepEqual(outcome, { outcome: { outcome: 'selected', optionId: 'allow' } });
    const question = await onlyQuestion(h.paths);
    assert.equal(question.expired_at, undefined, 'the expiry marker is taken back: the question reads answered, not expired');
    assert.deepEqual(h.rejected, []);
    assert.ok(!progress(h).some((m) => /not answered before the task's deadline/.test(m)), progress(h).join('\n'));
    await assert.rejects(answerQuestion(h.root, TASK, question.id, 'Reject', 'late'), (err: RequestError) => err.code === 'already_answered');
  });

  it('an answer after the expiry marker is refused as expired, and the agent gets the reject', async () => {
    let late: unknown;
    h.onScan(2, async () => {
      const question = await onlyQuestion(h.paths);
      late = await answerQuestion(h.root, TASK, question.id, 'Allow (allow_once)', 'test').catch((err: unknown) => err);
    });
    const outcome = await h.broker().request({ toolCall: SHELL_CALL, options: OPTIONS });
    assert.equal(h.scans, 2, 'the broker scanned after filing and after expiring');
    assert.deepEqual(outcome, { outcome: { outcome: 'selected', optionId: 'reject' } });
    assert.ok(late instanceof RequestError && late.code === 'expired', `answering after the marker: ${String(late)}`);
    assert.ok((await onlyQuestion(h.paths)).expired_at, 'the question says it expired');
    assert.ok(!existsSync(path.join(h.paths.answersDir, `${(await onlyQuestion(h.paths)).id}.json`)), 'no answer file was written');
    assert.deepEqual(h.rejected, ['call_1'], 'the translator is told of the reject');
    assert.ok(progress(h).some((m) => /not answered before the task's deadline: Reject \(reject_once\)/.test(m)), progress(h).join('\n'));
  });

  /** Holds the real fs.promises.link (createExclusive's last step) for names matching `which` until `release` settles. */
  function holdLinks(which: (from: string, to: string) => boolean, release: () => Promise<unknown>): () => void {
    const link = fs.link;
    (fs as { link: typeof fs.link }).link = async (from, to) => {
      if (which(String(from), String(to))) await release();
      return link(from, to);
    };
    return () => void ((fs as { link: typeof fs.link }).link = link);
  }

  it('an answerer that passed its checks as the broker gives up is told "expired", as the agent is told "reject" (the claim decides)', async () => {
    let decided!: Promise<unknown>;
    let answering: Promise<unknown> | undefined;
    // The answerer's exclusive claim is held until the broker has decided: the window between its checks and its write.
    let held = false;
    const restore = holdLinks((from, to) => {
      // The answerer's first exclusive create: its claim (or, were there none, its answer file).
      const answerers = (to.endsWith('.claim') && readFileSync(from, 'utf8') === 'answered') || to.startsWith(h.paths.answersDir);
      held ||= answerers;
      return answerers;
    }, () => decided);
    h.onScan(1, async () => {
      const question = await onlyQuestion(h.paths);
      answering = answerQuestion(h.root, TASK, question.id, 'Allow (allow_once)', 'test').catch((err: unknown) => err);
      await waitFor("the answerer's claim held", () => held);
    });
    try {
      decided = h.broker().request({ toolCall: SHELL_CALL, options: OPTIONS });
      const outcome = await decided;
      const told = await answering;
      assert.deepEqual(outcome, { outcome: { outcome: 'selected', optionId: 'reject' } });
      assert.ok(told instanceof RequestError && told.code === 'expired', `the user was told: ${JSON.stringify(told)}`);
      assert.ok(!existsSync(path.join(h.paths.answersDir, `${(await onlyQuestion(h.paths)).id}.json`)), 'no answer file was written');
    } finally {
      restore();
    }
  });

  it('an answer claimed before the broker gives up but written a moment later is the one the agent gets', async () => {
    let answering: Promise<unknown> | undefined;
    // The answer file's link waits 300 ms after the answerer's claim: the broker (its deadline passed) claims, loses,
    // and waits for the answer file instead of rejecting.
    const restore = holdLinks((_from, to) => to.startsWith(h.paths.answersDir), () => new Promise((resolve) => setTimeout(resolve, 300)));
    h.onScan(1, async () => {
      const question = await onlyQuestion(h.paths);
      answering = answerQuestion(h.root, TASK, question.id, 'Allow (allow_once)', 'test');
      await waitFor('the answerer claimed the question', () => existsSync(path.join(h.paths.questionsDir, `${question.id}.claim`)));
    });
    try {
      const outcome = await h.broker().request({ toolCall: SHELL_CALL, options: OPTIONS });
      assert.deepEqual(outcome, { outcome: { outcome: 'selected', optionId: 'allow' } });
      assert.equal(((await answering) as { answer: string }).answer, 'Allow (allow_once)');
      assert.equal((await onlyQuestion(h.paths)).expired_at, undefined, 'the question reads answered, not expired');
      assert.deepEqual(h.rejected, []);
    } finally {
      restore();
    }
  });

  it('a cancel before asking answers `cancelled` and files no question', async () => {
    const broker = h.broker({ deadlineAt: Date.now() + 60_000 });
    broker.cancelAll();
    const outcome = await broker.request({ toolCall: SHELL_CALL, options: OPTIONS });
    assert.deepEqual(outcome, { outcome: { outcome: 'cancelled' } });
    assert.deepEqual(readdirSync(h.paths.questionsDir), [], 'nothing was asked');
    assert.equal(h.scans, 0);
    assert.deepEqual(h.emitted, []);
    // Even a call policy would allow on its own is not allowed once the task is being cancelled.
    const auto = await broker.request({ toolCall: { ...SHELL_CALL, kind: 'read' }, options: OPTIONS });
    assert.deepEqual(auto, { outcome: { outcome: 'cancelled' } });
  });

  it('a cancel while asking answers `cancelled` at once, and the question can no longer be answered', async () => {
    const broker = h.broker({ deadlineAt: Date.now() + 60_000 });
    const pending = broker.request({ toolCall: SHELL_CALL, options: OPTIONS });
    await waitFor('the question filed and scanned', () => h.scans >= 1);
    const question = await onlyQuestion(h.paths);
    broker.cancelAll();
    assert.deepEqual(await pending, { outcome: { outcome: 'cancelled' } });
    assert.ok(!progress(h).some((m) => /deadline/.test(m)), 'a cancel is not a missed deadline');
    await assert.rejects(answerQuestion(h.root, TASK, question.id, 'Allow', 'test'), (err: RequestError) => err.code === 'expired');
  });
});

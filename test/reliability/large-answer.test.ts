import { strict as assert } from 'node:assert';
import { mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { MAX_EVENT_TEXT } from '../../src/engine/run/events-writer';
import { taskPaths, type GenericAgentDef } from '../../src/protocol';
import { buildCli, makeRepo, waitFor, waitForFinished } from '../engine/runtime/helpers';
import { delegate } from '../../src/engine/launch/delegate';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { promises as fs } from 'node:fs';
import { makeTaskDir } from '../mcp/channel-helpers';

/**
 * Issue 23 item 5d: a 10 MB answer was written to answers/<id>.json but never relayed as an `answer` event (the file
 * was over the supervisor's 4 MiB reader). Every answer is now relayed, capped in the event with a marker, whole in
 * the file. A real task: the agent asks, waits for its answer file, and reports how much it read.
 * Since issue 34 Caesar's own answerers refuse an answer over 1 MiB (test/mcp/answer-limit.test.ts), so these large
 * answer files are written as any other process could write them, straight into answers/: the readers stay bounded.
 */
function writeAnswerFile(root: string, taskId: string, questionId: string, answer: string): void {
  const answers = taskPaths(root, taskId).answersDir;
  mkdirSync(answers, { recursive: true });
  // Whole or not at all, as answerQuestion writes: the asking agent polls for the file and reads it at once.
  const temp = path.join(taskPaths(root, taskId).dir, `${questionId}.answer.tmp`);
  writeFileSync(temp, JSON.stringify({ id: questionId, answer, answered_at: new Date().toISOString(), by: 'cli' }));
  renameSync(temp, path.join(answers, `${questionId}.json`));
}
describe('reliability: a very large answer', function () {
  this.timeout(90_000);
  before(() => buildCli());

  const ASKER = [
    "const fs = require('fs'), path = require('path');",
    "const dir = process.env.CAESAR_TASK_DIR, answer = path.join(dir, 'answers', 'q1.json');",
    "fs.mkdirSync(path.join(dir, 'questions'), { recursive: true });",
    "fs.writeFileSync(path.join(dir, 'questions', 'q1.tmp'), JSON.stringify({ id: 'q1', question: 'Paste the log?', asked_at: new Date().toISOString() }));",
    "fs.renameSync(path.join(dir, 'questions', 'q1.tmp'), path.join(dir, 'questions', 'q1.json'));",
    'const wait = () => {',
    '  if (!fs.existsSync(answer)) return setTimeout(wait, 50);',
    '  const got = JSON.parse(fs.readFileSync(answer, "utf8")).answer.length;',
    "  fs.writeFileSync(process.env.CAESAR_REPORT_PATH, JSON.stringify({ protocol: 'caesar.report/v1', status: 'success', summary: 'read ' + got }));",
    '};',
    'wait();',
  ].join('\n');

  async function askAndAnswer(answerChars: number) {
    const repo = makeRepo();
    const script = path.join(repo, '.git', 'asker.cjs');
    writeFileSync(script, ASKER);
    const agent: GenericAgentDef = { id: 'asker', bin: process.execPath, args: [script] };
    const { id } = await delegate(
      { root: repo, workspace: repo, agent: 'asker', generic_agent: agent, objective: 'ask', mode: 'write', isolation: 'worktree', network: true, timeout_ms: 60_000 },
      { env: { CAESAR_KILL_GRACE_MS: '500' } },
    );
    const paths = taskPaths(repo, id);
    await waitFor('the question', () => statSync(path.join(paths.questionsDir, 'q1.json'), { throwIfNoEntry: false }) !== undefined, 30_000);
    const text = `${'0123456789'.repeat(answerChars / 10)}`;
    writeAnswerFile(repo, id, 'q1', text);
    const done = await waitForFinished(repo, id, 60_000);
    return { done, text, paths };
  }

  for (const [label, chars, marker] of [
    ['10 MB (read whole, capped in the event)', 10_000_000, /… \(truncated, 10000000 characters in all; the whole answer is in answers\/q1\.json\)$/],
    ['20 MB (past the 16 MiB reader: its beginning, capped)', 20_000_000, /… \(truncated, the answer file is 19\.1 MiB; the whole answer is in answers\/q1\.json\)$/],
  ] as const) {
    it(`a ${label} answer is relayed as one answer event, the whole answer stays in the file and reaches the agent`, async () => {
      const { done, text, paths } = await askAndAnswer(chars);
      assert.equal(done.state.status, 'succeeded', done.state.error);
      assert.equal(done.result.report.summary, `read ${chars}`, 'the agent read the whole answer');
      const answers = done.events.filter((e) => e.type === 'answer');
      assert.equal(answers.length, 1);
      const event = answers[0]!;
      assert.ok(event.type === 'answer' && event.id === 'q1');
      assert.match(event.answer, marker);
      assert.ok(event.answer.length <= MAX_EVENT_TEXT, `${event.answer.length} characters`);
      assert.ok(text.startsWith(event.answer.slice(0, event.answer.indexOf('…'))), 'the event begins with the answer');
      assert.equal(JSON.parse(readFileSync(path.join(paths.answersDir, 'q1.json'), 'utf8')).answer, text, 'whole in the file');
    });
  }

  it('the return channel hands a 10 MB answer to the asking agent as its first 1 MiB and the path of the whole (its MCP client refuses lines over 10 MiB)', async () => {
    const { root, id, dir } = await makeTaskDir();
    const cli = await buildCli();
    const client = new Client({ name: 'large-answer', version: '1.0.0' });
    await client.connect(new StdioClientTransport({ command: process.execPath, args: [cli, 'channel', 'serve', '--task-dir', dir], stderr: 'pipe' }));
    try {
      const questionsDir = taskPaths(root, id).questionsDir;
      const asking = client.callTool({ name: 'ask_orchestrator', arguments: { question: 'The whole log?' } });
      const name = await waitFor('the question file', async () => (await fs.readdir(questionsDir).catch(() => [] as string[])).find((n) => n.endsWith('.json') && !n.startsWith('.')), 20_000);
      const text = '0123456789'.repeat(1_000_000);
      writeAnswerFile(root, id, name.slice(0, -'.json'.length), text);
      const out = (await asking).structuredContent as { answered: boolean; answer: string; answered_by?: string };
      assert.equal(out.answered, true);
      assert.equal(out.answered_by, 'cli');
      assert.ok(out.answer.length <= 1024 * 1024, `${out.answer.length}`);
      assert.ok(text.startsWith(out.answer.slice(0, out.answer.indexOf('…'))));
      assert.match(out.answer, /… \(truncated, 10000000 characters in all; the whole answer is in \/.*\/answers\/q_[0-9a-f]+\.json\)$/);
    } finally {
      await client.close();
    }
  });
});

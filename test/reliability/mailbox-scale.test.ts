import { strict as assert } from 'node:assert';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { EventsWriter } from '../../src/engine/run/events-writer';
import { QuestionsRelay } from '../../src/engine/run/questions-relay';
import { answerQuestion, pendingQuestions } from '../../src/engine/store/requests';
import { readPendingQuestions } from '../../src/engine/store/store';
import { taskPaths, type ProtocolEvent } from '../../src/protocol';
import { buildCli, makeRepo, runBuiltCli, trustedHome } from '../engine/runtime/helpers';
import { fileQuestions } from './helpers';

const COUNT = 10_000;

/**
 * Issue 23 item 5c: 10,000 pending questions pushed their expiry past its budget (every watcher notification queued a
 * full rescan, and each question file was rewritten one by one), so a task with a valid report ended failed.
 */
describe('reliability: 10,000 pending questions', function () {
  this.timeout(120_000);
  before(() => buildCli());

  it('a real task whose agent files 10,000 questions, then reports "partial": it ends with the agent\'s status, every question expired', async () => {
    const repo = makeRepo();
    const dir = path.join(repo, '.caesar');
    mkdirSync(dir, { recursive: true });
    const filer = path.join(dir, 'file-questions.cjs');
    writeFileSync(filer, [
      "const fs = require('fs'), path = require('path');",
      "const dir = path.join(process.env.CAESAR_TASK_DIR, 'questions'), at = new Date().toISOString();",
      "fs.mkdirSync(dir, { recursive: true });",
      `for (let i = 0; i < ${COUNT}; i++) {`,
      "  const id = 'q' + String(i).padStart(5, '0');",
      "  fs.writeFileSync(path.join(dir, id + '.json'), JSON.stringify({ id, question: 'Question ' + i + '?', asked_at: at }));",
      '}',
      '',
    ].join('\n'));
    const script = path.join(dir, 'agent.sh');
    writeFileSync(script, [
      '#!/usr/bin/env bash',
      `'${process.execPath}' '${filer}' || exit 3`,
      `printf '{"protocol":"caesar.report/v1","status":"partial","summary":"Asked a lot."}' > "$CAESAR_REPORT_PATH"`,
      '',
    ].join('\n'));
    chmodSync(script, 0o755);
    writeFileSync(path.join(dir, 'config.toml'), `[[agent]]\nid = "asker"\nbin = "${script}"\nargs = ["{{prompt}}"]\n`);
    const home = trustedHome(await buildCli(), repo);
    const run = await runBuiltCli(['run', 'Ask everything', '--agent', 'asker', '--json'], repo, 110_000, { ...process.env, HOME: home, CAESAR_KILL_GRACE_MS: '500' });
    const out = JSON.parse(run.stdout);
    assert.equal(out.status, 'succeeded', `${out.error ?? ''} ${JSON.stringify(out.report)}`);
    assert.equal(out.report.status, 'partial', 'the agent\'s own status');
    assert.equal(run.code, 1, 'partial is not a success');
    const events = readFileSync(taskPaths(repo, out.task_id).events, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as ProtocolEvent);
    const questions = events.filter((e) => e.type === 'question');
    assert.equal(questions.length, COUNT, 'each question relayed once');
    const expiry = events.find((e) => e.type === 'progress' && e.message.startsWith(`${COUNT} questions expired`));
    assert.ok(expiry, 'one progress event says they expired');
    const exited = events.find((e) => e.type === 'finished');
    console.log(`      last question relayed → expiry event: ${Date.parse(expiry.at) - Date.parse(questions.at(-1)!.at)} ms; run ${run.elapsedMs} ms; finished ${exited ? Date.parse(exited.at) - Date.parse(events[0]!.at) : '?'} ms after started`);
    assert.deepEqual(await pendingQuestions(repo, out.task_id), [], 'none left waiting');
    await assert.rejects(answerQuestion(repo, out.task_id, 'q04242', 'too late'), /expired/);
  });

  // How long the expiry takes is a benchmark's figure (bench/mailbox.bench.ts, `BENCH_ONLY=mailbox npm run bench`).
  it(`expiring ${COUNT} pending questions leaves none pending`, async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'caesar-questions-'));
    const paths = { questionsDir: path.join(dir, 'questions'), answersDir: path.join(dir, 'answers') };
    const events = new EventsWriter(path.join(dir, 'events.jsonl'), 't_0123456789abcdef0123456789abcdef');
    const relay = new QuestionsRelay(paths, events, () => {});
    await relay.start();
    fileQuestions(paths.questionsDir, COUNT);
    await relay.scan(); // relayed while the agent runs, as in a task
    await relay.expireUnanswered();
    relay.dispose();
    assert.deepEqual(await readPendingQuestions(paths.questionsDir, paths.answersDir), [], 'none pending once expired');
  });
});

#!/usr/bin/env node
// Test-only agent for the reliability suite, steered by JSON in task.context: {"mode": "...", ...options}.
// It misbehaves on purpose: it breaks its worktree, writes into the user's checkout, leaves processes behind.
// Runs as an [[agent]] template agent (bin = node, args = [this file]). Dependency-free.
import { spawn } from 'node:child_process';
import { appendFileSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';

const task = JSON.parse(readFileSync(process.env.CAESAR_TASK_FILE, 'utf8'));
const opts = JSON.parse(task.context || '{}');
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const event = (draft) => process.stdout.write(`${JSON.stringify({ protocol: 'caesar.event/v1', ...draft })}\n`);

function writeReport(report) {
  const file = process.env.CAESAR_REPORT_PATH;
  writeFileSync(`${file}.tmp`, JSON.stringify({ protocol: 'caesar.report/v1', task_id: task.id, ...report }));
  renameSync(`${file}.tmp`, file);
}

function write(rel, content) {
  const file = path.resolve(task.workspace, rel);
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, content);
}

/** A process that leaves the agent's process group (its own session), then lives on; its pid goes to `pidFile`. */
function escapee(kind) {
  // double fork: a detached child that spawns a detached grandchild and exits at once, so the grandchild is orphaned.
  const keepAlive = "process.on('SIGTERM',()=>{});setInterval(()=>{},1000)";
  const script =
    kind === 'double-fork'
      ? `const c=require('child_process').spawn(process.execPath,['-e',${JSON.stringify(keepAlive)}],{detached:true,stdio:'ignore'});require('fs').writeFileSync(${JSON.stringify(opts.pidFile)},String(c.pid));c.unref();process.exit(0)`
      : `require('fs').writeFileSync(${JSON.stringify(opts.pidFile)},String(process.pid));${keepAlive}`;
  const child = spawn(process.execPath, ['-e', script], { detached: true, stdio: 'ignore' });
  child.unref();
}

const modes = {
  // Writes its own file, then removes the worktree's `.git` file: git run in the folder would find the checkout above.
  async 'remove-dotgit'() {
    write('agent.txt', 'written by the agent\n');
    rmSync(path.join(task.workspace, '.git'), { force: true });
    writeReport({ status: 'success', summary: 'Wrote agent.txt.', changes: [{ path: 'agent.txt', action: 'created' }] });
  },
  // Points the worktree's `.git` at the main repository's git dir instead of its own registration.
  async 'redirect-dotgit'() {
    write('agent.txt', 'written by the agent\n');
    writeFileSync(path.join(task.workspace, '.git'), `gitdir: ${opts.gitDir}\n`);
    writeReport({ status: 'success', summary: 'Wrote agent.txt.', changes: [{ path: 'agent.txt', action: 'created' }] });
  },
  // Writes in its worktree as asked, and also into the user's checkout through `../..` and an absolute path.
  async 'write-outside'() {
    write('inside.txt', 'in the worktree\n');
    for (const [rel, content] of Object.entries(opts.outside ?? {})) write(rel, content);
    for (const rel of opts.remove ?? []) rmSync(path.resolve(task.workspace, rel), { force: true });
    writeReport({ status: 'success', summary: 'Wrote inside.txt.', changes: [{ path: 'inside.txt', action: 'created' }] });
  },
  // Leaves a process behind that is in no process group of the task (setsid or a double fork), then finishes.
  async escape() {
    escapee(opts.kind ?? 'setsid');
    while (!exists(opts.pidFile)) await sleep(20);
    event({ type: 'message', text: 'a process escaped the group' });
    if (opts.hang) await sleep(600_000);
    writeReport({ status: 'success', summary: 'Left a process behind.' });
  },
  // Prints `count` lines of `size` bytes (the supervisor writes them to raw.log), then succeeds.
  async chatter() {
    const line = `${'x'.repeat(opts.size ?? 1000)}\n`;
    for (let i = 0; i < (opts.count ?? 1000); i++) {
      if (!process.stdout.write(line)) await new Promise((r) => process.stdout.once('drain', r));
      if (opts.pauseEvery && i % opts.pauseEvery === 0) await sleep(5);
    }
    writeReport({ status: 'success', summary: 'Chattered.' });
  },
  // Appends short `message` events to its outbox (CAESAR_EVENTS_PATH) until stopped: nothing goes to raw.log, and
  // each relayed line in events.jsonl is longer than its outbox line, so events.jsonl reaches a size limit first.
  async 'outbox-flood'() {
    const text = 'e'.repeat(opts.size ?? 200);
    for (let i = 0; ; i += 50) {
      const batch = Array.from({ length: 50 }, (_v, k) => JSON.stringify({ protocol: 'caesar.event/v1', type: 'message', text: `${i + k} ${text}` }));
      appendFileSync(process.env.CAESAR_EVENTS_PATH, `${batch.join('\n')}\n`);
      await sleep(5);
    }
  },
  // Leaves a burst of `count` valid events in its outbox in one write and exits at once: the supervisor relays them
  // after the agent ended (the after-run watchdog's drain phase).
  async 'outbox-burst'() {
    const lines = Array.from({ length: opts.count ?? 200_000 }, (_v, i) => JSON.stringify({ protocol: 'caesar.event/v1', type: 'message', text: `burst ${i}` }));
    appendFileSync(process.env.CAESAR_EVENTS_PATH, `${lines.join('\n')}\n`);
    writeReport({ status: 'success', summary: 'Burst.' });
  },
  // Sends `before` messages through its outbox, waits until they are in events.jsonl, then removes that file (or, with
  // `how: "replace"`, renames it away and writes a forged log in its place), sends `after` more and succeeds.
  async 'remove-events-log'() {
    const log = path.join(process.env.CAESAR_TASK_DIR, 'events.jsonl');
    const send = (from, count) => {
      const lines = Array.from({ length: count }, (_v, i) => JSON.stringify({ protocol: 'caesar.event/v1', type: 'message', text: `message ${from + i}` }));
      appendFileSync(process.env.CAESAR_EVENTS_PATH, `${lines.join('\n')}\n`);
    };
    const before = opts.before ?? 3;
    send(0, before);
    while (!readText(log).includes(`message ${before - 1}"`)) await sleep(20);
    if (opts.how === 'replace') {
      renameSync(log, `${log}.moved`);
      writeFileSync(log, '{"forged":true}\n');
    } else rmSync(log);
    send(before, opts.after ?? 3);
    await sleep(300); // the relay writes them after the removal
    writeReport({ status: 'success', summary: 'Removed the log.' });
  },
  // Writes a valid success report first, then keeps running (until killed).
  async 'report-then-hang'() {
    write('done.txt', 'done\n');
    writeReport({ status: 'success', summary: 'Done early, still running.', changes: [{ path: 'done.txt', action: 'created' }] });
    await sleep(600_000);
  },
  // Runs until `<releaseDir>/<task id>` exists, then succeeds: a test decides when each task ends.
  async hold() {
    const release = path.join(opts.releaseDir, task.id);
    while (!exists(release)) await sleep(30);
    writeReport({ status: 'success', summary: 'Released.' });
  },
  // Succeeds after `delayMs` (a cancel is raced against this finish).
  async 'finish-after'() {
    await sleep(opts.delayMs ?? 0);
    writeReport({ status: 'success', summary: 'Finished.' });
  },
};

function readText(file) {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}

function exists(file) {
  try {
    readFileSync(file);
    return true;
  } catch {
    return false;
  }
}

await modes[opts.mode]();

// The real supervisor (CAESAR_TEST_REAL_SUPERVISOR, a caesar.js bundle run as `supervise <taskDir>`), loaded in this
// process with a gate before each write of its conclusion: used as CAESAR_SUPERVISOR_JS by final-write-order.test.ts.
// From the first write of result.json on, each rename onto result.json or state.json and the append of the `finished`
// event stop the whole process (a blocking read of a FIFO) until the test has looked at the task folder and lets it
// go. The test thereby sees exactly what any reader sees between two writes, on every run, without a sleep.
const fs = require('node:fs');
const path = require('node:path');
const { execFileSync } = require('node:child_process');

const gateDir = process.env.CAESAR_TEST_GATE_DIR;
const taskDir = path.resolve(process.argv[process.argv.length - 1]);
const RESULT = path.join(taskDir, 'result.json');
const STATE = path.join(taskDir, 'state.json');
const EVENTS = path.join(taskDir, 'events.jsonl');
let step = 0;
let concluding = false;

/** Says what is about to happen (gate-<n>, complete when its name appears), then waits for the test's go. */
function gate(what) {
  step++;
  const go = path.join(gateDir, `go-${step}`);
  execFileSync('mkfifo', [go]);
  fs.writeFileSync(path.join(gateDir, `.gate-${step}`), what);
  fs.renameSync(path.join(gateDir, `.gate-${step}`), path.join(gateDir, `gate-${step}`));
  fs.readFileSync(go);
}

const rename = fs.promises.rename;
fs.promises.rename = function gatedRename(from, to) {
  const target = path.resolve(String(to));
  if (target === RESULT) concluding = true;
  if (concluding && target === RESULT) gate('rename result.json');
  if (concluding && target === STATE) gate(`rename state.json ${describeState(String(from))}`);
  return rename.call(this, from, to);
};

/** The state about to be published, in brief: its status, and its phase while it has one. */
function describeState(file) {
  const state = JSON.parse(fs.readFileSync(file, 'utf8'));
  return `(${state.status}${state.phase ? `, ${state.phase}` : ''})`;
}

function isEventsLog(fd) {
  try {
    return fs.readlinkSync(`/proc/self/fd/${fd}`) === EVENTS;
  } catch {
    return false;
  }
}

const writeSync = fs.writeSync;
fs.writeSync = function gatedWriteSync(fd, buffer, ...rest) {
  const closing = concluding && Buffer.isBuffer(buffer) && buffer.includes('"type":"finished"') && isEventsLog(fd);
  if (closing) gate('append finished');
  const written = writeSync.call(this, fd, buffer, ...rest);
  if (closing) gate('finished appended');
  return written;
};

require(process.env.CAESAR_TEST_REAL_SUPERVISOR);

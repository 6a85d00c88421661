import { closeSync, writeSync } from 'node:fs';
import * as path from 'node:path';
import { openRegularFileForWriting } from '../base/safe-write';
import { STANDBY_ANSWER_FD, STANDBY_TAKEN, sandboxPreflight, superviseTask, waitIdle, type StandbyAssignment } from '../engine/tasks/supervise';

/**
 * dist/supervisor-main.js, loaded by dist/supervisor.js: the detached process that supervises one task.
 * - `supervisor.js supervise <taskDir>`: started by delegate() for a task that exists (as `caesar supervise`, which
 *   dist/caesar.js still accepts); its stdout and stderr are the task's supervisor.log.
 * - `supervisor.js standby`: started by the CLI's loader ahead of `caesar run` (supervisor-process.ts); it loads
 *   everything, then waits on stdin for its task, and exits quietly when none comes (the CLI refused the
 *   delegation). Its stdout and stderr are /dev/null until it has a task, then both are appended to that task's
 *   supervisor.log.
 * - `supervisor.js idle`: the user's warm supervisor (issue 27, warm-server.ts), started in the background by
 *   delegate(); it waits on a unix socket in the user's private folder for the next task of anyone's `caesar run`, the
 *   editor or the MCP server, takes it as a standby does, and exits after a while without one.
 * A bundle of its own, without the command line parser, the CLI's commands or the MCP servers: every task pays for
 * this process's start, so it loads only what running one task needs (issue 14: start time and memory).
 */
const [command, taskDir, ...rest] = process.argv.slice(2);
const stamp = () => new Date().toISOString();

if (command === 'supervise' && taskDir && !rest.length) {
  supervise(taskDir);
} else if (command === 'standby' && !taskDir) {
  waitForAssignment().then((assignment) => (assignment ? takeTask(assignment, 'started ahead of its task (standby)', answerOnPipe) : process.exit(0)));
} else if (command === 'idle' && !taskDir) {
  becomeIdle();
} else {
  process.stderr.write('usage: supervisor.js supervise <taskDir>   (internal: started by caesar for each task)\n');
  process.exitCode = 2;
}

function supervise(dir: string): void {
  superviseTask(dir, { log: (message) => process.stderr.write(`[${stamp()}] ${message}\n`) }).then(
    (state) => {
      process.stderr.write(`[${stamp()}] task ${state.id} ended: ${state.status}${state.report_status ? ` (report ${state.report_status})` : ''}\n`);
    },
    (err: unknown) => {
      process.stderr.write(`caesar: ${(err as Error)?.stack ?? String(err)}\n`);
      process.exitCode = 1;
    },
  );
}

/** The CLI's one JSON line, or undefined at end of input (or on anything malformed: then no task is taken). */
function waitForAssignment(): Promise<StandbyAssignment | undefined> {
  const LIMIT = 4 << 20; // an environment is a few KiB; anything near this is not from the CLI
  return new Promise((resolve) => {
    let text = '';
    const done = (assignment: StandbyAssignment | undefined) => {
      process.stdin.removeAllListeners('data');
      process.stdin.destroy();
      resolve(assignment);
    };
    process.stdin.on('data', (chunk: Buffer) => {
      text += chunk.toString('utf8');
      const end = text.indexOf('\n');
      if (end >= 0) done(parseAssignment(text.slice(0, end)));
      else if (text.length > LIMIT) done(undefined);
    });
    process.stdin.on('end', () => done(undefined));
    process.stdin.on('error', () => done(undefined));
  });
}

function parseAssignment(line: string): StandbyAssignment | undefined {
  try {
    const value = JSON.parse(line) as StandbyAssignment;
    const strings = (o: unknown) => typeof o === 'object' && o !== null && Object.values(o).every((v) => typeof v === 'string');
    if (typeof value.taskDir !== 'string' || !path.isAbsolute(value.taskDir) || typeof value.cwd !== 'string' || !strings(value.env)) return undefined;
    return value;
  } catch {
    return undefined;
  }
}

/**
 * Becomes the supervisor of the assigned task, as if freshly spawned for it: its working directory and environment,
 * and stdout/stderr (including a crash's stack) appended to the task's supervisor.log. Then tells the CLI, which is
 * waiting for exactly this line before it counts the task as started.
 */
function takeTask(assignment: StandbyAssignment, how: string, answer: () => void): void {
  let log: number;
  try {
    log = openRegularFileForWriting(path.join(assignment.taskDir, 'supervisor.log'), 'append');
    process.chdir(assignment.cwd);
  } catch {
    process.exit(1); // the CLI sees the standby end without taking the task and starts a fresh supervisor
  }
  for (const key of Object.keys(process.env)) if (!(key in assignment.env)) delete process.env[key];
  Object.assign(process.env, assignment.env);
  redirectOutput(log);
  process.stderr.write(`[${stamp()}] supervisor ${process.pid} was ${how} and took it\n`);
  answer();
  supervise(assignment.taskDir);
}

function answerOnPipe(): void {
  try {
    // File descriptor 3 is the answer pipe (supervisor-process.ts), touched by no Node stream: closing it is safe.
    writeSync(STANDBY_ANSWER_FD, `${STANDBY_TAKEN}\n`);
    closeSync(STANDBY_ANSWER_FD);
  } catch {
    /* the CLI is gone (Ctrl-C at this very moment): the task is still ours to run */
  }
}

/** Waits (warm-server.ts) as this user's idle supervisor; exits quietly when another one is there or when it leaves. */
function becomeIdle(): void {
  // An idle process must pin no folder (a task's root could be unmounted or removed meanwhile).
  process.chdir('/');
  const since = stamp();
  waitIdle({
    script: process.argv[1] ?? '',
    takeTask: (assignment, answer) => takeTask(assignment, `kept warm (idle since ${since})`, answer),
    exit: () => process.exit(0),
  }).then(
    (listening) => {
      if (!listening) process.exit(0);
      // Ahead of the task, as the user's environment finds bwrap now: a task whose PATH finds another probes that one.
      void sandboxPreflight().catch(() => undefined);
    },
    () => process.exit(1),
  );
}

function redirectOutput(log: number): void {
  const append = (chunk: string | Uint8Array): boolean => {
    try {
      if (typeof chunk === 'string') writeSync(log, chunk);
      else writeSync(log, chunk);
    } catch {
      /* a full disk: the task's own files report it */
    }
    return true;
  };
  process.stdout.write = append as typeof process.stdout.write;
  process.stderr.write = append as typeof process.stderr.write;
  // Node prints an uncaught error to file descriptor 2 itself, which is not the log here: print it there, then exit as
  // Node would.
  process.on('uncaughtException', (err) => {
    append(`caesar: ${err?.stack ?? String(err)}\n`);
    process.exit(1);
  });
}

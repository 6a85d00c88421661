import { superviseTask } from '../engine/supervisor';

/**
 * dist/supervisor-main.js, loaded by dist/supervisor.js (`supervisor.js supervise <taskDir>`): the detached process
 * delegate() starts for each task, with the same arguments as `caesar supervise` (which dist/caesar.js still accepts).
 * A bundle of its own, without the command line parser, the CLI's commands or the MCP servers: every task pays for
 * this process's start, so it loads only what running one task needs (issue 14: start time and memory).
 */
const [command, taskDir, ...rest] = process.argv.slice(2);
const stamp = () => new Date().toISOString();

if (command !== 'supervise' || !taskDir || rest.length) {
  process.stderr.write('usage: supervisor.js supervise <taskDir>   (internal: started by caesar for each task)\n');
  process.exitCode = 2;
} else {
  superviseTask(taskDir, { log: (message) => process.stderr.write(`[${stamp()}] ${message}\n`) }).then(
    (state) => {
      process.stderr.write(`[${stamp()}] task ${state.id} ended: ${state.status}${state.report_status ? ` (report ${state.report_status})` : ''}\n`);
    },
    (err: unknown) => {
      process.stderr.write(`caesar: ${(err as Error)?.stack ?? String(err)}\n`);
      process.exitCode = 1;
    },
  );
}

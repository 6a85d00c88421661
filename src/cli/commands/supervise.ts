import type { Command } from 'commander';
import { superviseTask } from '../../engine/tasks/supervise';
import { EXIT, type CliIo } from '../io';

/**
 * `caesar supervise <taskDir>` — internal: the detached process delegate() starts for each task. It is the only
 * writer of the task's state.json and events.jsonl; its own diagnostics go to stderr (= the task's supervisor.log).
 */
export function registerSupervise(program: Command, io: CliIo): void {
  program
    .command('supervise <taskDir>', { hidden: true })
    .description('(internal) run one task to completion: slot, isolation, agent, report, reconciliation')
    .action(async (taskDir: string) => {
      const state = await superviseTask(taskDir, { log: (message) => io.err(`[${new Date().toISOString()}] ${message}`) });
      io.err(`[${new Date().toISOString()}] task ${state.id} ended: ${state.status}${state.report_status ? ` (report ${state.report_status})` : ''}`);
      process.exitCode = EXIT.ok;
    });
}

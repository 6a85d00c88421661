import type { BuildContext } from './types';

/**
 * The longest brief put on a command line as it is. Linux refuses any single argument over 128 KiB (MAX_ARG_STRLEN)
 * and a whole command line over ARG_MAX (2 MiB with the environment on most systems) with E2BIG; 64 KiB keeps a
 * wide margin under both, for the agent's other arguments and its environment.
 */
export const MAX_ARGV_PROMPT_BYTES = 64 * 1024;

/**
 * What an agent that takes its prompt on argv ([[agent]] `{{prompt}}`, antigravity's `--print`) receives: the brief
 * itself when it is short, else a short pointer to `<taskDir>/brief.md`, which holds the whole brief, written before
 * the spawn. A large objective or context thus reaches the agent through the file, never through argv.
 */
export function promptForArgv(ctx: Pick<BuildContext, 'prompt' | 'promptFile' | 'task'>): string {
  if (Buffer.byteLength(ctx.prompt, 'utf8') <= MAX_ARGV_PROMPT_BYTES) return ctx.prompt;
  return (
    `You are a delegated sub-agent working inside an orchestrator, on task ${ctx.task.id}. Your brief is too long for ` +
    `the command line: read it in full from the file ${ctx.promptFile} first, and follow it exactly (the objective, ` +
    'the constraints and where to write your report are all there).\n'
  );
}

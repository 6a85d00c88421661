import { Command, CommanderError } from 'commander';
import { termSafeBlock } from './format';
import { EXIT, ExitCode, UsageError, type CliIo } from './io';
import { reportedVersion } from '../base/version';
import { findApplyLeftovers, recoverInterruptedApply, RequestError, resolveTaskIdPrefix } from '../engine/tasks';
import { isTaskIdArgument } from './common';
import { resolveRoot } from './root';

/*
 * The command line's frame, apart from which commands it offers: program.ts builds it with every command (the full
 * bundle, dist/caesar-main.js), src/bin/run-main.ts with `run` alone (dist/caesar-run.js, the lean bundle a `caesar run`
 * loads: issue 27). Both parse, report usage errors and map errors to exit codes alike, here.
 */

export type CommandRegistrar = (program: Command, io: CliIo) => void;

/** The `caesar` program offering the commands `registrars` register, in that order. */
export function buildProgramOf(io: CliIo, registrars: readonly CommandRegistrar[]): Command {
  const program = new Command('caesar')
    .description('Delegate coding tasks to agent CLIs over the OACP v1 contract; git is the source of truth.')
    .version(reportedVersion())
    .exitOverride()
    .configureOutput({ writeOut: (s) => io.out(s.replace(/\n$/, '')), writeErr: (s) => io.err(s.replace(/\n$/, '')) })
    .showHelpAfterError(false);
  for (const register of registrars) register(program, io);
  program.hook('preAction', (_program, action) => recoverInterruptedApplyFor(io, action));
  program.hook('preAction', (_program, action) => expandTaskIdPrefixes(io, action));
  explainUsageErrors(program);
  for (const command of program.commands) inheritSettings(command);
  return program;
}

/** Internal commands a task's own processes run: they never finish someone's apply. */
const NO_RECOVERY = new Set(['supervise', 'standby']);

/**
 * The one entry point every command passes (issue 23): an apply that a kill -9, a power loss or a full disk
 * interrupted is finished or rolled back before the command runs, and the user is told which (on stderr, so --json
 * output stays parseable). Costs a few stats when there is nothing to recover.
 */
async function recoverInterruptedApplyFor(io: CliIo, action: Command): Promise<void> {
  if (NO_RECOVERY.has(action.name())) return;
  const root = commandRoot(io, action);
  if (!root) return;
  const checkout = findApplyLeftovers(root);
  if (!checkout) return;
  const report = await recoverInterruptedApply(checkout).catch((error: Error) => ({ message: `An interrupted apply in ${checkout} could not be recovered: ${error.message}` }));
  // A live apply's own journal is left alone (the recovery says 'busy'): nothing to tell.
  if (report && !('action' in report && report.action === 'busy')) io.err(`caesar: ${termSafeBlock(report.message)}`);
}

/** The root a command works on, or undefined when its --root is bad (the command itself reports that). */
function commandRoot(io: CliIo, action: Command): string | undefined {
  try {
    const explicit = (action.optsWithGlobals() as { root?: unknown }).root;
    return resolveRoot(io.cwd, typeof explicit === 'string' ? explicit : undefined);
  } catch {
    return undefined;
  }
}

/**
 * Every task id argument takes what a person sees (`caesar ps`, the editor): the whole id or any start of it that
 * names one task. Done once here, before the action runs, so each command sees whole ids and no command can forget.
 */
async function expandTaskIdPrefixes(io: CliIo, action: Command): Promise<void> {
  const indices = action.registeredArguments.flatMap((argument, i) => (isTaskIdArgument(argument) ? [i] : []));
  if (!indices.length) return;
  const root = commandRoot(io, action);
  if (!root) return;
  const expand = (given: unknown) =>
    typeof given === 'string'
      ? resolveTaskIdPrefix(root, given).catch((error: unknown) => {
          throw error instanceof RequestError ? new UsageError(error.message) : error;
        })
      : given;
  for (const i of indices) {
    const given = action.processedArgs[i] as unknown;
    action.processedArgs[i] = Array.isArray(given) ? await Promise.all(given.map(expand)) : await expand(given);
  }
}

function inheritSettings(command: Command): void {
  command.exitOverride();
  explainUsageErrors(command);
  for (const sub of command.commands) inheritSettings(sub);
}

/**
 * Commander names a parse problem ("missing required argument 'objective'") but not what to type instead. Every
 * command's parse errors also say what a missing argument is for, then show the command's usage line.
 */
function explainUsageErrors(command: Command): void {
  command.configureOutput({
    outputError: (message, write) => write(`${explainMissingArgument(command, message)}${usageLines(command)}`),
  });
}

function explainMissingArgument(command: Command, message: string): string {
  const missing = /^error: missing required argument '([^']+)'/.exec(message)?.[1];
  const argument = missing === undefined ? undefined : command.registeredArguments.find((a) => a.name() === missing);
  if (!argument) return message;
  return `error: missing <${missing}>${argument.description ? `: ${argument.description}` : ''}\n`;
}

function usageLines(command: Command): string {
  const names: string[] = [];
  for (let at: Command | null = command; at; at = at.parent) names.unshift(at.name());
  const path = names.join(' ');
  return `Usage: ${path} ${command.usage()}\nSee \`${path} --help\` for what each argument and option means.\n`;
}

/** Runs `registrars`' program and returns the exit code; never calls process.exit itself (tests call it in-process). */
export async function runProgram(argv: string[], io: CliIo, registrars: readonly CommandRegistrar[]): Promise<number> {
  const program = buildProgramOf(io, registrars);
  try {
    await program.parseAsync(argv, { from: 'user' });
    return EXIT.ok;
  } catch (err) {
    if (err instanceof CommanderError) {
      // Help and version are "errors" to commander; they are successes to the user. Commander printed the message.
      if (err.code === 'commander.helpDisplayed' || err.code === 'commander.version' || err.code === 'commander.help') return EXIT.ok;
      return EXIT.usage;
    }
    // Messages quote task records, file names, question options and config values: terminal-safe (termSafeBlock).
    if (err instanceof ExitCode) {
      if (err.message) io.err(`caesar: ${termSafeBlock(err.message)}`);
      return err.code;
    }
    if (err instanceof UsageError || exitCodeOf(err) === EXIT.usage) {
      // Config, policy and resolution errors carry exitCode 2: they are the caller's to fix, like a bad flag.
      io.err(`caesar: ${termSafeBlock((err as Error).message)}`);
      return EXIT.usage;
    }
    io.err(`caesar: ${termSafeBlock((err as Error).message ?? String(err))}`);
    return EXIT.failure;
  }
}

function exitCodeOf(err: unknown): number | undefined {
  const code = (err as { exitCode?: unknown } | null)?.exitCode;
  return typeof code === 'number' ? code : undefined;
}

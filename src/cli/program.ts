import { Command, CommanderError } from 'commander';
import { registerConfig } from './commands/config';
import { registerControl } from './commands/control';
import { registerFollow } from './commands/follow';
import { registerProtocol } from './commands/protocol';
import { registerReview } from './commands/review';
import { registerRun } from './commands/run';
import { registerSupervise } from './commands/supervise';
import { EXIT, ExitCode, UsageError, type CliIo } from './io';

/** Each command lives in commands/<name>.ts and registers itself here. */
const REGISTRARS: Array<(program: Command, io: CliIo) => void> = [
  registerRun,
  registerFollow,
  registerControl,
  registerReview,
  registerConfig,
  registerProtocol,
  registerSupervise,
];

export function buildProgram(io: CliIo): Command {
  const program = new Command('caesar')
    .description('Delegate coding tasks to agent CLIs over the OACP v1 contract; git is the source of truth.')
    .version(process.env.CAESAR_VERSION ?? '0.1.0')
    .exitOverride()
    .configureOutput({ writeOut: (s) => io.out(s.replace(/\n$/, '')), writeErr: (s) => io.err(s.replace(/\n$/, '')) })
    .showHelpAfterError(false);
  for (const register of REGISTRARS) register(program, io);
  for (const command of program.commands) inheritSettings(command);
  return program;
}

function inheritSettings(command: Command): void {
  command.exitOverride();
  for (const sub of command.commands) inheritSettings(sub);
}

/** Runs the CLI and returns the exit code; never calls process.exit itself, so tests can call it in-process. */
export async function runCli(argv: string[], io: CliIo): Promise<number> {
  const program = buildProgram(io);
  try {
    await program.parseAsync(argv, { from: 'user' });
    return EXIT.ok;
  } catch (err) {
    if (err instanceof CommanderError) {
      // Help and version are "errors" to commander; they are successes to the user. Commander printed the message.
      if (err.code === 'commander.helpDisplayed' || err.code === 'commander.version' || err.code === 'commander.help') return EXIT.ok;
      return EXIT.usage;
    }
    if (err instanceof ExitCode) {
      if (err.message) io.err(`caesar: ${err.message}`);
      return err.code;
    }
    if (err instanceof UsageError || exitCodeOf(err) === EXIT.usage) {
      // Config, policy and resolution errors carry exitCode 2: they are the caller's to fix, like a bad flag.
      io.err(`caesar: ${(err as Error).message}`);
      return EXIT.usage;
    }
    io.err(`caesar: ${(err as Error).message ?? String(err)}`);
    return EXIT.failure;
  }
}

function exitCodeOf(err: unknown): number | undefined {
  const code = (err as { exitCode?: unknown } | null)?.exitCode;
  return typeof code === 'number' ? code : undefined;
}

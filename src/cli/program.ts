import type { Command } from 'commander';
import { buildProgramOf, runProgram, type CommandRegistrar } from './cli-core';
import { registerAgents } from './commands/agents';
import { registerCompare } from './commands/compare';
import { registerContinue } from './commands/continue';
import { registerControl } from './commands/control';
import { registerDoctor } from './commands/doctor';
import { registerFollow } from './commands/follow';
import { registerInit } from './commands/init';
import { registerLand } from './commands/land';
import { registerPolicy } from './commands/policy';
import { registerProtocol } from './commands/protocol';
import { registerReview } from './commands/review';
import { registerRoles } from './commands/role';
import { registerRun } from './commands/run';
import { registerSupervise } from './commands/supervise';
import { registerTrust } from './commands/trust';
import type { CliIo } from './io';

export type { CommandRegistrar } from './cli-core';

/** Each command lives in commands/<name>.ts and registers itself here. */
const REGISTRARS: CommandRegistrar[] = [
  registerRun,
  registerFollow,
  registerControl,
  registerContinue,
  registerReview,
  registerCompare,
  registerLand,
  registerInit,
  registerDoctor,
  registerAgents,
  registerPolicy,
  registerTrust,
  registerRoles,
  registerProtocol,
  registerSupervise,
];

/**
 * `extra` are commands hosted by the same process entry but owned by layers beside the CLI (src/bin adds `caesar mcp`
 * and `caesar channel` this way), so the CLI never imports the MCP servers.
 */
export function buildProgram(io: CliIo, extra: readonly CommandRegistrar[] = []): Command {
  return buildProgramOf(io, [...REGISTRARS, ...extra]);
}

/** Runs the CLI and returns the exit code; never calls process.exit itself, so tests can call it in-process. */
export function runCli(argv: string[], io: CliIo, extra: readonly CommandRegistrar[] = []): Promise<number> {
  return runProgram(argv, io, [...REGISTRARS, ...extra]);
}

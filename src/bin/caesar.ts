import { processIo } from '../cli/io';
import { runCli } from '../cli/program';
import { registerChannelCommands, registerMcpCommands } from './mcp-commands';

/**
 * The process entry of dist/caesar.js: one bundle hosts the `caesar` command line, the task supervisor
 * (`caesar supervise`) and both MCP servers (`caesar mcp serve`, `caesar channel serve`). It sits above src/cli and
 * src/mcp so those stay peers that never import each other.
 */
runCli(process.argv.slice(2), processIo(), [registerMcpCommands, registerChannelCommands]).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`caesar: ${(err as Error)?.stack ?? String(err)}\n`);
    process.exitCode = 1;
  },
);

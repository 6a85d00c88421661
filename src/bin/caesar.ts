import { processIo } from '../cli/io';
import { runCli } from '../cli/program';
import { registerChannelCommands, registerMcpCommands } from './mcp-commands';

/**
 * The process entry of dist/caesar.js: one bundle hosts the `caesar` command line, the task supervisor
 * (`caesar supervise`) and both MCP servers (`caesar mcp serve`, `caesar channel serve`). It sits above src/cli and
 * src/mcp so those stay peers that never import each other.
 */
runCli(process.argv.slice(2), processIo(), [registerMcpCommands, registerChannelCommands]).then(
  (code) => exitOnceFlushed(code),
  (err: unknown) => {
    process.stderr.write(`caesar: ${(err as Error)?.stack ?? String(err)}\n`);
    process.exitCode = 1;
  },
);

/**
 * Every command's work is done once runCli resolves (the MCP servers resolve when their client has gone). Ending the
 * process here, rather than letting the event loop drain, skips tearing down the heap and every file watcher: 50–100 ms
 * of a short command such as `caesar run` (issue 14). Output is flushed first: writes to a pipe are asynchronous on
 * some platforms.
 */
function exitOnceFlushed(code: number): void {
  process.exitCode = code;
  let pending = 2;
  const flushed = () => {
    if (--pending === 0) process.exit(code);
  };
  for (const stream of [process.stdout, process.stderr]) {
    if (stream.destroyed || !stream.writable) flushed();
    else stream.write('', () => flushed());
  }
}

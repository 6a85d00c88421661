import { processIo } from '../cli/io';
import { runCli } from '../cli/program';
import { exitOnceFlushed, reportCrash } from './exit-flushed';
import { registerChannelCommands, registerMcpCommands } from './mcp-commands';

/**
 * The full bundle of the `caesar` command (dist/caesar-main.js): one bundle hosts the command line, the task
 * supervisor (`caesar supervise`) and both MCP servers (`caesar mcp serve`, `caesar channel serve`). It sits above
 * src/cli and src/mcp so those stay peers that never import each other. `caesar run` loads run-main.ts instead.
 */
runCli(process.argv.slice(2), processIo(), [registerMcpCommands, registerChannelCommands]).then(exitOnceFlushed, reportCrash);

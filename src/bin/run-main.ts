import { runProgram } from '../cli/cli-core';
import { registerRun } from '../cli/commands/run';
import { processIo } from '../cli/io';
import { exitOnceFlushed, reportCrash } from './exit-flushed';

/**
 * The lean bundle of `caesar run` (dist/caesar-run.js, issue 27): the same program frame and the same `run` command
 * as the full bundle, without the other commands, the MCP and ACP SDKs and their schemas, which the full bundle
 * builds at load on every start (a third of its size, most of its heap). A task's CLI sits on the task's critical
 * path from start to end: it loads this, delegates (hands the task to the warm supervisor), follows and prints.
 */
runProgram(process.argv.slice(2), processIo(), [registerRun]).then(exitOnceFlushed, reportCrash);
